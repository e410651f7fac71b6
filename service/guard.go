package service

import (
	"regexp"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/access"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

// Built-in classes with rules of their own.
const (
	classUser         = "_User"
	classRole         = "_Role"
	classSession      = "_Session"
	classInstallation = "_Installation"
)

// CLP operations, as the service names them.
const (
	opGet      = string(access.OpGet)
	opFind     = string(access.OpFind)
	opCount    = string(access.OpCount)
	opCreate   = string(access.OpCreate)
	opUpdate   = string(access.OpUpdate)
	opDelete   = string(access.OpDelete)
	opAddField = string(access.OpAddField)
)

// caller is the identity the access rules see: the service acting on its
// own behalf (internal) is as the master key.
func (a Auth) caller() access.Caller {
	return access.Caller{Master: a.Master || a.internal, ReadOnly: a.ReadOnly, UserID: a.UserID, Roles: a.Roles}
}

// policyEntry is a class's compiled access policy for one schema version.
type policyEntry struct {
	cls    *schema.Class
	policy *access.Policy
}

// policy returns the class's access policy, compiled once per schema
// version: schemas are replaced, never mutated, so the *schema.Class
// identifies the version of its CLP and field types. A class without a
// schema has no CLP; its (trivial) policy is not cached, so that querying
// made-up class names cannot grow the cache.
func (s *Service) policy(class string) *access.Policy {
	cls := s.Class(class)
	if cls == nil {
		return access.CompileWith(class, nil, nil, s.opts.ProtectedFields)
	}
	if e, ok := s.policies.Load(class); ok && e.(*policyEntry).cls == cls {
		return e.(*policyEntry).policy
	}
	p := access.CompileWith(class, cls.CLP, func(n string) (schema.Type, bool) {
		f, ok := cls.Fields[n]
		return f.Type, ok
	}, s.opts.ProtectedFields)
	s.policies.Store(class, &policyEntry{cls, p})
	return p
}

// readGuard is everything one caller may see of one class: the CLP has
// been checked, visible filters objects by ACL and by the class's own
// rules, extra holds the pointer-permission constraint to AND with the
// query (scope tests it on one object), and protected names the fields to
// strip from each object. A master guard is zero: it filters nothing.
type readGuard struct {
	reader    *access.Reader // nil for the master key
	visible   func(schema.Object) bool
	extra     map[string]any
	scope     access.Scope
	protected func(schema.Object) []string
	// maintenance shows Parse's internal account fields (maintenance.go).
	maintenance bool
}

// guardRead checks the CLP of op on class for the caller and returns the
// read guard. The master key sees everything.
func (s *Service) guardRead(a Auth, class, op string) (*readGuard, error) {
	if a.Master || a.internal {
		return &readGuard{}, nil
	}
	r, err := s.policy(class).Read(a.caller(), access.Op(op))
	if err != nil {
		return nil, err
	}
	g := &readGuard{reader: r, visible: r.CanRead, scope: r.Scope(), extra: r.Scope().Where()}
	if a.Maintenance {
		g.maintenance = true // maintenance.go
	} else if r.HasProtected() {
		g.protected = r.Protected
	}
	return g, nil
}

// hidesAuthData reports whether obj is another user's _User record, whose
// authData the guard's caller may not see. A nil guard hides nothing.
func (g *readGuard) hidesAuthData(obj schema.Object) bool {
	return g != nil && g.reader != nil && g.reader.HidesAuthData(obj)
}

// queryVisible is a guard's object filter for one query (find, include).
// When every object of the class is publicly readable right now (counted
// exactly by the index on every write) the ACL filter is a no-op, and
// dropping it keeps index-only counts and early stops available. That
// holds at one instant only: a long-lived filter (LiveQuery) must use
// g.visible itself.
func (s *Service) queryVisible(g *readGuard, class string) func(schema.Object) bool {
	if g.visible == nil || !s.aclFilters(class) {
		return nil
	}
	return g.visible
}

// aclFilters reports whether a non-master read of class must test each
// object's ACL and the class's own rules right now (see queryVisible).
func (s *Service) aclFilters(class string) bool {
	if !flagDecidesVisibility(class) {
		return true
	}
	c := s.data.Collection(class, false)
	return c != nil && c.Flagged() > 0
}

// relatedVisible reports whether the caller may list the members of an
// owner's relation field: it may get the owner (CLP and ACL) and the field
// is not protected from it. Parse Server lists them to anyone; a caller
// who cannot see the field must not learn who is in it.
func (s *Service) relatedVisible(a Auth, ownerClass, key, ownerID string) bool {
	owner, ok := s.storedObject(ownerClass, ownerID)
	if !ok {
		return false
	}
	g, err := s.guardRead(a, ownerClass, opGet)
	if err != nil || g.visible != nil && !g.visible(owner) {
		return false
	}
	if !g.scope.Allows(owner) {
		return false
	}
	if g.protected != nil && slices.Contains(g.protected(owner), key) {
		return false
	}
	return true
}

// notPublic flags objects whose ACL withholds public read.
func notPublic(o schema.Object) bool { return !access.PublicRead(o) }

// flagDecidesVisibility is planner.Query.FlagDecides: outside _Session,
// whose rule is the session's user, a read guard's filter
// (access.Reader.CanRead) passes every object with public read, which is
// every object the collections' flag (notPublic) leaves unflagged.
func flagDecidesVisibility(class string) bool { return class != classSession }

// notPublicReads are the fields notPublic reads (access.PublicRead looks
// at the ACL only): a load reads just those from the stored bytes.
var notPublicReads = []string{"ACL"}

// checkWrite checks the CLP of op and the object's write ACL (and the
// special classes' rules) for an update or delete of an existing object.
func (s *Service) checkWrite(a Auth, class, op string, obj schema.Object) error {
	if a.Master || a.internal || a.Maintenance {
		return nil
	}
	return s.policy(class).CheckWrite(a.caller(), access.Op(op), obj)
}

// checkCLP evaluates a class-level permission. It returns the pointer
// fields that constrain the operation when access comes only through
// pointer permissions.
func (s *Service) checkCLP(a Auth, class, op string) ([]string, error) {
	scope, err := s.policy(class).CheckCLP(a.caller(), access.Op(op))
	return scope.Fields(), err
}

// pointsToAny reports whether one of fields of obj points to the user
// (the write-side pointer-permission test).
func pointsToAny(obj schema.Object, fields []string, userID string) bool {
	return access.PointsToUser(obj, fields, userID)
}

// checkQueryable refuses a where that constrains a field the caller may
// not see (it would reveal the field through the results).
func checkQueryable(class string, where map[string]any, protected []string) error {
	return access.CheckQueryable(class, where, protected)
}

// authDataIDKey is the one authData path a client may name: a provider's id.
var authDataIDKey = regexp.MustCompile(`^authData\.[a-zA-Z0-9_]+\.id$`)

// checkSelectKeys refuses a $select or $dontSelect whose key the caller
// may not read on the subquery's class: an internal key, authData beyond
// a provider's id, or a protected field. The subquery's results never
// leave the server, but which outer objects match would reveal the values.
func (s *Service) checkSelectKeys(a Auth, where map[string]any) error {
	return access.EachWhereField(where, func(_ string, v any) error {
		ops, _ := v.(map[string]any)
		for _, name := range []string{"$select", "$dontSelect"} {
			sel, _ := ops[name].(map[string]any)
			key, _ := sel["key"].(string)
			query, _ := sel["query"].(map[string]any)
			class, _ := query["className"].(string)
			if key == "" || class == "" {
				continue // malformed: the where parser reports it
			}
			root, _, _ := strings.Cut(key, ".")
			if !schema.ValidKeyName(root) && !schema.IsReservedKey(root) {
				return schema.Errorf(schema.CodeInvalidKeyName, "Invalid key name: %s", key)
			}
			if root == "authData" && !authDataIDKey.MatchString(key) {
				return schema.Errorf(schema.CodeInvalidQuery, "Cannot query on %s.", key)
			}
			g, err := s.guardRead(a, class, opFind)
			if err != nil {
				return err
			}
			if g.protected != nil {
				if err := checkQueryable(class, map[string]any{root: nil}, g.protected(nil)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func pointRange(v any) index.Range { return index.Equal(v) }
