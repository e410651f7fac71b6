// Package accesstest holds the permission matrix as data: callers × operations
// × access setups (ACL, CLP, pointer permissions, protected fields), each
// cell's expected outcome written out. The same table drives access's
// direct test of the pure rules and transport's test over HTTP.
// Test support only: production code never imports it.
package accesstest

import "github.com/quarrydata/quarry/schema"

// Columns names the callers of every row, in order: no session, alice,
// bob, carol (member of role Parent), dave (member of role Child, a child
// role of Parent, so he inherits Parent's grants), the master key and the
// read-only master key.
var Columns = [7]string{"public", "user", "other user", "role member", "child-role member", "master", "read-only master"}

// The matrix's roles: Child is a child role of Parent.
const (
	ParentRole = "Parent"
	ChildRole  = "Child"
)

// Users are the objectIds of the matrix's four users.
type Users struct{ Alice, Bob, Carol, Dave string }

// Outcomes are strings so that a failing cell reads like the table:
//
//	"200", "201"           success
//	"404/101", "400/119"   HTTP status / Parse code
//	"ids:a,b"              the fixture names a find (or include) shows
//	"count:2"              the count of a count query
//	"fields:o1=a,b;o2=c"   which protected fields each object shows
//	"items:0,119,101"      batch item codes (0 = success)

// Setup is one block of the matrix: a class, its objects (created with the
// master key, then holders pointing at them, then the CLP set) and rows.
type Setup struct {
	Name  string
	Class string
	// Objects are the fixtures, created in order; each body has a "name".
	Objects []map[string]any
	// Held names the objects that holders (class "MxHold"+Kind, field
	// "target") point to; include rows expand them.
	Held []string
	Kind string
	// CLP is set on Class after the fixtures exist (nil: none).
	CLP map[string]any
	// GetID names the object get rows read by default.
	GetID string
	// Create is the body of create rows; Fresh the body of the object made
	// with the master key for each update, delete or addField.
	Create, Fresh map[string]any
	// Protected lists the fields "fields:" outcomes report on.
	Protected []string
	Rows      []Row
}

// Ops a Row can do.
const (
	OpGet      = "get"      // GET the object named On (default Setup.GetID)
	OpFind     = "find"     // a find with Where (default fixture:true) and Order
	OpCount    = "count"    // count=1&limit=0 over fixture:true
	OpCreate   = "create"   // POST Setup.Create
	OpUpdate   = "update"   // PUT {"n":2} on a fresh object
	OpDelete   = "delete"   // DELETE a fresh object
	OpAddField = "addField" // PUT a new field on a fresh object
	OpInclude  = "include"  // find the holders with include=target
	OpBatch    = "batch"    // [GET GetID, PUT fresh, DELETE fresh]; with Fields [GET GetID]
)

// Row is one operation across the seven callers.
type Row struct {
	Name string
	Op   string
	// On names the object a get reads (default Setup.GetID).
	On string
	// Fresh replaces Setup.Fresh for this row's fresh object.
	Fresh map[string]any
	// Where (equality only) and Order ("name", "-phone") shape a find.
	Where map[string]any
	Order string
	// Fields reports which of Setup.Protected each object shows.
	Fields bool
	Want   [7]string
}

func rw() map[string]any { return map[string]any{"read": true, "write": true} }

var everyone = map[string]any{"*": true}

// AllOps is a CLP granting every operation to grant; entries of over
// replace or add to it.
func AllOps(grant map[string]any, over map[string]any) map[string]any {
	clp := map[string]any{}
	for _, op := range []string{"get", "find", "count", "create", "update", "delete", "addField"} {
		clp[op] = grant
	}
	for k, v := range over {
		clp[k] = v
	}
	return clp
}

// Matrix is the permission matrix for the given users.
func Matrix(u Users) []Setup {
	return []Setup{aclSetup(u), clpSetup(u), specSetup(u), pointerSetup(u), protectedSetup(u)}
}

