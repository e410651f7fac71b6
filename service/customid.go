package service

import (
	"context"

	"github.com/quarrydata/quarry/schema"
)

// codeMissingObjectID is Parse's MISSING_OBJECT_ID.
const codeMissingObjectID = 104

// newID is a create's objectId: the one its body names under
// allowCustomObjectId, else a new random one of objectIdSize characters.
// Without allowCustomObjectId a body's objectId is refused later, as any
// reserved field is.
func (s *Service) newID(op WriteOp) (string, error) {
	if v, named := op.Body["objectId"]; named && s.opts.AllowCustomObjectID {
		id, _ := v.(string)
		if id == "" {
			return "", schema.Errorf(codeMissingObjectID, "objectId must not be empty, null or undefined")
		}
		if problem := schema.ObjectIDProblem(id); problem != "" {
			return "", schema.Errorf(codeMissingObjectID, "%s.", problem)
		}
		return id, nil
	}
	n := s.opts.ObjectIDSize
	if n <= 0 {
		n = DefaultObjectIDSize
	}
	return newObjectIDOfSize(n), nil
}

// checkNewID refuses a client's objectId that an object of its class
// already has (137, as Parse Server's unique index on _id answers).
func (s *Service) checkNewID(op WriteOp, overlay map[string]schema.Object) error {
	taken := false
	if _, ok := overlay[op.Class+"\x00"+op.ID]; ok {
		taken = true
	} else if s.isSQLClass(op.Class) {
		_, found, err := s.getSQL(context.Background(), op.Class, op.ID)
		if err != nil {
			return err
		}
		taken = found
	} else if c := s.data.Collection(op.Class, false); c != nil {
		_, taken = c.Get(op.ID)
	}
	if taken {
		return schema.Errorf(schema.CodeDuplicateValue, "A duplicate value for a field with unique values was provided")
	}
	return nil
}
