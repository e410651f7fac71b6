package service

import (
	"regexp"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Built-in classes with rules of their own.
const (
	classUser         = "_User"
	classRole         = "_Role"
	classSession      = "_Session"
	classInstallation = "_Installation"
)

// CLP operations.
const (
	opGet      = "get"
	opFind     = "find"
	opCount    = "count"
	opCreate   = "create"
	opUpdate   = "update"
	opDelete   = "delete"
	opAddField = "addField"
)

// defaultProtected are fields hidden from everyone but the object's own
// user and the master key unless a class's CLP says otherwise (Parse
// Server's default protectedFields).
var defaultProtected = map[string]map[string][]string{classUser: {"*": {"email"}}}

// readGuard is everything one caller may see of one class: the CLP has
// been checked, visible filters objects by ACL and by the class's own
// rules, extra holds the pointer-permission constraint to AND with the
// query, and protected names the fields to strip from each object.
type readGuard struct {
	// userID is the caller ("" for public callers); master guards are zero.
	userID    string
	limited   bool // not master: authData and such are filtered
	visible   func(schema.Object) bool
	extra     map[string]any
	protected func(schema.Object) []string
}

// guardRead checks the CLP of op on class for the caller and returns the
// read guard. The master key sees everything.
func (s *Service) guardRead(a Auth, class, op string) (*readGuard, error) {
	if a.Master || a.internal {
		return &readGuard{}, nil
	}
	pointerFields, err := s.checkCLP(a, class, op)
	if err != nil {
		return nil, err
	}
	g := &readGuard{protected: s.protectedFor(a, class), userID: a.UserID, limited: true}
	if len(pointerFields) > 0 {
		g.extra = pointerConstraint(a, pointerFields)
	}
	switch class {
	case classUser:
		// A user always sees their own record, whatever its read ACL.
		g.visible = func(o schema.Object) bool {
			return o["objectId"] == a.UserID && a.UserID != "" || aclAllows(a, o, "read")
		}
	case classSession:
		if a.UserID == "" {
			return nil, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
		}
		g.visible = func(o schema.Object) bool { return pointsTo(o["user"], classUser, a.UserID) }
	default:
		g.visible = func(o schema.Object) bool { return aclAllows(a, o, "read") }
	}
	return g, nil
}

// queryVisible is a guard's object filter for one query (find, include).
// When every object of the class is publicly readable right now (counted
// exactly by the index on every write) the ACL filter is a no-op, and
// dropping it keeps index-only counts and early stops available. That
// holds at one instant only: a long-lived filter (LiveQuery) must use
// g.visible itself.
func (s *Service) queryVisible(g *readGuard, class string) func(schema.Object) bool {
	if g.visible == nil || class == classSession {
		return g.visible
	}
	if c := s.data.Collection(class, false); c == nil || c.Flagged() == 0 {
		return nil
	}
	return g.visible
}

// relatedVisible reports whether the caller may list the members of an
// owner's relation field: it may get the owner (CLP and ACL) and the field
// is not protected from it. Parse Server lists them to anyone; a caller
// who cannot see the field must not learn who is in it.
func (s *Service) relatedVisible(a Auth, ownerClass, key, ownerID string) bool {
	c := s.data.Collection(ownerClass, false)
	if c == nil {
		return false
	}
	owner, ok := c.Get(ownerID)
	if !ok {
		return false
	}
	g, err := s.guardRead(a, ownerClass, opGet)
	if err != nil || g.visible != nil && !g.visible(owner) {
		return false
	}
	if g.extra != nil && !s.matchesWhere(ownerClass, g.extra, owner) {
		return false
	}
	if g.protected != nil && slices.Contains(g.protected(owner), key) {
		return false
	}
	return true
}

// notPublic flags objects whose ACL withholds public read.
func notPublic(o schema.Object) bool {
	acl, ok := o["ACL"].(map[string]any)
	if !ok {
		return false
	}
	e, _ := acl["*"].(map[string]any)
	return e["read"] != true
}

// checkWrite checks the CLP of op and the object's write ACL (and the
// special classes' rules) for an update or delete of an existing object.
func (s *Service) checkWrite(a Auth, class, op string, obj schema.Object) error {
	if a.Master || a.internal {
		return nil
	}
	pointerFields, err := s.checkCLP(a, class, op)
	if err != nil {
		return err
	}
	if len(pointerFields) > 0 && !pointsToAny(obj, pointerFields, a.UserID) {
		return schema.ErrObjectNotFound
	}
	switch class {
	case classUser:
		id, _ := obj["objectId"].(string)
		if a.UserID == "" {
			if op == opDelete {
				return schema.Errorf(codeSessionMissing, "Insufficient auth to delete user")
			}
			return schema.Errorf(codeSessionMissing, "Cannot modify user %s.", id)
		}
		if a.UserID != id {
			return schema.Errorf(codeSessionMissing, "Cannot modify user %s.", id)
		}
		return nil // a user may always change themselves, whatever the ACL
	case classSession:
		if a.UserID == "" {
			// As a session query without a session: nothing to act on.
			return schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
		}
		if !pointsTo(obj["user"], classUser, a.UserID) {
			if op == opDelete {
				return schema.Errorf(schema.CodeObjectNotFound, "Object not found for delete.")
			}
			return schema.ErrObjectNotFound
		}
		return nil
	}
	if !aclAllows(a, obj, "write") {
		return schema.ErrObjectNotFound
	}
	return nil
}

// checkCLP evaluates a class-level permission. It returns the pointer
// fields that constrain the operation when access comes only through
// pointer permissions.
func (s *Service) checkCLP(a Auth, class, op string) ([]string, error) {
	if class == classInstallation && (op == opGet || op == opCreate || op == opUpdate) {
		// The specification's table: installations ignore these CLPs; ACLs apply.
		return nil, nil
	}
	cls := s.Class(class)
	if cls == nil && masterOnlyClasses[class] {
		// Not created yet, it is master-only all the same (cloud: _JobStatus).
		cls = &schema.Class{CLP: masterOnlyCLP()}
	}
	if cls == nil || cls.CLP == nil {
		return nil, nil
	}
	entry, ok := cls.CLP[op].(map[string]any)
	if !ok {
		return nil, nil
	}
	if entry["*"] == true || (a.UserID != "" && entry[a.UserID] == true) {
		return nil, nil
	}
	for _, r := range a.Roles {
		if entry[r] == true {
			return nil, nil
		}
	}
	if entry["requiresAuthentication"] == true {
		if a.UserID != "" {
			return nil, nil
		}
		return nil, schema.Errorf(schema.CodeObjectNotFound, "Permission denied, user needs to be authenticated.")
	}
	var fields []string
	fields = append(fields, stringList(entry["pointerFields"])...)
	switch op {
	case opGet, opFind, opCount:
		fields = append(fields, stringList(cls.CLP["readUserFields"])...)
	case opUpdate, opDelete, opAddField:
		fields = append(fields, stringList(cls.CLP["writeUserFields"])...)
	}
	if len(fields) > 0 && op != opCreate {
		return fields, nil
	}
	return nil, schema.Errorf(schema.CodeOperationForbidden, "Permission denied for action %s on class %s.", op, class)
}

func stringList(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// pointerConstraint is the where that pointer permissions add: some listed
// field points to (or, for arrays, holds a pointer to) the caller.
func pointerConstraint(a Auth, fields []string) map[string]any {
	if a.UserID == "" {
		return map[string]any{"objectId": map[string]any{"$in": []any{}}}
	}
	me := schema.Pointer(classUser, a.UserID)
	branches := make([]any, len(fields))
	for i, f := range fields {
		branches[i] = map[string]any{f: me}
	}
	if len(branches) == 1 {
		return branches[0].(map[string]any)
	}
	return map[string]any{"$or": branches}
}

func pointsTo(v any, class, id string) bool {
	p, ok := v.(map[string]any)
	return ok && id != "" && p["className"] == class && p["objectId"] == id
}

func pointsToAny(obj schema.Object, fields []string, userID string) bool {
	for _, f := range fields {
		switch v := obj[f].(type) {
		case map[string]any:
			if pointsTo(v, classUser, userID) {
				return true
			}
		case []any:
			for _, e := range v {
				if pointsTo(e, classUser, userID) {
					return true
				}
			}
		}
	}
	return false
}

// protectedFor returns, per object, the fields hidden from the caller: the
// intersection of every protectedFields set that applies to them (more
// specific entries can only reduce protection). A user's own record is
// never filtered.
func (s *Service) protectedFor(a Auth, class string) func(schema.Object) []string {
	sets := defaultProtected[class]
	if cls := s.Class(class); cls != nil {
		if pf, ok := cls.CLP["protectedFields"].(map[string]any); ok {
			// A stored CLP adds to the server's defaults, as Parse Server
			// merges its protectedFields option into every class's CLP: a
			// CLP set for other reasons must not unhide users' emails.
			merged := map[string][]string{}
			for k, v := range sets {
				merged[k] = append([]string(nil), v...)
			}
			for k, v := range pf {
				for _, f := range stringList(v) {
					if !contains(merged[k], f) {
						merged[k] = append(merged[k], f)
					}
				}
				if _, ok := merged[k]; !ok {
					merged[k] = []string{}
				}
			}
			sets = merged
		}
	}
	if len(sets) == 0 {
		return nil
	}
	static := [][]string{}
	add := func(key string) {
		if set, ok := sets[key]; ok {
			static = append(static, set)
		}
	}
	add("*")
	if a.UserID != "" {
		add("authenticated")
		add(a.UserID)
		for _, r := range a.Roles {
			add(r)
		}
	}
	var userFields []string
	for k := range sets {
		if f, ok := strings.CutPrefix(k, "userField:"); ok {
			userFields = append(userFields, f)
		}
	}
	return func(o schema.Object) []string {
		if class == classUser && a.UserID != "" && o["objectId"] == a.UserID {
			return nil
		}
		applicable := static
		for _, f := range userFields {
			if pointsToAny(o, []string{f}, a.UserID) {
				applicable = append(applicable[:len(applicable):len(applicable)], sets["userField:"+f])
			}
		}
		return intersect(applicable)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func intersect(sets [][]string) []string {
	if len(sets) == 0 {
		return nil
	}
	out := append([]string(nil), sets[0]...)
	for _, set := range sets[1:] {
		keep := out[:0]
		for _, f := range out {
			for _, g := range set {
				if f == g {
					keep = append(keep, f)
					break
				}
			}
		}
		out = keep
	}
	return out
}

// checkQueryable refuses a where that constrains a field the caller may
// not see (it would reveal the field through the results).
func checkQueryable(class string, where map[string]any, protected []string) error {
	if len(protected) == 0 {
		return nil
	}
	return eachWhereField(where, func(k string, _ any) error {
		root, _, _ := strings.Cut(k, ".")
		for _, p := range protected {
			if p == root {
				return schema.Errorf(schema.CodeOperationForbidden, "This user is not allowed to query %s on class %s", root, class)
			}
		}
		return nil
	})
}

// eachWhereField calls fn with every field key of a where and its
// constraint, descending into $or, $and and $nor, until fn fails.
func eachWhereField(where map[string]any, fn func(key string, constraint any) error) error {
	for k, v := range where {
		switch k {
		case "$or", "$and", "$nor":
			arr, _ := v.([]any)
			for _, b := range arr {
				if m, ok := b.(map[string]any); ok {
					if err := eachWhereField(m, fn); err != nil {
						return err
					}
				}
			}
			continue
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// authDataIDKey is the one authData path a client may name: a provider's id.
var authDataIDKey = regexp.MustCompile(`^authData\.[a-zA-Z0-9_]+\.id$`)

// checkSelectKeys refuses a $select or $dontSelect whose key the caller
// may not read on the subquery's class: an internal key, authData beyond
// a provider's id, or a protected field. The subquery's results never
// leave the server, but which outer objects match would reveal the values.
func (s *Service) checkSelectKeys(a Auth, where map[string]any) error {
	return eachWhereField(where, func(_ string, v any) error {
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
			if !schema.ValidKeyName(root) && !schema.ReservedKeys[root] {
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

// matchesWhere evaluates a where against one object (pointer-permission
// constraints on included objects).
func (s *Service) matchesWhere(class string, w map[string]any, obj schema.Object) bool {
	tree, err := where.Parse(w, where.Options{FieldType: func(n string) (schema.Type, bool) { return source{s}.FieldType(class, n) }})
	if err != nil {
		return false
	}
	m, err := matcher.Compile(tree, nil)
	return err == nil && m.Match(obj)
}