func aclSetup(u Users) Setup {
	fixture := func(name string, acl map[string]any) map[string]any {
		return map[string]any{"name": name, "fixture": true, "n": 1.0, "ACL": acl}
	}
	return Setup{Name: "ACL", Class: "MxAcl", Kind: "acl", GetID: "role",
		Objects: []map[string]any{
			fixture("pub", map[string]any{"*": map[string]any{"read": true}}),
			fixture("own", map[string]any{u.Alice: rw()}),
			fixture("role", map[string]any{"role:" + ParentRole: rw()}),
		},
		Held:   []string{"pub", "own", "role"},
		Create: map[string]any{"name": "new", "ACL": map[string]any{u.Alice: rw()}},
		Fresh:  map[string]any{"name": "fresh", "n": 1.0, "ACL": map[string]any{"role:" + ParentRole: rw()}},
		Rows: []Row{
			//                                                   public     user       other user  role member  child-role   master     read-only master
			{Name: "get own", Op: OpGet, On: "own", Want: [7]string{"404/101", "200", "404/101", "404/101", "404/101", "200", "200"}},
			{Name: "get role's", Op: OpGet, Want: [7]string{"404/101", "404/101", "404/101", "200", "200", "200", "200"}},
			{Name: "find", Op: OpFind, Want: [7]string{"ids:pub", "ids:own,pub", "ids:pub", "ids:pub,role", "ids:pub,role", "ids:own,pub,role", "ids:own,pub,role"}},
			{Name: "count", Op: OpCount, Want: [7]string{"count:1", "count:2", "count:1", "count:2", "count:2", "count:3", "count:3"}},
			{Name: "create", Op: OpCreate, Want: [7]string{"201", "201", "201", "201", "201", "201", "400/119"}},
			{Name: "update own", Op: OpUpdate, Fresh: map[string]any{"name": "fresh", "n": 1.0, "ACL": map[string]any{u.Alice: rw()}},
				Want: [7]string{"404/101", "200", "404/101", "404/101", "404/101", "200", "400/119"}},
			{Name: "update role's", Op: OpUpdate, Want: [7]string{"404/101", "404/101", "404/101", "200", "200", "200", "400/119"}},
			{Name: "delete role's", Op: OpDelete, Want: [7]string{"404/101", "404/101", "404/101", "200", "200", "200", "400/119"}},
			{Name: "include", Op: OpInclude, Want: [7]string{"ids:pub", "ids:own,pub", "ids:pub", "ids:pub,role", "ids:pub,role", "ids:own,pub,role", "ids:own,pub,role"}},
			{Name: "batch", Op: OpBatch, Want: [7]string{"items:101,101,101", "items:101,101,101", "items:101,101,101", "items:0,0,0", "items:0,0,0", "items:0,0,0", "items:0,119,119"}},
		},
	}
}

// clpSetup grants every operation to someone else.
func clpSetup(u Users) Setup {
	return Setup{Name: "CLP", Class: "MxClp", Kind: "clp", GetID: "c1",
		Objects: []map[string]any{{"name": "c1", "fixture": true, "n": 1.0}},
		Held:    []string{"c1"},
		CLP: map[string]any{
			"get":      map[string]any{u.Alice: true, "role:" + ParentRole: true},
			"find":     map[string]any{"requiresAuthentication": true},
			"count":    map[string]any{"role:" + ParentRole: true},
			"create":   map[string]any{u.Alice: true},
			"update":   map[string]any{"role:" + ParentRole: true},
			"delete":   map[string]any{u.Alice: true},
			"addField": map[string]any{"role:" + ChildRole: true},
		},
		Create: map[string]any{"n": 5.0},
		Fresh:  map[string]any{"name": "fresh", "n": 1.0},
		Rows: []Row{
			//                                      public       user         other user   role member  child-role   master     read-only master
			{Name: "get", Op: OpGet, Want: [7]string{"400/119", "200", "400/119", "200", "200", "200", "200"}},
			{Name: "find", Op: OpFind, Want: [7]string{"404/101", "ids:c1", "ids:c1", "ids:c1", "ids:c1", "ids:c1", "ids:c1"}},
			{Name: "count", Op: OpCount, Want: [7]string{"400/119", "400/119", "400/119", "count:1", "count:1", "count:1", "count:1"}},
			{Name: "create", Op: OpCreate, Want: [7]string{"400/119", "201", "400/119", "400/119", "400/119", "201", "400/119"}},
			{Name: "update", Op: OpUpdate, Want: [7]string{"400/119", "400/119", "400/119", "200", "200", "200", "400/119"}},
			{Name: "addField", Op: OpAddField, Want: [7]string{"400/119", "400/119", "400/119", "400/119", "200", "200", "400/119"}},
			{Name: "delete", Op: OpDelete, Want: [7]string{"400/119", "200", "400/119", "400/119", "400/119", "200", "400/119"}},
			{Name: "include", Op: OpInclude, Want: [7]string{"ids:", "ids:c1", "ids:", "ids:c1", "ids:c1", "ids:c1", "ids:c1"}},
			{Name: "batch", Op: OpBatch, Want: [7]string{"items:119,119,119", "items:0,119,0", "items:119,119,119", "items:0,0,119", "items:0,0,119", "items:0,0,0", "items:0,119,119"}},
		},
	}
}

