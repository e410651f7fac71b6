package transport_test

import (
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestScenarioSchemaOption: Parse Server's schema option creates the
// declared classes at start-up, brings them up to date at the next start
// (fields added, extra ones deleted, modified ones recreated, indexes and
// CLPs as declared), and lockSchemas refuses schema changes through the API.
func TestScenarioSchemaOption(t *testing.T) {
	team := func(fields map[string]any, indexes map[string]any, clp map[string]any) map[string]any {
		d := map[string]any{"className": "Team", "fields": fields}
		if indexes != nil {
			d["indexes"] = indexes
		}
		if clp != nil {
			d["classLevelPermissions"] = clp
		}
		return d
	}
	str := map[string]any{"type": "String"}
	option := map[string]any{"strict": true, "definitions": []any{
		team(map[string]any{"name": str, "kind": str, "old": map[string]any{"type": "Number"}},
			map[string]any{"name_1": map[string]any{"name": 1}}, nil),
	}}
	srv := servertest.Start(t, func(o *config.Options) { o.Schema = option })
	master := servertest.Master()
	runScenarios(t, srv, []scenario{
		{name: "declared class created", path: "/schemas/Team", headers: master, expectedStatus: 200,
			expectedContains: []string{`"name":{"type":"String"}`, `"old":{"type":"Number"}`, `"name_1":{"name":1}`}},
		{name: "schema changes allowed without lockSchemas", method: "PUT", path: "/schemas/Team", headers: master,
			body: map[string]any{"fields": map[string]any{"extra": str}}, expectedStatus: 200},
		{name: "an object", method: "POST", path: "/classes/Team", headers: master,
			body: map[string]any{"name": "a", "kind": "x", "old": 1, "extra": "e"}, expectedStatus: 201},
	})

	// The next start declares other fields, indexes and a CLP.
	option["definitions"] = []any{
		team(map[string]any{"name": str, "kind": map[string]any{"type": "Number"}, "since": map[string]any{"type": "Date"}},
			map[string]any{"kind_1": map[string]any{"kind": 1}},
			map[string]any{"find": map[string]any{"*": true}, "get": map[string]any{"*": true}, "count": map[string]any{"*": true},
				"create": map[string]any{}, "update": map[string]any{}, "delete": map[string]any{}, "addField": map[string]any{},
				"protectedFields": map[string]any{}}),
	}
	option["deleteExtraFields"], option["recreateModifiedFields"], option["lockSchemas"] = true, true, true
	srv.Restart(t)
	runScenarios(t, srv, []scenario{
		{name: "fields brought up to date", path: "/schemas/Team", headers: master, expectedStatus: 200,
			expectedContains:    []string{`"kind":{"type":"Number"}`, `"since":{"type":"Date"}`, `"name":{"type":"String"}`, `"kind_1":{"kind":1}`, `"create":{}`},
			notExpectedContains: []string{`"old"`, `"extra"`, `"name_1"`}},
		{name: "a recreated field's data is gone, the rest stays", path: "/classes/Team", headers: master, expectedStatus: 200,
			expectedContains: []string{`"name":"a"`}, notExpectedContains: []string{`"kind"`, `"old"`, `"extra"`}},
		{name: "the declared CLP applies", method: "POST", path: "/classes/Team", headers: servertest.App(),
			body: map[string]any{"name": "b"}, expectedStatus: 400, check: codeIs(119)},
		{name: "lockSchemas: update refused", method: "PUT", path: "/schemas/Team", headers: master,
			body: map[string]any{"fields": map[string]any{"x": str}}, expectedStatus: 400,
			check: msgIs(119, "Cannot perform this operation when schemas options is used.")},
		{name: "lockSchemas: create refused", method: "POST", path: "/schemas/Other", headers: master,
			body: map[string]any{"className": "Other"}, expectedStatus: 400, check: codeIs(119)},
		{name: "lockSchemas: delete refused", method: "DELETE", path: "/schemas/Team", headers: master,
			expectedStatus: 400, check: codeIs(119)},
		{name: "reading schemas still works", path: "/schemas", headers: master, expectedStatus: 200},
	})
}

// TestScenarioPublicExplain: explain needs the master key, as in Parse
// Server 9, unless databaseOptions.allowPublicExplain.
func TestScenarioPublicExplain(t *testing.T) {
	for _, allow := range []bool{false, true} {
		srv := servertest.Start(t, func(o *config.Options) {
			if allow {
				o.DatabaseOptions = map[string]any{"allowPublicExplain": true, "maxPoolSize": 10}
			}
		})
		mustCreate(t, srv, "Item", map[string]any{"n": 1})
		sc := scenario{name: "public explain", path: "/classes/Item?explain=true", headers: servertest.App(), expectedStatus: 400, check: codeIs(119)}
		if allow {
			sc.expectedStatus, sc.check = 200, nil
		}
		runScenarios(t, srv, []scenario{sc,
			{name: "master explain", path: "/classes/Item?explain=true", headers: servertest.Master(), expectedStatus: 200}})
	}
}

// TestScenarioSecurityCheck: GET /security answers 409 until
// security.enableCheck, then the checks report in Parse Server's shape.
func TestScenarioSecurityCheck(t *testing.T) {
	off := servertest.Start(t, nil)
	runScenarios(t, off, []scenario{
		{name: "off", path: "/security", headers: servertest.Master(), expectedStatus: 409,
			expectedContains: []string{"Enable Parse Server option `security.enableCheck` to run security check."}},
	})
	on := servertest.Start(t, func(o *config.Options) {
		o.Security = map[string]any{"enableCheck": true}
		o.AllowClientClassCreation = false
		o.EnforcePrivateUsers = true
	})
	runScenarios(t, on, []scenario{
		{name: "Dashboard sees the check", path: "/serverInfo", headers: servertest.Master(), expectedStatus: 200,
			expectedContains: []string{`"securityCheck":true`}},
		{name: "master key only", path: "/security", headers: servertest.App(), expectedStatus: 403},
		{name: "report", path: "/security", headers: servertest.Master(), expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
			report, _ := res.Map()["report"].(map[string]any)
			groups, _ := report["groups"].([]any)
			if report["version"] != "1.0.0" || len(groups) != 2 {
				t.Fatalf("report %v", report)
			}
			states := map[string]string{}
			for _, g := range groups {
				for _, c := range g.(map[string]any)["checks"].([]any) {
					cm := c.(map[string]any)
					states[cm["title"].(string)] = cm["state"].(string)
				}
			}
			// The test master key is weak; the rest is as configured.
			want := map[string]string{"Secure master key": "fail", "Security log disabled": "success",
				"Client class creation disabled": "success", "Users are created without public access": "success",
				"Public database explain disabled": "success"}
			for title, st := range want {
				if states[title] != st {
					t.Errorf("%s: %q, want %q", title, states[title], st)
				}
			}
			if report["state"] != "fail" {
				t.Errorf("state %v, want fail", report["state"])
			}
		}},
	})
}
