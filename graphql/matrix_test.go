package graphql_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/quarrydata/quarry/access/accesstest"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// The permission matrix of access/accesstest through GraphQL: every cell
// whose operation GraphQL has must come out as over REST (transport's
// TestPermissionMatrix runs the same table): the same objects, counts and
// protected fields, and a refusal with the same Parse code (GraphQL has
// no HTTP status, so "404/101" reads "error:101").
//
// Ops without a GraphQL form, left out:
//   - accesstest.OpAddField: an update input holds only the schema's
//     fields, so GraphQL cannot add one;
//   - accesstest.OpBatch: GraphQL has no /batch (a document's mutations
//     are separate operations, not one batch).
var noGraphQLForm = map[string]bool{accesstest.OpAddField: true, accesstest.OpBatch: true}

const readOnlyMaster = "test-ro-master"

// matrixCaller is one column of the matrix.
type matrixCaller struct {
	name    string
	headers map[string]string
}

// TestPermissionMatrixGraphQL runs the matrix's cells through GraphQL.
func TestPermissionMatrixGraphQL(t *testing.T) {
	srv := start(t, func(o *config.Options) { o.ReadOnlyMasterKey = readOnlyMaster })
	m, app := servertest.Master(), servertest.App()
	ids := map[string]string{}
	callers := [7]matrixCaller{{name: "public", headers: app}}
	for i, name := range []string{"alice", "bob", "carol", "dave"} {
		res := srv.Do(t, "POST", "/users", map[string]any{"username": name, "password": "pw-" + name}, app).Map()
		ids[name] = res["objectId"].(string)
		callers[i+1] = matrixCaller{name, with(app, "X-Parse-Session-Token", res["sessionToken"].(string))}
	}
	callers[5] = matrixCaller{"master", m}
	callers[6] = matrixCaller{"read-only master", with(app, "X-Parse-Master-Key", readOnlyMaster)}
	readable := map[string]any{"*": map[string]any{"read": true}}
	child := srv.Do(t, "POST", "/roles", map[string]any{"name": accesstest.ChildRole, "ACL": readable,
		"users": relationAdd("_User", ids["dave"])}, m).Map()["objectId"].(string)
	srv.Do(t, "POST", "/roles", map[string]any{"name": accesstest.ParentRole, "ACL": readable,
		"users": relationAdd("_User", ids["carol"]), "roles": relationAdd("_Role", child)}, m)

	users := accesstest.Users{Alice: ids["alice"], Bob: ids["bob"], Carol: ids["carol"], Dave: ids["dave"]}
	ran := 0
	for _, setup := range accesstest.Matrix(users) {
		fixtures := setUpMatrix(t, srv, setup)
		for _, row := range setup.Rows {
			if noGraphQLForm[row.Op] {
				continue
			}
			op := matrixOp(srv, setup, fixtures, row)
			for i, c := range callers {
				want := graphQLOutcome(row.Want[i])
				t.Run(setup.Name+"/"+row.Name+"/"+accesstest.Columns[i], func(t *testing.T) {
					if got := op(t, c); got != want {
						t.Errorf("got %s, want %s (REST: %s)", got, want, row.Want[i])
					}
				})
				ran++
			}
		}
	}
	if ran == 0 {
		t.Fatal("no cell ran")
	}
}

func relationAdd(class string, ids ...string) map[string]any {
	var objects []any
	for _, id := range ids {
		objects = append(objects, map[string]any{"__type": "Pointer", "className": class, "objectId": id})
	}
	return map[string]any{"__op": "AddRelation", "objects": objects}
}