// specSetup is the specification's example: the Get CLP allows only user1
// (alice), the read ACL only user2 (bob): neither can get the object.
func specSetup(u Users) Setup {
	return Setup{Name: "CLP+ACL", Class: "MxSpec", GetID: "s1",
		Objects: []map[string]any{{"name": "s1", "fixture": true, "ACL": map[string]any{u.Bob: map[string]any{"read": true}}}},
		CLP:     AllOps(everyone, map[string]any{"get": map[string]any{u.Alice: true}}),
		Rows: []Row{
			{Name: "get", Op: OpGet, Want: [7]string{"400/119", "404/101", "400/119", "400/119", "400/119", "200", "200"}},
			{Name: "find", Op: OpFind, Want: [7]string{"ids:", "ids:", "ids:s1", "ids:", "ids:", "ids:s1", "ids:s1"}},
		},
	}
}

// pointerSetup: readUserFields owner and editors (an array),
// writeUserFields owner only; no operation is granted otherwise.
func pointerSetup(u Users) Setup {
	user := func(id string) map[string]any { return schema.Pointer("_User", id) }
	none := map[string]any{}
	return Setup{Name: "pointer", Class: "MxPtr", Kind: "ptr", GetID: "p1",
		Objects: []map[string]any{
			{"name": "p1", "fixture": true, "owner": user(u.Alice), "editors": []any{user(u.Carol)}},
			{"name": "p2", "fixture": true, "owner": user(u.Bob), "editors": []any{}},
			{"name": "p3", "fixture": true, "owner": user(u.Dave), "editors": []any{user(u.Alice)}},
		},
		Held: []string{"p1"},
		CLP: map[string]any{
			"get": none, "find": none, "count": none, "update": none, "delete": none,
			"create": everyone, "addField": everyone,
			"readUserFields": []any{"owner", "editors"}, "writeUserFields": []any{"owner"},
		},
		Create: map[string]any{"owner": user(u.Alice)},
		Fresh:  map[string]any{"name": "fresh", "n": 1.0, "owner": user(u.Alice), "editors": []any{user(u.Carol)}},
		Rows: []Row{
			//                                      public       user           other user   role member (editor)  child-role   master              read-only master
			{Name: "get", Op: OpGet, Want: [7]string{"404/101", "200", "404/101", "200", "404/101", "200", "200"}},
			{Name: "find", Op: OpFind, Want: [7]string{"ids:", "ids:p1,p3", "ids:p2", "ids:p1", "ids:p3", "ids:p1,p2,p3", "ids:p1,p2,p3"}},
			{Name: "count", Op: OpCount, Want: [7]string{"count:0", "count:2", "count:1", "count:1", "count:1", "count:3", "count:3"}},
			{Name: "create", Op: OpCreate, Want: [7]string{"201", "201", "201", "201", "201", "201", "400/119"}},
			{Name: "update", Op: OpUpdate, Want: [7]string{"404/101", "200", "404/101", "404/101", "404/101", "200", "400/119"}},
			{Name: "delete", Op: OpDelete, Want: [7]string{"404/101", "200", "404/101", "404/101", "404/101", "200", "400/119"}},
			{Name: "include", Op: OpInclude, Want: [7]string{"ids:", "ids:p1", "ids:", "ids:p1", "ids:", "ids:p1", "ids:p1"}},
			{Name: "batch", Op: OpBatch, Want: [7]string{"items:101,101,101", "items:0,0,0", "items:101,101,101", "items:0,101,101", "items:101,101,101", "items:0,0,0", "items:0,119,119"}},
		},
	}
}

