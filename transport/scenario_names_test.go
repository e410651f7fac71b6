package transport_test

import (
	"fmt"
	"maps"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// TestOrderAliasesAndForbiddenNames: order accepts Parse's storage names of
// the date fields, and a field called length is refused as Parse does.
func TestOrderAliasesAndForbiddenNames(t *testing.T) {
	srv := servertest.Start(t, nil)
	first := mustCreate(t, srv, "Item", map[string]any{"n": 1})
	mustCreate(t, srv, "Item", map[string]any{"n": 2})
	if res := srv.Do(t, "PUT", "/classes/Item/"+first, map[string]any{"n": 3}, servertest.App()); res.Status != 200 {
		t.Fatalf("update: %d %s", res.Status, res.Body)
	}
	order := func(expr string) []string {
		res := srv.Do(t, "GET", "/classes/Item?order="+expr, nil, servertest.App())
		if res.Status != 200 {
			t.Fatalf("order=%s: %d %s", expr, res.Status, res.Body)
		}
		var ids []string
		for _, r := range res.Map()["results"].([]any) {
			ids = append(ids, r.(map[string]any)["objectId"].(string))
		}
		return ids
	}
	for alias, field := range map[string]string{
		"_created_at": "createdAt", "-_created_at": "-createdAt",
		"_updated_at": "updatedAt", "-_updated_at": "-updatedAt",
	} {
		got, want := order(alias), order(field)
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("order=%s: %v, want the order of %s: %v", alias, got, field, want)
		}
	}
	if got := order("-_created_at,n"); got[0] == "" {
		t.Error("an alias in a list of keys")
	}
	runScenarios(t, srv, []scenario{
		{name: "a field named length", method: "POST", path: "/classes/Item", headers: servertest.App(),
			body: map[string]any{"length": 5}, expectedStatus: 400, check: msgIs(105, "Invalid field name: length.")},
		{name: "length on update", method: "PUT", path: "/classes/Item/" + first, headers: servertest.App(),
			body: map[string]any{"length": 5}, expectedStatus: 400, check: msgIs(105, "Invalid field name: length.")},
		{name: "a longer name is fine", method: "POST", path: "/classes/Item", headers: servertest.App(),
			body: map[string]any{"lengthy": 5}, expectedStatus: 201},
	})
}

// TestExplainNeedsTheMasterKeyFirst: a client's explain is refused before
// the query is planned or run (no 154, no work).
func TestExplainNeedsTheMasterKeyFirst(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.MaxScan = 2 })
	for i := range 5 {
		mustCreate(t, srv, "Big", map[string]any{"n": i})
	}
	runScenarios(t, srv, []scenario{
		{name: "a client's explain of an over-budget query", path: `/classes/Big?explain=true&where={"n":{"$ne":1}}`,
			headers: servertest.App(), expectedStatus: 400, check: msgIs(119, "explain requires the master key")},
		{name: "the master key's", path: `/classes/Big?explain=true&where={"n":{"$ne":1}}`,
			headers: servertest.Master(), expectedStatus: 200},
	})
}

// TestFieldsPerClassAreCapped: no write, master key included, makes a class
// hold more than MaxFieldsPerClass fields; nothing of a refused write stays.
func TestFieldsPerClassAreCapped(t *testing.T) {
	srv := servertest.Start(t, nil)
	wide := func(from, n int) map[string]any {
		body := map[string]any{}
		for i := from; i < from+n; i++ {
			body[fmt.Sprintf("f%d", i)] = i
		}
		return body
	}
	fixed := len(maps.Collect(schema.DefaultFields()))
	runScenarios(t, srv, []scenario{
		{name: "up to the cap", method: "POST", path: "/classes/Wide", headers: servertest.Master(),
			body: wide(0, service.MaxFieldsPerClass-fixed), expectedStatus: 201},
		{name: "one more", method: "POST", path: "/classes/Wide", headers: servertest.Master(),
			body: wide(5000, 1), expectedStatus: 400, check: msgIs(107, fmt.Sprintf("Class Wide cannot have more than %d fields.", service.MaxFieldsPerClass))},
		{name: "a hundred thousand at once", method: "POST", path: "/classes/Wider", headers: servertest.Master(),
			body: wide(0, 100_000), expectedStatus: 400, check: codeIs(107)},
		{name: "nothing of it stayed", path: "/schemas/Wider", headers: servertest.Master(), expectedStatus: 400, check: codeIs(103)},
		{name: "nor through the schemas API", method: "PUT", path: "/schemas/Wide", headers: servertest.Master(),
			body: map[string]any{"fields": map[string]any{"extra": map[string]any{"type": "String"}}}, expectedStatus: 400, check: codeIs(107)},
	})
}
