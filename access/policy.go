package access

import (
	"github.com/quarrydata/quarry/schema"
)

// Policy is one class's access rules compiled once from its class-level
// permissions (and the types of the fields they name): per-operation
// grants, the pointer-permission rules and the protected-field sets. A
// Policy is immutable and safe for concurrent use; callers cache one per
// schema version (see the service's policy cache).
type Policy struct {
	class string
	// ops holds the rule of each operation the CLP names; an operation
	// without an entry is open to everyone.
	ops       map[Op]*opRule
	protected protectedSets
	readers   sharedReaders
}

// opRule is one operation's entry of a CLP.
type opRule struct {
	grants       map[string]bool // "*", user ids and "role:..." granted
	requiresAuth bool
	pointer      *pointerRule // nil: no pointer permission applies
}

// FieldTypes reports the locked type of a class's field, when known.
type FieldTypes func(field string) (schema.Type, bool)

// Compile builds the policy of class from its class-level permissions
// (nil when the class has none). types gives the types of the fields the
// pointer permissions name; nil means they are unknown (a LiveQuery server
// running apart from the data).
func Compile(class string, clp map[string]any, types FieldTypes) *Policy {
	return CompileWith(class, clp, types, nil)
}

// Protected are the server's protectedFields (the option of that name):
// class -> CLP key ("*", "authenticated", "role:…", a user id,
// "userField:<field>") -> fields hidden from those callers. Every class's
// CLP adds to them. nil means Parse Server's default, DefaultProtected.
type Protected map[string]map[string][]string

// DefaultProtected is Parse Server's default protectedFields: users'
// emails hidden from everyone but the user and the master key.
func DefaultProtected() Protected { return Protected{ClassUser: {"*": {"email"}}} }

// CompileWith is Compile with the server's protectedFields (nil:
// DefaultProtected).
func CompileWith(class string, clp map[string]any, types FieldTypes, protected Protected) *Policy {
	if protected == nil {
		protected = defaultProtected
	}
	if schema.MasterOnlyClass(class) {
		// The server's own bookkeeping (webhooks, jobs, push records):
		// whatever CLP was stored for it, by an import or the schemas API.
		clp = schema.MasterOnlyCLP()
	}
	p := &Policy{class: class, protected: compileProtected(protected[class], clp)}
	p.readers.master = Reader{p: p, c: Caller{Master: true}}
	p.readers.public = Reader{p: p}
	if clp == nil {
		return p
	}
	p.ops = map[Op]*opRule{}
	for _, op := range []Op{OpGet, OpFind, OpCount, OpCreate, OpUpdate, OpDelete, OpAddField} {
		raw, present := clp[string(op)]
		if !present {
			continue // Parse reads an operation a CLP leaves out as public
		}
		entry, ok := raw.(map[string]any)
		if !ok {
			// A malformed entry ("find": "notobj") grants nothing: it must
			// never read as public. Stored CLPs are validated
			// (schema.NormalizeCLP); this guards whatever slipped past.
			p.ops[op] = &opRule{grants: map[string]bool{}}
			continue
		}
		r := &opRule{grants: map[string]bool{}, requiresAuth: entry["requiresAuthentication"] == true}
		for who, v := range entry {
			if v == true {
				r.grants[who] = true
			}
		}
		fields := stringList(entry["pointerFields"])
		switch op {
		case OpGet, OpFind, OpCount:
			fields = append(fields, stringList(clp["readUserFields"])...)
		case OpUpdate, OpDelete, OpAddField:
			fields = append(fields, stringList(clp["writeUserFields"])...)
		}
		if len(fields) > 0 && op != OpCreate {
			r.pointer = compilePointer(fields, types)
		}
		p.ops[op] = r
	}
	return p
}

// Class is the name of the class the policy is for.
func (p *Policy) Class() string { return p.class }

// CheckCLP evaluates the class-level permission of op for the caller. A
// caller let in only through pointer permissions gets a restricted Scope:
// they may act only on objects whose listed fields point to them.
func (p *Policy) CheckCLP(c Caller, op Op) (Scope, error) {
	if c.Master {
		return Scope{}, nil
	}
	if p.class == ClassInstallation && (op == OpGet || op == OpCreate || op == OpUpdate) {
		// The specification's table: installations ignore these CLPs; ACLs apply.
		return Scope{}, nil
	}
	r := p.ops[op]
	if r == nil {
		return Scope{}, nil
	}
	if r.grants["*"] || (c.UserID != "" && r.grants[c.UserID]) {
		return Scope{}, nil
	}
	for _, role := range c.Roles {
		if r.grants[role] {
			return Scope{}, nil
		}
	}
	if r.requiresAuth {
		if c.UserID != "" {
			return Scope{}, nil
		}
		return Scope{}, schema.Errorf(schema.CodeObjectNotFound, "Permission denied, user needs to be authenticated.")
	}
	if r.pointer != nil {
		return Scope{rule: r.pointer, userID: c.UserID}, nil
	}
	return Scope{}, schema.Errorf(schema.CodeOperationForbidden, "Permission denied for action %s on class %s.", op, p.class)
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