// protectedSetup: the fields removed are the intersection of every set
// that applies to the caller.
func protectedSetup(u Users) Setup {
	prot := func(name, owner string) map[string]any {
		return map[string]any{"name": name, "fixture": true, "owner": schema.Pointer("_User", owner),
			"secret": "s-" + name, "phone": "p-" + name, "note": "n-" + name}
	}
	all := "fields:note,phone,secret"
	return Setup{Name: "protected", Class: "MxProt", Kind: "prot", GetID: "o1",
		Objects:   []map[string]any{prot("o1", u.Alice), prot("o2", u.Bob)},
		Held:      []string{"o1"},
		Protected: []string{"secret", "phone", "note"},
		CLP: AllOps(everyone, map[string]any{"protectedFields": map[string]any{
			"*":                  []any{"secret", "phone", "note"},
			"authenticated":      []any{"secret", "phone"},
			"role:" + ParentRole: []any{"secret"},
			"userField:owner":    []any{},
			u.Dave:               []any{},
		}}),
		Create: prot("new", u.Alice),
		Fresh:  prot("fresh", u.Alice),
		Rows: []Row{
			//                                                    public     user (owner of o1)  other user (owner of o2)  role member  child-role (own entry [])  master  read-only master
			{Name: "get", Op: OpGet, Fields: true, Want: [7]string{"fields:", all, "fields:note", "fields:note,phone", all, all, all}},
			{Name: "find", Op: OpFind, Order: "name", Fields: true, Want: [7]string{"fields:o1=;o2=", "fields:o1=note,phone,secret;o2=note", "fields:o1=note;o2=note,phone,secret",
				"fields:o1=note,phone;o2=note,phone", "fields:o1=note,phone,secret;o2=note,phone,secret",
				"fields:o1=note,phone,secret;o2=note,phone,secret", "fields:o1=note,phone,secret;o2=note,phone,secret"}},
			{Name: "query a protected field", Op: OpFind, Where: map[string]any{"secret": "s-o1"}, Want: [7]string{"400/119", "400/119", "400/119", "400/119", "ids:o1", "ids:o1", "ids:o1"}},
			{Name: "order by a protected field", Op: OpFind, Order: "-phone", Want: [7]string{"400/119", "400/119", "400/119", "ids:o1,o2", "ids:o1,o2", "ids:o1,o2", "ids:o1,o2"}},
			{Name: "count", Op: OpCount, Want: [7]string{"count:2", "count:2", "count:2", "count:2", "count:2", "count:2", "count:2"}},
			{Name: "create", Op: OpCreate, Want: [7]string{"201", "201", "201", "201", "201", "201", "400/119"}},
			{Name: "update", Op: OpUpdate, Want: [7]string{"200", "200", "200", "200", "200", "200", "400/119"}},
			{Name: "delete", Op: OpDelete, Want: [7]string{"200", "200", "200", "200", "200", "200", "400/119"}},
			{Name: "include", Op: OpInclude, Fields: true, Want: [7]string{"fields:", all, "fields:note", "fields:note,phone", all, all, all}},
			{Name: "batch", Op: OpBatch, Fields: true, Want: [7]string{"fields:", all, "fields:note", "fields:note,phone", all, all, all}},
		},
	}
}
