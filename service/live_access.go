package service

import (
	"reflect"
	"time"

	"github.com/quarrydata/quarry/access"
	"github.com/quarrydata/quarry/schema"
)

// This file exports what front ends that test objects one at a time
// (LiveQuery) need from the read path: the same CLP, ACL, pointer
// permission and protected-field rules as a find, as predicates over one
// object instead of a query.

// ReadFilter is what one caller may read of one class: Visible (ACL,
// the class's own rules and pointer permissions; nil: everything) and
// Hidden (protected fields and another user's authData; nil: none).
type ReadFilter = access.ReadFilter

// Read operations a ReadFilter can be asked for.
const (
	ReadFind = opFind // a query
	ReadGet  = opGet  // a lookup of one object by id
)

// ReadFilter checks the class-level permission of op (ReadFind or ReadGet)
// on class for the caller and returns the filter of what they may read,
// using the class's current schema (its policy is compiled once per
// schema version). An error means the CLP refuses the caller altogether.
func (s *Service) ReadFilter(a Auth, class, op string) (ReadFilter, error) {
	if a.Master || a.internal {
		return ReadFilter{}, nil
	}
	r, err := s.policy(class).Read(a.caller(), access.Op(op))
	if err != nil {
		return ReadFilter{}, err
	}
	return r.Filter(), nil
}

// ReadFilterWithCLP is ReadFilter against the given class-level
// permissions instead of a stored schema. A LiveQuery server that runs
// apart from the data should compile an access.Policy itself and keep it
// across changes; this compiles one per call.
func ReadFilterWithCLP(a Auth, class, op string, clp map[string]any) (ReadFilter, error) {
	r, err := access.Compile(class, clp, nil).Read(a.caller(), access.Op(op))
	if err != nil {
		return ReadFilter{}, err
	}
	return r.Filter(), nil
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

// LiveSharesStored reports whether LiveObject(class, obj) would be an
// identical copy of obj (no internal key to strip, no relation field to
// show, no file URL to set), so that obj's stored JSON (Change.ObjectJSON)
// encodes the published object too.
func (s *Service) LiveSharesStored(class string, obj schema.Object) bool {
	if obj == nil {
		return false
	}
	v := s.view(class, obj, ReadOptions{}, nil, s.canShare(class, ReadOptions{}))
	return reflect.ValueOf(v).UnsafePointer() == reflect.ValueOf(obj).UnsafePointer()
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
