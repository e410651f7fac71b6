package service

import (
	"time"

	"github.com/quarrydata/quarry/schema"
)

// This file exports what front ends that test objects one at a time
// (LiveQuery) need from the read path: the same CLP, ACL, pointer
// permission and protected-field rules as a find, as predicates over one
// object instead of a query.

// ReadFilter is what one caller may read of one class.
type ReadFilter struct {
	// Visible reports whether the caller may read the object: its ACL (with
	// the caller's roles), the class's own rules (_User, _Session) and the
	// pointer permissions of the class-level permissions. Nil means every
	// object is visible (master key).
	Visible func(schema.Object) bool
	// Hidden names the fields to strip from the object before the caller
	// sees it: protected fields, and another user's authData. Nil means
	// none.
	Hidden func(schema.Object) []string
}

// Read operations a ReadFilter can be asked for.
const (
	ReadFind = opFind // a query
	ReadGet  = opGet  // a lookup of one object by id
)

// ReadFilter checks the class-level permission of op (ReadFind or ReadGet)
// on class for the caller and returns the filter of what they may read,
// using the class's current schema. An error means the CLP refuses the
// caller altogether.
func (s *Service) ReadFilter(a Auth, class, op string) (ReadFilter, error) {
	g, err := s.guardRead(a, class, op)
	if err != nil {
		return ReadFilter{}, err
	}
	return filterOf(s, a, class, g), nil
}

// ReadFilterWithCLP is ReadFilter against the given class-level
// permissions instead of a stored schema: for a LiveQuery server that runs
// apart from the data and receives the CLP with each change.
func ReadFilterWithCLP(a Auth, class, op string, clp map[string]any) (ReadFilter, error) {
	s := &Service{}
	s.schemas.Store(class, &schema.Class{Name: class, CLP: clp})
	return s.ReadFilter(a, class, op)
}

func filterOf(s *Service, a Auth, class string, g *readGuard) ReadFilter {
	if g == nil || !g.limited {
		return ReadFilter{}
	}
	f := ReadFilter{Visible: g.visible}
	if g.extra != nil {
		allowed, extra := g.visible, g.extra
		f.Visible = func(o schema.Object) bool {
			return (allowed == nil || allowed(o)) && s.matchesWhere(class, extra, o)
		}
	}
	protected := g.protected
	if class == classUser {
		f.Hidden = func(o schema.Object) []string {
			var out []string
			if protected != nil {
				out = protected(o)
			}
			if o["objectId"] != a.UserID || a.UserID == "" {
				out = append(out[:len(out):len(out)], "authData")
			}
			return out
		}
	} else {
		f.Hidden = protected
	}
	return f
}

// LiveObject is the form of a stored object that LiveQuery publishes: the
// REST form the master key would read (internal fields removed, relation
// fields shown as Relation values), before any per-caller filtering.
func (s *Service) LiveObject(class string, obj schema.Object) schema.Object {
	if obj == nil {
		return nil
	}
	return s.present(class, obj, ReadOptions{}, nil)
}

// SessionIdentity resolves a session token as Authenticate does and also
// returns when the session expires (zero when it never does), so that a
// caller caching the identity can stop honouring it on time.
func (s *Service) SessionIdentity(token string) (Auth, time.Time, error) {
	a, err := s.Authenticate(Auth{SessionToken: token})
	if err != nil {
		return Auth{}, time.Time{}, err
	}
	var expires time.Time
	if sess, ok := s.sessionByToken(token); ok {
		if exp, ok := sess["expiresAt"].(map[string]any); ok {
			if iso, _ := exp["iso"].(string); iso != "" {
				expires, _ = time.Parse(schema.TimeLayout, iso)
			}
		}
	}
	return a, expires, nil
}
