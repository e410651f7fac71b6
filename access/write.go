package access

import "github.com/quarrydata/quarry/schema"

// CheckCreate checks that the caller may create objects of the class.
func (p *Policy) CheckCreate(c Caller) error {
	if c.ReadOnly {
		return ErrReadOnly
	}
	_, err := p.CheckCLP(c, OpCreate)
	return err
}

// CheckAddField checks that the caller may add a field to the class
// while writing obj (nil for a new object): the addField permission, and
// when only a pointer permission grants it, obj must point to the caller.
func (p *Policy) CheckAddField(c Caller, obj schema.Object) error {
	if c.ReadOnly {
		return ErrReadOnly
	}
	scope, err := p.CheckCLP(c, OpAddField)
	if err != nil {
		return err
	}
	if scope.Restricted() && (obj == nil || !PointsToUser(obj, scope.Fields(), c.UserID)) {
		return schema.Errorf(schema.CodeOperationForbidden, "Permission denied for action addField on class %s.", p.class)
	}
	return nil
}

// CheckWrite checks an update or delete (op) of the existing object obj:
// the class-level permission with its pointer permissions, then the
// object's write ACL, or the class's own rules (a user changes only
// themselves whatever the ACL; a session only its user).
func (p *Policy) CheckWrite(c Caller, op Op, obj schema.Object) error {
	if c.ReadOnly {
		return ErrReadOnly
	}
	if c.Master {
		return nil
	}
	scope, err := p.CheckCLP(c, op)
	if err != nil {
		return err
	}
	if scope.Restricted() && !PointsToUser(obj, scope.Fields(), c.UserID) {
		return schema.ErrObjectNotFound
	}
	switch p.class {
	case ClassUser:
		return checkUserWrite(c, op, obj)
	case ClassSession:
		return checkSessionWrite(c, op, obj)
	}
	if !ACLAllows(c, obj, PermWrite) {
		return schema.ErrObjectNotFound
	}
	return nil
}

func checkUserWrite(c Caller, op Op, obj schema.Object) error {
	id, _ := obj["objectId"].(string)
	if c.UserID == "" {
		if op == OpDelete {
			return schema.Errorf(codeSessionMissing, "Insufficient auth to delete user")
		}
		return schema.Errorf(codeSessionMissing, "Cannot modify user %s.", id)
	}
	if c.UserID != id {
		return schema.Errorf(codeSessionMissing, "Cannot modify user %s.", id)
	}
	return nil // a user may always change themselves, whatever the ACL
}

func checkSessionWrite(c Caller, op Op, obj schema.Object) error {
	if c.UserID == "" {
		// As a session query without a session: nothing to act on.
		return schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	if !pointsTo(obj["user"], ClassUser, c.UserID) {
		if op == OpDelete {
			return schema.Errorf(schema.CodeObjectNotFound, "Object not found for delete.")
		}
		return schema.ErrObjectNotFound
	}
	return nil
}
