package transport_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/access/accesstest"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// The permission matrix: every kind of caller × every operation × every
// access mechanism (ACL, CLP, pointer permissions, protected fields), each
// cell's expected outcome written out. Outcomes are strings so a failing
// cell reads like the table:
//
//	"200", "201"           success
//	"404/101", "400/119"   HTTP status / Parse code
//	"ids:a,b"              the fixture names a find (or include) shows
//	"count:2"              the count of a count query
//	"fields:o1=a,b;o2=c"   which protected fields each object shows
//	"items:0,119,101"      batch item codes (0 = success)

// caller is one row of the matrix.
type caller struct {
	name    string
	headers map[string]string
	userID  string
	token   string
}

// world is a server with the matrix's callers: alice ("user"), bob
// ("other user"), carol (member of role Parent), dave (member of role
// Child, which is a child role of Parent, so he inherits Parent's grants),
// the master key and the read-only master key.
type world struct {
	srv                       *servertest.Server
	public, alice, bob, carol caller
	dave, master, ro          caller
	parentRoleID, childRoleID string
	passwords                 map[string]string
}

// columns is the order of the cells in every matrix row.
var columns = [7]string{"public", "user", "other user", "role member", "child-role member", "master", "read-only master"}

func (w *world) callers() [7]caller {
	return [7]caller{w.public, w.alice, w.bob, w.carol, w.dave, w.master, w.ro}
}

func password(name string) string { return "pw-" + name + "-S3cret!" }

func newWorld(t testing.TB, edit func(*config.Options)) *world {
	t.Helper()
	srv := servertest.Start(t, func(o *config.Options) {
		o.ReadOnlyMasterKey = roMasterKey
		if edit != nil {
			edit(o)
		}
	})
	w := &world{srv: srv, passwords: map[string]string{}}
	w.public = caller{name: "public", headers: servertest.App()}
	w.master = caller{name: "master", headers: servertest.Master()}
	w.ro = caller{name: "read-only master", headers: with(servertest.App(), "X-Parse-Master-Key", roMasterKey)}
	w.alice = w.signUp(t, "alice")
	w.bob = w.signUp(t, "bob")
	w.carol = w.signUp(t, "carol")
	w.dave = w.signUp(t, "dave")
	readable := map[string]any{"*": map[string]any{"read": true}}
	w.childRoleID = mustPost(t, srv, "/roles", map[string]any{"name": "Child", "ACL": readable,
		"users": addRelation(ptr("_User", w.dave.userID))}, servertest.Master())
	w.parentRoleID = mustPost(t, srv, "/roles", map[string]any{"name": "Parent", "ACL": readable,
		"users": addRelation(ptr("_User", w.carol.userID)),
		"roles": addRelation(ptr("_Role", w.childRoleID))}, servertest.Master())
	return w
}

// signUp creates a user named name (password password(name), email
// name@example.com) and returns them as a caller.
func (w *world) signUp(t testing.TB, name string) caller {
	t.Helper()
	res := w.srv.Do(t, "POST", "/users", map[string]any{"username": name, "password": password(name), "email": name + "@example.com"}, servertest.App())
	if res.Status != 201 {
		t.Fatalf("sign up %s: %d %s", name, res.Status, res.Body)
	}
	m := res.Map()
	tok, _ := m["sessionToken"].(string)
	w.passwords[name] = password(name)
	return caller{name: name, userID: m["objectId"].(string), token: tok,
		headers: with(servertest.App(), "X-Parse-Session-Token", tok)}
}

// sessionID is the objectId of the caller's session.
func (w *world) sessionID(t testing.TB, c caller) string {
	t.Helper()
	res := w.srv.Do(t, "GET", "/sessions/me", nil, c.headers)
	id, _ := res.Map()["objectId"].(string)
	if res.Status != 200 || id == "" {
		t.Fatalf("GET /sessions/me as %s: %d %s", c.name, res.Status, res.Body)
	}
	return id
}

func addRelation(ptrs ...any) map[string]any {
	return map[string]any{"__op": "AddRelation", "objects": ptrs}
}

func rw() map[string]any     { return map[string]any{"read": true, "write": true} }
func public() map[string]any { return map[string]any{"*": map[string]any{"read": true, "write": true}} }

// mustPost creates through any create route and returns the objectId.
func mustPost(t testing.TB, srv *servertest.Server, path string, body any, headers map[string]string) string {
	t.Helper()
	res := srv.Do(t, "POST", path, body, headers)
	id, _ := res.Map()["objectId"].(string)
	if res.Status != 201 || id == "" {
		t.Fatalf("POST %s: %d %s", path, res.Status, res.Body)
	}
	return id
}

// setCLP stores a class-level permission through PUT /schemas/<class>.
func setCLP(t testing.TB, srv *servertest.Server, class string, clp map[string]any) {
	t.Helper()
	res := srv.Do(t, "PUT", "/schemas/"+class, map[string]any{"className": class, "classLevelPermissions": clp}, servertest.Master())
	if res.Status != 200 {
		t.Fatalf("PUT /schemas/%s: %d %s", class, res.Status, res.Body)
	}
}

var everyone = map[string]any{"*": true}

func whereQ(w any) string {
	b, err := json.Marshal(w)
	if err != nil {
		panic(err)
	}
	return "where=" + url.QueryEscape(string(b))
}

// outcome renders a reply as status (2xx) or status/code.
func outcome(res servertest.Response) string {
	if res.Status >= 200 && res.Status < 300 {
		return fmt.Sprint(res.Status)
	}
	m := res.Map()
	if c, ok := m["code"].(float64); ok {
		return fmt.Sprintf("%d/%d", res.Status, int(c))
	}
	return fmt.Sprintf("%d:%s", res.Status, clip(string(res.Body)))
}