// setUpMatrix creates a setup's fixtures, holders and CLP over REST with
// the master key, as transport's matrix does; it returns the fixtures' ids
// by name.
func setUpMatrix(t *testing.T, srv *servertest.Server, s accesstest.Setup) map[string]string {
	ids := map[string]string{}
	create := func(class string, body map[string]any) string {
		res := srv.Do(t, "POST", "/classes/"+class, body, servertest.Master())
		id, _ := res.Map()["objectId"].(string)
		if id == "" {
			t.Fatalf("create %s: %d %s", class, res.Status, res.Body)
		}
		return id
	}
	for _, body := range s.Objects {
		ids[body["name"].(string)] = create(s.Class, body)
	}
	for _, name := range s.Held {
		create("MxHold"+s.Kind, map[string]any{"name": "h-" + name,
			"target": map[string]any{"__type": "Pointer", "className": s.Class, "objectId": ids[name]}})
	}
	if s.CLP != nil {
		res := srv.Do(t, "PUT", "/schemas/"+s.Class, map[string]any{"className": s.Class, "classLevelPermissions": s.CLP}, servertest.Master())
		if res.Status != 200 {
			t.Fatalf("CLP %s: %d %s", s.Class, res.Status, res.Body)
		}
	}
	ids["fresh"] = "" // made per cell
	return ids
}

// graphQLOutcome is a REST outcome as GraphQL shows it: a refusal by its
// Parse code alone, any success as "ok".
func graphQLOutcome(rest string) string {
	if status, code, ok := strings.Cut(rest, "/"); ok && len(status) == 3 {
		return "error:" + code
	}
	if rest == "200" || rest == "201" {
		return "ok"
	}
	return rest
}

// lowerFirst and pluralOf follow the generated names for the matrix's
// class names (MxAcl -> mxAcl, mxAcls).
func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

func pluralOf(s string) string { return lowerFirst(s) + "s" }

// matrixOp is a row's GraphQL request; it returns the cell's outcome.
func matrixOp(srv *servertest.Server, s accesstest.Setup, ids map[string]string, r accesstest.Row) func(*testing.T, matrixCaller) string {
	single, many := lowerFirst(s.Class), pluralOf(s.Class)
	protected := strings.Join(s.Protected, " ")
	getID := ids[s.GetID]
	if r.On != "" {
		getID = ids[r.On]
	}
	fresh := func(t *testing.T) string {
		body := r.Fresh
		if body == nil {
			body = s.Fresh
		}
		res := srv.Do(t, "POST", "/classes/"+s.Class, body, servertest.Master())
		return res.Map()["objectId"].(string)
	}
	ask := func(t *testing.T, c matrixCaller, query string, vars map[string]any) reply {
		t.Helper()
		r := post(t, srv, c.headers, query, vars)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return r
	}
	refused := func(r reply) (string, bool) {
		if e := r.get("errors.0"); e.Exists() {
			if code := e.Get("extensions.code").Int(); code != 0 {
				return fmt.Sprintf("error:%d", code), true
			}
			return "error:" + e.Get("message").String(), true
		}
		return "", false
	}
	switch r.Op {
	case accesstest.OpGet:
		return func(t *testing.T, c matrixCaller) string {
			res := ask(t, c, fmt.Sprintf(`query($id: ID!) { o: %s(id: $id) { name %s } }`, single, protected), map[string]any{"id": getID})
			if out, no := refused(res); no {
				return out
			}
			if !r.Fields {
				return "ok"
			}
			return "fields:" + shownFields(res.get("data.o").Map(), s.Protected)
		}
	case accesstest.OpFind:
		where := map[string]any{}
		for k, v := range r.Where {
			where[k] = map[string]any{"equalTo": v}
		}
		if r.Where == nil {
			where["fixture"] = map[string]any{"equalTo": true}
		}
		order := ""
		if r.Order != "" {
			dir := "_ASC"
			field := r.Order
			if strings.HasPrefix(field, "-") {
				field, dir = field[1:], "_DESC"
			}
			order = ", order: [" + field + dir + "]"
		}
		return func(t *testing.T, c matrixCaller) string {
			res := ask(t, c, fmt.Sprintf(`query($where: %sWhereInput) { c: %s(where: $where%s) { edges { node { name %s } } } }`,
				s.Class, many, order, protected), map[string]any{"where": where})
			if out, no := refused(res); no {
				return out
			}
			var names, parts []string
			for _, e := range res.get("data.c.edges").Array() {
				n := e.Get("node").Map()
				names = append(names, n["name"].String())
				parts = append(parts, n["name"].String()+"="+shownFields(n, s.Protected))
			}
			if r.Fields {
				return "fields:" + strings.Join(parts, ";")
			}
			sort.Strings(names)
			return "ids:" + strings.Join(names, ",")
		}
	case accesstest.OpCount:
		return func(t *testing.T, c matrixCaller) string {
			res := ask(t, c, fmt.Sprintf(`{ c: %s(where: {fixture: {equalTo: true}}) { count } }`, many), nil)
			if out, no := refused(res); no {
				return out
			}
			return "count:" + res.get("data.c.count").Raw
		}
	case accesstest.OpCreate:
		return func(t *testing.T, c matrixCaller) string {
			res := ask(t, c, fmt.Sprintf(`mutation($f: Create%sFieldsInput) { create%s(input: {fields: $f}) { %s { objectId } } }`,
				s.Class, s.Class, single), map[string]any{"f": fieldsInput(s.Create)})
			if out, no := refused(res); no {
				return out
			}
			return "ok"
		}
	case accesstest.OpUpdate:
		// REST's row sets n, adding the field where the class has none;
		// an update input holds only existing fields, so there name changes.
		change := "n: 2"
		if body := r.Fresh; body == nil && s.Fresh["n"] == nil || body != nil && body["n"] == nil {
			change = `name: "changed"`
		}
		return func(t *testing.T, c matrixCaller) string {
			res := ask(t, c, fmt.Sprintf(`mutation($id: ID!) { update%s(input: {id: $id, fields: {%s}}) { %s { objectId } } }`,
				s.Class, change, single), map[string]any{"id": fresh(t)})
			if out, no := refused(res); no {
				return out
			}
			return "ok"
		}
	case accesstest.OpDelete:
		return func(t *testing.T, c matrixCaller) string {
			res := ask(t, c, fmt.Sprintf(`mutation($id: ID!) { delete%s(input: {id: $id}) { %s { objectId } } }`,
				s.Class, single), map[string]any{"id": fresh(t)})
			if out, no := refused(res); no {
				return out
			}
			return "ok"
		}
	case accesstest.OpInclude:
		holders := pluralOf("MxHold" + s.Kind)
		return func(t *testing.T, c matrixCaller) string {
			res := ask(t, c, fmt.Sprintf(`{ h: %s { edges { node { target { name %s } } } } }`, holders, protected), nil)
			if out, no := refused(res); no {
				return out
			}
			var names []string
			var fields string
			for _, e := range res.get("data.h.edges").Array() {
				if target := e.Get("node.target"); target.Type != 0 && target.IsObject() {
					names = append(names, target.Get("name").String())
					fields = shownFields(target.Map(), s.Protected)
				}
			}
			if r.Fields {
				if len(names) != 1 {
					return "not expanded"
				}
				return "fields:" + fields
			}
			sort.Strings(names)
			return "ids:" + strings.Join(names, ",")
		}
	}
	panic("no GraphQL form for matrix op " + r.Op)
}

