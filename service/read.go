package service

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// Get returns one object as the client sees it.
func (s *Service) Get(auth Auth, class, id string, opts ReadOptions) (schema.Object, error) {
	if !schema.ValidClassName(class) {
		return nil, schema.ClassNameError(class)
	}
	c := s.data.Collection(class, false)
	if c == nil {
		return nil, schema.ErrObjectNotFound
	}
	obj, ok := c.Get(id)
	if !ok {
		return nil, schema.ErrObjectNotFound
	}
	out := s.present(class, obj, opts)
	if len(opts.Include) > 0 || opts.IncludeAll {
		paths, err := s.parseIncludes(class, opts.Include, opts.IncludeAll)
		if err != nil {
			return nil, err
		}
		s.expandIncludes(auth, []schema.Object{out}, paths)
	}
	return out, nil
}

// ReadOptions shape what a read returns.
type ReadOptions struct {
	Keys        []string // when set, only these keys (plus the always-returned ones)
	ExcludeKeys []string
	Include     []string // pointer paths to expand ("a", "a.b", "*")
	IncludeAll  bool
}

var alwaysReturned = map[string]bool{"objectId": true, "createdAt": true, "updatedAt": true, "ACL": true}

// present copies a stored object into its reply form: relation fields
// declared by the schema appear as Relation values; projections apply.
func (s *Service) present(class string, obj schema.Object, opts ReadOptions) schema.Object {
	out := make(schema.Object, len(obj)+2)
	for k, v := range obj {
		out[k] = v
	}
	if cls := s.Class(class); cls != nil {
		for k, f := range cls.Fields {
			if f.Type == schema.TypeRelation {
				out[k] = map[string]any{"__type": "Relation", "className": f.TargetClass}
			}
		}
	}
	if len(opts.Keys) > 0 {
		keep := map[string]bool{}
		for _, k := range opts.Keys {
			root, _, _ := strings.Cut(k, ".")
			keep[root] = true
		}
		for k := range out {
			if !keep[k] && !alwaysReturned[k] {
				delete(out, k)
			}
		}
	}
	for _, k := range opts.ExcludeKeys {
		if !alwaysReturned[k] {
			delete(out, k)
		}
	}
	return out
}
