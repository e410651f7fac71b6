package access

import (
	"github.com/quarrydata/quarry/schema"
)

// Reader is what one caller may read of one class for one operation,
// after the class-level permission let them in. A master Reader filters
// nothing. Readers are cheap, immutable and safe for concurrent use.
type Reader struct {
	p      *Policy
	c      Caller
	scope  Scope
	static [][]string // protected sets that apply whatever the object
}

// Read checks the class-level permission of op (OpGet, OpFind or OpCount)
// and returns the caller's reader. _Session refuses a caller without a
// session altogether (209), as Parse Server does.
func (p *Policy) Read(c Caller, op Op) (*Reader, error) {
	if c.Master {
		// A master reader reads nothing of its caller but Master.
		return &p.readers.master, nil
	}
	scope, err := p.CheckCLP(c, op)
	if err != nil {
		return nil, err
	}
	if p.class == ClassSession && c.UserID == "" {
		return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	if c.UserID == "" && len(c.Roles) == 0 && !c.ReadOnly && !scope.Restricted() && len(p.protected.sets) == 0 {
		// Every caller without a session reads alike.
		return &p.readers.public, nil
	}
	r := &Reader{p: p, c: c, scope: scope}
	if len(p.protected.sets) > 0 {
		r.static = p.protected.forCaller(c)
	}
	return r, nil
}

// sharedReaders are a policy's readers that depend on nothing of their
// caller but their kind, made once (Compile) so that Read allocates none
// for them.
type sharedReaders struct {
	master, public Reader
}

// Master reports whether the reader filters nothing (the master key).
func (r *Reader) Master() bool { return r.c.Master }

// Scope is the pointer-permission restriction of the read.
func (r *Reader) Scope() Scope { return r.scope }

// CanRead reports whether the object's ACL and the class's own rules let
// the caller read it: a user always reads their own _User record; a
// _Session is read only by its user. Pointer permissions are not part of
// it (see Scope and Visible).
func (r *Reader) CanRead(obj schema.Object) bool {
	if r.c.Master {
		return true
	}
	switch r.p.class {
	case ClassUser:
		return obj["objectId"] == r.c.UserID && r.c.UserID != "" || ACLAllows(r.c, obj, PermRead)
	case ClassSession:
		return pointsTo(obj["user"], ClassUser, r.c.UserID)
	}
	return ACLAllows(r.c, obj, PermRead)
}

// Visible is CanRead and the pointer-permission scope together: whether
// the caller may see obj at all.
func (r *Reader) Visible(obj schema.Object) bool {
	return r.CanRead(obj) && r.scope.Allows(obj)
}

// HasProtected reports whether any protected-field set could apply.
func (r *Reader) HasProtected() bool { return !r.c.Master && len(r.p.protected.sets) > 0 }

// Protected names the fields of obj hidden from the caller (nil obj: the
// fields hidden whatever the object, for checking a query). A user's own
// _User record hides nothing.
func (r *Reader) Protected(obj schema.Object) []string {
	if !r.HasProtected() {
		return nil
	}
	if r.p.class == ClassUser && r.c.UserID != "" && obj["objectId"] == r.c.UserID {
		return nil
	}
	return r.p.protected.fields(r.static, r.c.UserID, obj)
}

// Hidden is Protected plus authData on another user's _User record: what
// to strip from obj before the caller sees it.
func (r *Reader) Hidden(obj schema.Object) []string {
	out := r.Protected(obj)
	if r.HidesAuthData(obj) {
		out = append(out[:len(out):len(out)], "authData")
	}
	return out
}

// HidesAuthData reports whether obj is a _User record whose authData the
// caller may not see (anyone's but their own).
func (r *Reader) HidesAuthData(obj schema.Object) bool {
	return !r.c.Master && r.p.class == ClassUser && (r.c.UserID == "" || obj["objectId"] != r.c.UserID)
}

// ReadFilter is a Reader as two predicates, for front ends that test
// objects one at a time (LiveQuery). Nil fields filter nothing.
type ReadFilter struct {
	// Visible reports whether the caller may read the object (see
	// Reader.Visible).
	Visible func(schema.Object) bool
	// Hidden names the fields to strip from the object (see Reader.Hidden).
	Hidden func(schema.Object) []string
}

// Filter returns the reader's ReadFilter; a master reader's is empty.
func (r *Reader) Filter() ReadFilter {
	if r.c.Master {
		return ReadFilter{}
	}
	f := ReadFilter{Visible: r.CanRead}
	if r.scope.Restricted() {
		f.Visible = r.Visible
	}
	if r.HasProtected() || r.p.class == ClassUser {
		f.Hidden = r.Hidden
	}
	return f
}