func results(res servertest.Response) []map[string]any {
	var out struct {
		Results []map[string]any `json:"results"`
	}
	_ = json.Unmarshal(res.Body, &out)
	return out.Results
}

// idsOutcome lists the "name" of each result.
func idsOutcome(res servertest.Response) string {
	if res.Status != 200 {
		return outcome(res)
	}
	var names []string
	for _, r := range results(res) {
		n, _ := r["name"].(string)
		names = append(names, n)
	}
	sort.Strings(names)
	return "ids:" + strings.Join(names, ",")
}

func countOutcome(res servertest.Response) string {
	if res.Status != 200 {
		return outcome(res)
	}
	return fmt.Sprintf("count:%v", res.Map()["count"])
}

// includedOutcome lists the names of the objects expanded at key in the results.
func includedOutcome(res servertest.Response, key string) string {
	if res.Status != 200 {
		return outcome(res)
	}
	var names []string
	for _, r := range results(res) {
		for _, e := range asList(r[key]) {
			if m, ok := e.(map[string]any); ok && m["__type"] == "Object" {
				n, _ := m["name"].(string)
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return "ids:" + strings.Join(names, ",")
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// shown lists which of fields an object holds.
func shown(obj map[string]any, fields ...string) string {
	var out []string
	for _, f := range fields {
		if _, ok := obj[f]; ok {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func batchOutcome(t testing.TB, res servertest.Response) string {
	if res.Status != 200 {
		return outcome(res)
	}
	var codes []string
	for _, it := range batchItems(t, res) {
		codes = append(codes, fmt.Sprint(itemCode(t, it)))
	}
	return "items:" + strings.Join(codes, ",")
}

// matrixRow is one operation of one mechanism across the seven callers.
type matrixRow struct {
	op   string
	do   func(t *testing.T, c caller) string
	want [7]string // in the order of columns
}

func runMatrix(t *testing.T, w *world, mechanism string, rows []matrixRow) {
	t.Helper()
	for _, r := range rows {
		for i, c := range w.callers() {
			t.Run(mechanism+"/"+r.op+"/"+columns[i], func(t *testing.T) {
				if got := r.do(t, c); got != r.want[i] {
					t.Errorf("%s %s as %s: got %s, want %s", mechanism, r.op, columns[i], got, r.want[i])
				}
			})
		}
	}
}

// TestPermissionMatrix runs the permission matrix of access/accesstest
// over HTTP; access runs the same table against the pure rules.
func TestPermissionMatrix(t *testing.T) {
	w := newWorld(t, nil)
	users := accesstest.Users{Alice: w.alice.userID, Bob: w.bob.userID, Carol: w.carol.userID, Dave: w.dave.userID}
	for _, setup := range accesstest.Matrix(users) {
		ids := w.setUp(t, setup)
		rows := make([]matrixRow, len(setup.Rows))
		for i, r := range setup.Rows {
			rows[i] = matrixRow{op: r.Name, do: w.matrixOp(setup, ids, r), want: r.Want}
		}
		runMatrix(t, w, setup.Name, rows)
	}
}

// setUp creates a setup's fixtures with the master key, then the holders
// pointing at them, then sets its CLP; it returns the fixtures' ids by name.
func (w *world) setUp(t *testing.T, s accesstest.Setup) map[string]string {
	ids := map[string]string{}
	for _, body := range s.Objects {
		ids[body["name"].(string)] = mustCreate(t, w.srv, s.Class, body)
	}
	for _, name := range s.Held {
		mustCreate(t, w.srv, "MxHold"+s.Kind, map[string]any{"name": "h-" + name, "target": ptr(s.Class, ids[name])})
	}
	if s.CLP != nil {
		setCLP(t, w.srv, s.Class, s.CLP)
	}
	return ids
}

// matrixOp is a row's request: see the Op constants of accesstest.
func (w *world) matrixOp(s accesstest.Setup, ids map[string]string, r accesstest.Row) func(t *testing.T, c caller) string {
	srv := w.srv
	base := "/classes/" + s.Class
	fresh := func(t *testing.T) string {
		body := r.Fresh
		if body == nil {
			body = s.Fresh
		}
		return mustCreate(t, srv, s.Class, body)
	}
	getID := ids[s.GetID]
	if r.On != "" {
		getID = ids[r.On]
	}
	switch r.Op {
	case accesstest.OpGet:
		return func(t *testing.T, c caller) string {
			res := srv.Do(t, "GET", base+"/"+getID, nil, c.headers)
			if !r.Fields || res.Status != 200 {
				return outcome(res)
			}
			return "fields:" + shown(res.Map(), s.Protected...)
		}
	case accesstest.OpFind:
		return w.matrixFind(s, r)
	case accesstest.OpCount:
		return func(t *testing.T, c caller) string {
			return countOutcome(srv.Do(t, "GET", base+"?count=1&limit=0&"+whereQ(map[string]any{"fixture": true}), nil, c.headers))
		}
	case accesstest.OpCreate:
		return func(t *testing.T, c caller) string { return outcome(srv.Do(t, "POST", base, s.Create, c.headers)) }
	case accesstest.OpUpdate:
		return func(t *testing.T, c caller) string {
			return outcome(srv.Do(t, "PUT", base+"/"+fresh(t), map[string]any{"n": 2}, c.headers))
		}
	case accesstest.OpDelete:
		return func(t *testing.T, c caller) string {
			return outcome(srv.Do(t, "DELETE", base+"/"+fresh(t), nil, c.headers))
		}
	case accesstest.OpAddField:
		return func(t *testing.T, c caller) string {
			return outcome(srv.Do(t, "PUT", base+"/"+fresh(t), map[string]any{"added_" + strings.ReplaceAll(c.name, " ", "_"): 1}, c.headers))
		}
	case accesstest.OpInclude:
		return w.matrixInclude(s, r)
	case accesstest.OpBatch:
		return func(t *testing.T, c caller) string {
			if r.Fields {
				res := srv.Do(t, "POST", "/batch", map[string]any{"requests": []any{breq("GET", "/parse"+base+"/"+getID, nil)}}, c.headers)
				items := batchItems(t, res)
				if obj, ok := items[0]["success"].(map[string]any); ok {
					return "fields:" + shown(obj, s.Protected...)
				}
				return batchOutcome(t, res)
			}
			return batchOutcome(t, srv.Do(t, "POST", "/batch", map[string]any{"requests": []any{
				breq("GET", "/parse"+base+"/"+getID, nil),
				breq("PUT", "/parse"+base+"/"+fresh(t), map[string]any{"n": 3}),
				breq("DELETE", "/parse"+base+"/"+fresh(t), nil),
			}}, c.headers))
		}
	}
	panic("unknown matrix op " + r.Op)
}

// matrixFind is a find row: ids, or with Fields which protected fields
// each result shows.
func (w *world) matrixFind(s accesstest.Setup, r accesstest.Row) func(t *testing.T, c caller) string {
	where := r.Where
	if where == nil {
		where = map[string]any{"fixture": true}
	}
	path := "/classes/" + s.Class + "?"
	if r.Order != "" {
		path += "order=" + r.Order + "&"
	}
	path += whereQ(where)
	return func(t *testing.T, c caller) string {
		res := w.srv.Do(t, "GET", path, nil, c.headers)
		if !r.Fields {
			return idsOutcome(res)
		}
		if res.Status != 200 {
			return outcome(res)
		}
		var parts []string
		for _, o := range results(res) {
			parts = append(parts, fmt.Sprintf("%s=%s", o["name"], shown(o, s.Protected...)))
		}
		return "fields:" + strings.Join(parts, ";")
	}
}

// matrixInclude finds the setup's holders with include=target: the names
// expanded, or with Fields which protected fields the one target shows.
func (w *world) matrixInclude(s accesstest.Setup, r accesstest.Row) func(t *testing.T, c caller) string {
	return func(t *testing.T, c caller) string {
		res := w.srv.Do(t, "GET", "/classes/MxHold"+s.Kind+"?include=target", nil, c.headers)
		if !r.Fields {
			return includedOutcome(res, "target")
		}
		rs := results(res)
		if res.Status != 200 || len(rs) != 1 {
			return outcome(res)
		}
		m, _ := rs[0]["target"].(map[string]any)
		if m["__type"] != "Object" {
			return "not expanded"
		}
		return "fields:" + shown(m, s.Protected...)
	}
}

// TestPermissionMissingCLPOperation: once a class has a stored CLP, an
// operation it does not name is open to nobody but the master key.
func TestPermissionMissingCLPOperation(t *testing.T) {
	w := newWorld(t, nil)
	id := mustCreate(t, w.srv, "MxPartial", map[string]any{"n": 1})
	setCLP(t, w.srv, "MxPartial", map[string]any{"get": everyone, "find": everyone})
	runScenarios(t, w.srv, []scenario{
		{name: "get named", path: "/classes/MxPartial/" + id, headers: w.alice.headers, expectedStatus: 200},
		{name: "find named", path: "/classes/MxPartial", headers: w.alice.headers, expectedStatus: 200},
		{name: "count missing", path: "/classes/MxPartial?count=1&limit=0", headers: w.alice.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "create missing", method: "POST", path: "/classes/MxPartial", body: map[string]any{"n": 2}, headers: w.alice.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "update missing", method: "PUT", path: "/classes/MxPartial/" + id, body: map[string]any{"n": 2}, headers: w.alice.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "delete missing", method: "DELETE", path: "/classes/MxPartial/" + id, headers: w.alice.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "master unaffected", method: "PUT", path: "/classes/MxPartial/" + id, body: map[string]any{"n": 3}, headers: servertest.Master(), expectedStatus: 200},
	})
}

// TestPermissionCountCLP: a count-only query (limit=0) needs the count
// operation, not find; a count with results needs both.
func TestPermissionCountCLP(t *testing.T) {
	w := newWorld(t, nil)
	mustCreate(t, w.srv, "MxCount", map[string]any{"n": 1})
	setCLP(t, w.srv, "MxCount", accesstest.AllOps(everyone, map[string]any{"find": map[string]any{}}))
	runScenarios(t, w.srv, []scenario{
		{name: "count only", path: "/classes/MxCount?count=1&limit=0", headers: w.alice.headers, expectedStatus: 200, expectedContains: []string{`"count":1`}},
		{name: "find refused", path: "/classes/MxCount", headers: w.alice.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "count with results needs find", path: "/classes/MxCount?count=1", headers: w.alice.headers, expectedStatus: 400, check: codeIs(119)},
	})
}

// TestPermissionSubqueries: $inQuery, $notInQuery, $select, $relatedTo and
// nested subqueries see only what the caller may read.
func TestPermissionSubqueries(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a := w.alice.userID
	ids := map[string]string{}
	for name, acl := range map[string]any{
		"pub":  map[string]any{"*": map[string]any{"read": true}},
		"own":  map[string]any{a: rw()},
		"role": map[string]any{"role:Parent": rw()},
	} {
		ids[name] = mustCreate(t, srv, "SqAcl", map[string]any{"name": name, "code": "c-" + name, "ACL": acl})
		mustCreate(t, srv, "SqHold", map[string]any{"name": "h-" + name, "target": ptr("SqAcl", ids[name]), "code": "c-" + name})
	}
	bag := mustCreate(t, srv, "SqBag", map[string]any{"items": addRelation(ptr("SqAcl", ids["pub"]), ptr("SqAcl", ids["own"]), ptr("SqAcl", ids["role"]))})
	mustCreate(t, srv, "SqOuter", map[string]any{"name": "o-none", "code": "x"})
	for _, h := range []string{"h-pub", "h-own", "h-role"} {
		res := srv.Do(t, "GET", "/classes/SqHold?"+whereQ(map[string]any{"name": h}), nil, servertest.Master())
		mustCreate(t, srv, "SqOuter", map[string]any{"name": "o-" + h, "hold": ptr("SqHold", results(res)[0]["objectId"].(string))})
	}
	// Pointer permissions and protected fields on subquery classes.
	for name, owner := range map[string]string{"alice": a, "bob": w.bob.userID} {
		id := mustCreate(t, srv, "SqPtr", map[string]any{"name": "p-" + name, "owner": ptr("_User", owner)})
		mustCreate(t, srv, "SqPtrHold", map[string]any{"name": "ph-" + name, "target": ptr("SqPtr", id)})
	}
	setCLP(t, srv, "SqPtr", accesstest.AllOps(map[string]any{}, map[string]any{"create": everyone, "readUserFields": []any{"owner"}}))
	mustCreate(t, srv, "SqProt", map[string]any{"name": "secretive", "secret": "c-pub"})
	setCLP(t, srv, "SqProt", accesstest.AllOps(everyone, map[string]any{"protectedFields": map[string]any{"*": []any{"secret"}}}))
	mustCreate(t, srv, "SqAuth", map[string]any{"name": "x"})
	setCLP(t, srv, "SqAuth", accesstest.AllOps(everyone, map[string]any{"find": map[string]any{"requiresAuthentication": true}}))

	inQuery := func(cls string, where map[string]any) map[string]any {
		return map[string]any{"$inQuery": map[string]any{"className": cls, "where": where}}
	}
	sel := func(cls, key string) map[string]any {
		return map[string]any{"$select": map[string]any{"query": map[string]any{"className": cls, "where": map[string]any{}}, "key": key}}
	}
	type sq struct {
		name  string
		path  string
		cells [7]string
	}
	rows := []sq{
		{"$inQuery", "/classes/SqHold?" + whereQ(map[string]any{"target": inQuery("SqAcl", map[string]any{})}),
			[7]string{"ids:h-pub", "ids:h-own,h-pub", "ids:h-pub", "ids:h-pub,h-role", "ids:h-pub,h-role", "ids:h-own,h-pub,h-role", "ids:h-own,h-pub,h-role"}},
		{"$notInQuery", "/classes/SqHold?" + whereQ(map[string]any{"target": map[string]any{"$notInQuery": map[string]any{"className": "SqAcl", "where": map[string]any{"name": "pub"}}}}),
			// The holders are public; only which targets count as matching depends on the caller.
			[7]string{"ids:h-own,h-role", "ids:h-own,h-role", "ids:h-own,h-role", "ids:h-own,h-role", "ids:h-own,h-role", "ids:h-own,h-role", "ids:h-own,h-role"}},
		{"nested $inQuery", "/classes/SqOuter?" + whereQ(map[string]any{"hold": inQuery("SqHold", map[string]any{"target": inQuery("SqAcl", map[string]any{})})}),
			[7]string{"ids:o-h-pub", "ids:o-h-own,o-h-pub", "ids:o-h-pub", "ids:o-h-pub,o-h-role", "ids:o-h-pub,o-h-role", "ids:o-h-own,o-h-pub,o-h-role", "ids:o-h-own,o-h-pub,o-h-role"}},
		{"$select", "/classes/SqHold?" + whereQ(map[string]any{"code": sel("SqAcl", "code")}),
			[7]string{"ids:h-pub", "ids:h-own,h-pub", "ids:h-pub", "ids:h-pub,h-role", "ids:h-pub,h-role", "ids:h-own,h-pub,h-role", "ids:h-own,h-pub,h-role"}},
		{"$relatedTo", "/classes/SqAcl?" + whereQ(map[string]any{"$relatedTo": map[string]any{"object": ptr("SqBag", bag), "key": "items"}}),
			[7]string{"ids:pub", "ids:own,pub", "ids:pub", "ids:pub,role", "ids:pub,role", "ids:own,pub,role", "ids:own,pub,role"}},
		{"$inQuery into pointer permissions", "/classes/SqPtrHold?" + whereQ(map[string]any{"target": inQuery("SqPtr", map[string]any{})}),
			[7]string{"ids:", "ids:ph-alice", "ids:ph-bob", "ids:", "ids:", "ids:ph-alice,ph-bob", "ids:ph-alice,ph-bob"}},
		{"$select over pointer permissions", "/classes/SqPtr?" + whereQ(map[string]any{"name": sel("SqPtr", "name")}),
			[7]string{"ids:", "ids:p-alice", "ids:p-bob", "ids:", "ids:", "ids:p-alice,p-bob", "ids:p-alice,p-bob"}},
		{"subquery where on a protected field", "/classes/SqHold?" + whereQ(map[string]any{"code": map[string]any{"$select": map[string]any{"query": map[string]any{"className": "SqProt", "where": map[string]any{"secret": "c-pub"}}, "key": "name"}}}),
			[7]string{"400/119", "400/119", "400/119", "400/119", "400/119", "ids:", "ids:"}},
		{"$select of a protected field", "/classes/SqHold?" + whereQ(map[string]any{"code": sel("SqProt", "secret")}),
			[7]string{"400/119", "400/119", "400/119", "400/119", "400/119", "ids:h-pub", "ids:h-pub"}},
		{"$select of a user's email", "/classes/SqHold?" + whereQ(map[string]any{"code": sel("_User", "email")}),
			[7]string{"400/119", "400/119", "400/119", "400/119", "400/119", "ids:", "ids:"}},
		{"$select of an internal key", "/classes/SqHold?" + whereQ(map[string]any{"code": sel("_User", "_hashed_password")}),
			[7]string{"400/105", "400/105", "400/105", "400/105", "400/105", "ids:", "ids:"}},
		{"$select of authData", "/classes/SqHold?" + whereQ(map[string]any{"code": sel("_User", "authData.facebook.access_token")}),
			[7]string{"400/102", "400/102", "400/102", "400/102", "400/102", "ids:", "ids:"}},
		{"$inQuery into a class needing authentication", "/classes/SqHold?" + whereQ(map[string]any{"target": inQuery("SqAuth", map[string]any{})}),
			[7]string{"404/101", "ids:", "ids:", "ids:", "ids:", "ids:", "ids:"}},
		{"$inQuery into _Session", "/classes/SqHold?" + whereQ(map[string]any{"target": inQuery("_Session", map[string]any{})}),
			[7]string{"400/209", "ids:", "ids:", "ids:", "ids:", "ids:", "ids:"}},
	}
	for _, r := range rows {
		for i, c := range w.callers() {
			t.Run(r.name+"/"+columns[i], func(t *testing.T) {
				if got := idsOutcome(srv.Do(t, "GET", r.path, nil, c.headers)); got != r.cells[i] {
					t.Errorf("%s as %s: got %s, want %s", r.name, columns[i], got, r.cells[i])
				}
			})
		}
	}

	// A subquery on sessions finds only the caller's own.
	aliceSess, bobSess := w.sessionID(t, w.alice), w.sessionID(t, w.bob)
	mustCreate(t, srv, "SqSess", map[string]any{"name": "s-alice", "s": ptr("_Session", aliceSess)})
	mustCreate(t, srv, "SqSess", map[string]any{"name": "s-bob", "s": ptr("_Session", bobSess)})
	path := "/classes/SqSess?" + whereQ(map[string]any{"s": inQuery("_Session", map[string]any{})})
	for _, tc := range []struct {
		c    caller
		want string
	}{{w.alice, "ids:s-alice"}, {w.bob, "ids:s-bob"}, {w.carol, "ids:"}, {w.master, "ids:s-alice,s-bob"}} {
		if got := idsOutcome(srv.Do(t, "GET", path, nil, tc.c.headers)); got != tc.want {
			t.Errorf("$inQuery _Session as %s: got %s, want %s", tc.c.name, got, tc.want)
		}
	}
}

// TestPermissionInclude: include drops the targets the caller cannot
// read, in arrays and at nested levels, and strips what they may not see.
func TestPermissionInclude(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a := w.alice.userID
	pub := mustCreate(t, srv, "IncT", map[string]any{"name": "pub", "ACL": map[string]any{"*": map[string]any{"read": true}}})
	own := mustCreate(t, srv, "IncT", map[string]any{"name": "own", "ACL": map[string]any{a: rw()}})
	role := mustCreate(t, srv, "IncT", map[string]any{"name": "role", "ACL": map[string]any{"role:Parent": rw()}})
	mid := mustCreate(t, srv, "IncMid", map[string]any{"name": "mid", "t": ptr("IncT", own)})
	h := mustCreate(t, srv, "IncHold", map[string]any{
		"many": []any{ptr("IncT", pub), ptr("IncT", own), ptr("IncT", role), "plain"},
		"mid":  ptr("IncMid", mid),
		"user": ptr("_User", a),
		"sess": ptr("_Session", w.sessionID(t, w.alice)),
	})
	get := func(c caller, include string) map[string]any {
		res := srv.Do(t, "GET", "/classes/IncHold/"+h+"?include="+include, nil, c.headers)
		if res.Status != 200 {
			t.Fatalf("include %s as %s: %d %s", include, c.name, res.Status, res.Body)
		}
		return res.Map()
	}
	names := func(v any) string {
		var out []string
		for _, e := range asList(v) {
			switch m := e.(type) {
			case map[string]any:
				if m["__type"] == "Object" {
					out = append(out, m["name"].(string))
				} else {
					out = append(out, "pointer")
				}
			default:
				out = append(out, fmt.Sprint(e))
			}
		}
		return strings.Join(out, ",")
	}
	for i, want := range [7]string{"pub,plain", "pub,own,plain", "pub,plain", "pub,role,plain", "pub,role,plain", "pub,own,role,plain", "pub,own,role,plain"} {
		c := w.callers()[i]
		if got := names(get(c, "many")["many"]); got != want {
			t.Errorf("include many as %s: %s, want %s", c.name, got, want)
		}
	}
	// Nested: mid is public, mid.t is alice's.
	for i, want := range [7]string{"", "own", "", "", "", "own", "own"} {
		c := w.callers()[i]
		m := get(c, "mid.t")["mid"].(map[string]any)
		if m["__type"] != "Object" {
			t.Errorf("include mid.t as %s: mid not expanded: %v", c.name, m)
			continue
		}
		if got := names(m["t"]); got != want {
			t.Errorf("include mid.t as %s: t = %q, want %q", c.name, got, want)
		}
	}
	// An included user hides email (and authData) from everyone but themselves.
	for i, want := range [7]string{"", "email", "", "", "", "email", "email"} {
		c := w.callers()[i]
		u, _ := get(c, "user")["user"].(map[string]any)
		if u["__type"] != "Object" || u["username"] != "alice" {
			t.Errorf("include user as %s: %v", c.name, u)
		}
		if got := shown(u, "email", "password", "sessionToken", "authData"); got != want {
			t.Errorf("include user as %s shows %q, want %q", c.name, got, want)
		}
	}
	// An included session is shown only to its user (and the master key).
	for i, want := range [7]string{"dropped", "expanded", "dropped", "dropped", "dropped", "expanded", "expanded"} {
		c := w.callers()[i]
		s, ok := get(c, "sess")["sess"].(map[string]any)
		got := "dropped"
		if ok && s["__type"] == "Object" {
			got = "expanded"
		} else if ok {
			got = "pointer"
		}
		if got != want {
			t.Errorf("include sess as %s: %s, want %s", c.name, got, want)
		}
	}
}

// TestPermissionBatchTransaction: a transaction obeys the same rules, and
// a refused item leaves nothing written.
func TestPermissionBatchTransaction(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	mine := mustCreate(t, srv, "BtT", map[string]any{"n": 1, "ACL": map[string]any{w.alice.userID: rw()}})
	open := mustCreate(t, srv, "BtT", map[string]any{"n": 1})
	forParent := mustCreate(t, srv, "BtT", map[string]any{"n": 1, "ACL": map[string]any{"role:Parent": rw()}})
	if got := outcome(srv.Do(t, "GET", "/classes/BtT/"+forParent, nil, w.bob.headers)); got != "404/101" {
		t.Errorf("bob reads a Parent object before joining: %s", got)
	}
	body := map[string]any{"transaction": true, "requests": []any{
		breq("PUT", "/parse/classes/BtT/"+open, map[string]any{"n": 2}),
		breq("PUT", "/parse/classes/BtT/"+mine, map[string]any{"n": 2}),
	}}
	before := snapshot(t, srv, "BtT")
	res := srv.Do(t, "POST", "/batch", body, w.bob.headers)
	if res.Status != 404 || res.Map()["code"] != 101.0 {
		t.Errorf("bob's transaction touching alice's object: %d %s, want 404/101", res.Status, res.Body)
	}
	if after := snapshot(t, srv, "BtT"); after != before {
		t.Errorf("a refused transaction wrote:\nbefore %s\nafter  %s", before, after)
	}
	if res := srv.Do(t, "POST", "/batch", body, w.alice.headers); res.Status != 200 {
		t.Errorf("alice's transaction: %d %s", res.Status, res.Body)
	}
	// A role membership changed by a transaction counts at once.
	res = srv.Do(t, "POST", "/batch", map[string]any{"transaction": true, "requests": []any{
		breq("PUT", "/parse/classes/_Role/"+w.parentRoleID, map[string]any{"users": addRelation(ptr("_User", w.bob.userID))}),
		breq("PUT", "/parse/classes/BtT/"+open, map[string]any{"n": 3}),
	}}, servertest.Master())
	if res.Status != 200 {
		t.Fatalf("role transaction: %d %s", res.Status, res.Body)
	}
	if got := outcome(srv.Do(t, "GET", "/classes/BtT/"+forParent, nil, w.bob.headers)); got != "200" {
		t.Errorf("bob, now in Parent, reads a Parent object: %s", got)
	}
	// The built-in routes (/users, /roles, /sessions) do not join transactions.
	before = snapshot(t, srv, "_User")
	res = srv.Do(t, "POST", "/batch", map[string]any{"transaction": true, "requests": []any{
		breq("DELETE", "/parse/users/"+w.alice.userID, nil),
	}}, w.bob.headers)
	if got := outcome(res); got != "400/107" {
		t.Errorf("a transaction holding DELETE /users: %s %s, want 400/107", got, res.Body)
	}
	// Through /classes/_User the user rules hold inside a transaction too.
	res = srv.Do(t, "POST", "/batch", map[string]any{"transaction": true, "requests": []any{
		breq("DELETE", "/parse/classes/_User/"+w.alice.userID, nil),
	}}, w.bob.headers)
	if got := outcome(res); got != "400/206" {
		t.Errorf("bob deleting alice in a transaction: %s %s, want 400/206", got, res.Body)
	}
	if after := snapshot(t, srv, "_User"); after != before {
		t.Errorf("refused user transactions wrote")
	}
}

// TestPermissionSpecialUser: the _User rows of the specification's table.
func TestPermissionSpecialUser(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	// open's ACL grants everyone write: still only open may change open.
	open := w.signUp(t, "open")
	if res := srv.Do(t, "PUT", "/users/"+open.userID, map[string]any{"ACL": public()}, servertest.Master()); res.Status != 200 {
		t.Fatalf("open ACL: %d %s", res.Status, res.Body)
	}
	getAlice := func(t *testing.T, c caller) string {
		res := srv.Do(t, "GET", "/users/"+w.alice.userID, nil, c.headers)
		if res.Status != 200 {
			return outcome(res)
		}
		return "fields:" + shown(res.Map(), "username", "email", "sessionToken")
	}
	findUsers := func(t *testing.T, c caller) string {
		res := srv.Do(t, "GET", "/users?order=username", nil, c.headers)
		if res.Status != 200 {
			return outcome(res)
		}
		var names []string
		for _, r := range results(res) {
			n := r["username"].(string)
			if _, ok := r["email"]; ok {
				n += "+email"
			}
			names = append(names, n)
		}
		return "ids:" + strings.Join(names, ",")
	}
	update := func(target *caller) func(t *testing.T, c caller) string {
		return func(t *testing.T, c caller) string {
			return outcome(srv.Do(t, "PUT", "/users/"+target.userID, map[string]any{"nick": c.name}, c.headers))
		}
	}
	deleteOther := func(t *testing.T, c caller) string {
		victim := w.signUp(t, "victim"+strings.ReplaceAll(c.name, " ", ""))
		return outcome(srv.Do(t, "DELETE", "/users/"+victim.userID, nil, c.headers))
	}
	runMatrix(t, w, "_User", []matrixRow{
		{"get", getAlice, [7]string{"fields:username", "fields:email,sessionToken,username", "fields:username", "fields:username", "fields:username", "fields:email,username", "fields:email,username"}},
		{"find", findUsers, [7]string{
			"ids:alice,bob,carol,dave,open",
			"ids:alice+email,bob,carol,dave,open",
			"ids:alice,bob+email,carol,dave,open",
			"ids:alice,bob,carol+email,dave,open",
			"ids:alice,bob,carol,dave+email,open",
			"ids:alice+email,bob+email,carol+email,dave+email,open+email",
			"ids:alice+email,bob+email,carol+email,dave+email,open+email"}},
		{"order by email", func(t *testing.T, c caller) string {
			return outcome(srv.Do(t, "GET", "/users?order=email", nil, c.headers))
		}, [7]string{"400/119", "400/119", "400/119", "400/119", "400/119", "200", "200"}},
		{"update alice", update(&w.alice), [7]string{"400/206", "200", "400/206", "400/206", "400/206", "200", "400/119"}},
		{"update a user whose ACL grants everyone write", update(&open), [7]string{"400/206", "400/206", "400/206", "400/206", "400/206", "200", "400/119"}},
		{"delete another user", deleteOther, [7]string{"400/206", "400/206", "400/206", "400/206", "400/206", "200", "400/119"}},
	})

	// A read ACL never hides the logged-in user from themselves.
	hidden := w.signUp(t, "hidden")
	if res := srv.Do(t, "PUT", "/users/"+hidden.userID, map[string]any{"ACL": map[string]any{w.bob.userID: map[string]any{"read": true}}}, servertest.Master()); res.Status != 200 {
		t.Fatalf("hidden ACL: %d %s", res.Status, res.Body)
	}
	where := "/users?" + whereQ(map[string]any{"username": "hidden"})
	for _, tc := range []struct {
		c        caller
		get, ids string
	}{
		{hidden, "200", "ids:hidden"},
		{w.bob, "200", "ids:hidden"},
		{w.alice, "404/101", "ids:"},
		{w.public, "404/101", "ids:"},
	} {
		if got := outcome(srv.Do(t, "GET", "/users/"+hidden.userID, nil, tc.c.headers)); got != tc.get {
			t.Errorf("GET hidden as %s: %s, want %s", tc.c.name, got, tc.get)
		}
		res := srv.Do(t, "GET", where, nil, tc.c.headers)
		var names []string
		for _, r := range results(res) {
			names = append(names, r["username"].(string))
		}
		if got := "ids:" + strings.Join(names, ","); got != tc.ids {
			t.Errorf("find hidden as %s: %s, want %s", tc.c.name, got, tc.ids)
		}
	}
	if res := srv.Do(t, "GET", "/users/me", nil, hidden.headers); res.Status != 200 {
		t.Errorf("/users/me of a user whose ACL hides them: %d %s", res.Status, res.Body)
	}

	// A user may delete themselves; their sessions go with them.
	gone := w.signUp(t, "gone")
	if got := outcome(srv.Do(t, "DELETE", "/users/"+gone.userID, nil, gone.headers)); got != "200" {
		t.Errorf("self delete: %s", got)
	}
	if got := outcome(srv.Do(t, "GET", "/classes/Anything", nil, gone.headers)); got != "400/209" {
		t.Errorf("the deleted user's token still works: %s", got)
	}
}

// TestPermissionSpecialUserCLP: the _User CLP still applies, except to
// login and /users/me.
func TestPermissionSpecialUserCLP(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	a := w.alice
	login := scenario{name: "login ignores the get CLP", method: "POST", path: "/login",
		body: map[string]any{"username": "alice", "password": password("alice")}, headers: servertest.App(), expectedStatus: 200}
	me := scenario{name: "/users/me ignores the get CLP", path: "/users/me", headers: a.headers, expectedStatus: 200}

	setCLP(t, srv, "_User", accesstest.AllOps(everyone, map[string]any{"find": map[string]any{}}))
	runScenarios(t, srv, []scenario{
		{name: "a stored CLP keeps emails protected", path: "/users/" + w.bob.userID, headers: a.headers, expectedStatus: 200,
			expectedContains: []string{`"username":"bob"`}, notExpectedContains: []string{"bob@example.com"}},
		{name: "find disabled", path: "/users", headers: a.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "find disabled even for yourself", path: "/users?" + whereQ(map[string]any{"username": "alice"}), headers: a.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "get still allowed", path: "/users/" + w.bob.userID, headers: a.headers, expectedStatus: 200},
		{name: "master unaffected", path: "/users", headers: servertest.Master(), expectedStatus: 200},
	})
	setCLP(t, srv, "_User", accesstest.AllOps(everyone, map[string]any{"get": map[string]any{}, "create": map[string]any{}, "update": map[string]any{}, "delete": map[string]any{}}))
	runScenarios(t, srv, []scenario{
		login, me,
		{name: "get disabled", path: "/users/" + a.userID, headers: a.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "sign-up governed by create", method: "POST", path: "/users", body: map[string]any{"username": "newbie", "password": password("newbie")}, headers: servertest.App(), expectedStatus: 400, check: codeIs(119)},
		{name: "update yourself governed by update", method: "PUT", path: "/users/" + a.userID, body: map[string]any{"nick": "x"}, headers: a.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "delete yourself governed by delete", method: "DELETE", path: "/users/" + a.userID, headers: a.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "master signs up", method: "POST", path: "/users", body: map[string]any{"username": "newbie", "password": password("newbie")}, headers: servertest.Master(), expectedStatus: 201},
	})
}

// TestPermissionSpecialSession: a user sees and changes only their own
// sessions; without a session there is nothing to see.
func TestPermissionSpecialSession(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	bobSess := w.sessionID(t, w.bob)
	listOwners := func(t *testing.T, c caller) string {
		res := srv.Do(t, "GET", "/sessions", nil, c.headers)
		if res.Status != 200 {
			return outcome(res)
		}
		owners := map[string]bool{}
		for _, r := range results(res) {
			u, _ := r["user"].(map[string]any)
			for _, x := range w.callers() {
				if x.userID != "" && u["objectId"] == x.userID {
					owners[x.name] = true
				}
			}
		}
		var out []string
		for k := range owners {
			out = append(out, k)
		}
		sort.Strings(out)
		return "ids:" + strings.Join(out, ",")
	}
	getBob := func(t *testing.T, c caller) string {
		return outcome(srv.Do(t, "GET", "/sessions/"+bobSess, nil, c.headers))
	}
	putBob := func(t *testing.T, c caller) string {
		return outcome(srv.Do(t, "PUT", "/sessions/"+bobSess, map[string]any{"note": c.name}, c.headers))
	}
	deleteBob := func(t *testing.T, c caller) string {
		// A fresh session of bob's each time.
		res := srv.Do(t, "POST", "/sessions", map[string]any{}, w.bob.headers)
		id, _ := res.Map()["objectId"].(string)
		return outcome(srv.Do(t, "DELETE", "/sessions/"+id, nil, c.headers))
	}
	runMatrix(t, w, "_Session", []matrixRow{
		{"find", listOwners, [7]string{"400/209", "ids:alice", "ids:bob", "ids:carol", "ids:dave", "ids:alice,bob,carol,dave", "ids:alice,bob,carol,dave"}},
		{"get bob's", getBob, [7]string{"400/209", "404/101", "200", "404/101", "404/101", "200", "200"}},
		{"update bob's", putBob, [7]string{"400/209", "404/101", "200", "404/101", "404/101", "200", "400/119"}},
		{"delete bob's", deleteBob, [7]string{"400/209", "404/101", "200", "404/101", "404/101", "200", "400/119"}},
	})
}

// TestPermissionSpecialInstallation: the _Installation rows of the
// specification's table.
func TestPermissionSpecialInstallation(t *testing.T) {
	w := newWorld(t, nil)
	srv := w.srv
	create := func(id string, acl map[string]any) string {
		body := map[string]any{"installationId": id, "deviceType": "ios"}
		if acl != nil {
			body["ACL"] = acl
		}
		return mustPost(t, srv, "/installations", body, servertest.Master())
	}
	instOpen := create("11111111-1111-1111-1111-111111111111", nil)
	instAlice := create("22222222-2222-2222-2222-222222222222", map[string]any{w.alice.userID: rw()})
	// Every operation but find is closed by the CLP.
	setCLP(t, srv, "_Installation", accesstest.AllOps(map[string]any{}, map[string]any{"find": everyone}))
	runScenarios(t, srv, []scenario{
		{name: "get ignores the CLP", path: "/installations/" + instOpen, headers: w.bob.headers, expectedStatus: 200},
		{name: "get obeys the ACL", path: "/installations/" + instAlice, headers: w.bob.headers, expectedStatus: 404, check: codeIs(101)},
		{name: "owner gets", path: "/installations/" + instAlice, headers: w.alice.headers, expectedStatus: 200},
		{name: "find needs master", path: "/installations", headers: w.alice.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "master finds", path: "/installations", headers: servertest.Master(), expectedStatus: 200, expectedContains: []string{instOpen, instAlice}},
		{name: "find by installationId", path: "/installations?" + whereQ(map[string]any{"installationId": "11111111-1111-1111-1111-111111111111"}), headers: w.bob.headers, expectedStatus: 200},
		{name: "create ignores the CLP", method: "POST", path: "/installations", body: map[string]any{"installationId": "33333333-3333-3333-3333-333333333333", "deviceType": "android"}, headers: w.public.headers, expectedStatus: 201},
		{name: "update ignores the CLP", method: "PUT", path: "/installations/" + instOpen, body: map[string]any{"badge": 1}, headers: w.bob.headers, expectedStatus: 200},
		{name: "update obeys the ACL", method: "PUT", path: "/installations/" + instAlice, body: map[string]any{"badge": 1}, headers: w.bob.headers, expectedStatus: 404, check: codeIs(101)},
		{name: "delete needs master", method: "DELETE", path: "/installations/" + instOpen, headers: w.alice.headers, expectedStatus: 400, check: codeIs(119)},
		{name: "master deletes", method: "DELETE", path: "/installations/" + instOpen, headers: servertest.Master(), expectedStatus: 200},
	})
}