// shownFields lists which of fields an object shows (not null), sorted.
func shownFields(obj map[string]gjson.Result, fields []string) string {
	var out []string
	for _, f := range fields {
		if v, ok := obj[f]; ok && v.Type != gjson.Null {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// fieldsInput turns a REST body into a Create<Class>FieldsInput: ACLs
// into ACLInput, pointers into {link}.
func fieldsInput(body map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range body {
		switch x := v.(type) {
		case map[string]any:
			switch {
			case k == "ACL":
				out[k] = aclInput(x)
			case x["__type"] == "Pointer":
				out[k] = map[string]any{"link": x["objectId"]}
			default:
				out[k] = x
			}
		default:
			out[k] = v
		}
	}
	return out
}

func aclInput(acl map[string]any) map[string]any {
	var users, roles []any
	out := map[string]any{}
	for who, p := range acl {
		perm, _ := p.(map[string]any)
		read, _ := perm["read"].(bool)
		write, _ := perm["write"].(bool)
		switch {
		case who == "*":
			out["public"] = map[string]any{"read": read, "write": write}
		case strings.HasPrefix(who, "role:"):
			roles = append(roles, map[string]any{"roleName": strings.TrimPrefix(who, "role:"), "read": read, "write": write})
		default:
			users = append(users, map[string]any{"userId": who, "read": read, "write": write})
		}
	}
	if users != nil {
		out["users"] = users
	}
	if roles != nil {
		out["roles"] = roles
	}
	return out
}
