package transport_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// aggURL builds /aggregate/<class>?k=v… keeping the parameters in order.
func aggURL(class string, kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, url.QueryEscape(kv[i])+"="+url.QueryEscape(kv[i+1]))
	}
	return "/aggregate/" + class + "?" + strings.Join(parts, "&")
}

// results checks the results array of a reply against want (JSON), in order.
func aggResults(want string) func(testing.TB, servertest.Response) {
	return replyAt("results", want)
}

var sales = []map[string]any{
	{"item": "abc", "price": 10, "qty": 2, "region": "north", "tags": []any{"a", "b"}},
	{"item": "jkl", "price": 20, "qty": 1, "region": "south", "tags": []any{"b"}},
	{"item": "xyz", "price": 5, "qty": 10, "region": "north", "tags": []any{}},
	{"item": "xyz", "price": 5, "qty": 20, "region": "east"},
	{"item": "abc", "price": 10, "qty": 10, "region": "south", "tags": []any{"c", "a"}},
}

func seedSales(t *testing.T, srv *servertest.Server) {
	t.Helper()
	for _, s := range sales {
		mustCreate(t, srv, "Sale", s)
	}
}

// TestScenarioAggregate: distinct and pipelines, in both request forms.
func TestScenarioAggregate(t *testing.T) {
	srv := servertest.Start(t, nil)
	seedSales(t, srv)
	m := servertest.Master()
	runScenarios(t, srv, []scenario{
		{name: "master key required", path: aggURL("Sale", "distinct", "item"), headers: servertest.App(),
			expectedStatus: 403, check: replyIs(`{"error":"unauthorized: master key is required"}`)},
		{name: "distinct", path: aggURL("Sale", "distinct", "item"), headers: m, expectedStatus: 200,
			check: aggResults(`["abc","jkl","xyz"]`)},
		{name: "distinct with where", path: aggURL("Sale", "distinct", "item", "where", `{"qty":{"$gte":10}}`), headers: m,
			expectedStatus: 200, check: aggResults(`["abc","xyz"]`)},
		{name: "distinct spreads arrays", path: aggURL("Sale", "distinct", "tags"), headers: m, expectedStatus: 200,
			check: aggResults(`["a","b","c"]`)},
		{name: "distinct of a missing field", path: aggURL("Sale", "distinct", "nope"), headers: m, expectedStatus: 200,
			check: aggResults(`[]`)},
		{name: "distinct with a bad field", path: aggURL("Sale", "distinct", "$x"), headers: m, expectedStatus: 400,
			check: codeIs(105)},
		{name: "group with objectId", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$group":{"objectId":"$item","total":{"$sum":"$qty"},"n":{"$sum":1}}}]`),
			check: aggResults(`[{"objectId":"abc","total":12,"n":2},{"objectId":"jkl","total":1,"n":1},{"objectId":"xyz","total":30,"n":2}]`)},
		{name: "group with _id, stage without $", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"group":{"_id":"$region","avg":{"$avg":"$price"},"lo":{"$min":"$qty"},"hi":{"$max":"$qty"}}}]`),
			check: aggResults(`[{"objectId":"east","avg":5,"lo":20,"hi":20},{"objectId":"north","avg":7.5,"lo":2,"hi":10},{"objectId":"south","avg":15,"lo":1,"hi":10}]`)},
		{name: "group everything", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$sort":{"item":1}},{"$group":{"objectId":null,"qty":{"$sum":"$qty"},"items":{"$addToSet":"$item"}}}]`),
			check: aggResults(`[{"objectId":null,"qty":43,"items":["abc","jkl","xyz"]}]`)},
		{name: "push, first, last", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$sort":{"qty":1}},{"$group":{"objectId":"$item","qtys":{"$push":"$qty"},"first":{"$first":"$region"},"last":{"$last":"$region"}}}]`),
			check: aggResults(`[{"objectId":"abc","qtys":[2,10],"first":"north","last":"south"},{"objectId":"jkl","qtys":[1],"first":"south","last":"south"},{"objectId":"xyz","qtys":[10,20],"first":"north","last":"east"}]`)},
		{name: "stage parameters, in the order sent", headers: m, expectedStatus: 200,
			path: aggURL("Sale", "match", `{"price":{"$lt":15}}`, "group", `{"objectId":"$item","total":{"$sum":"$qty"}}`,
				"sort", `{"total":-1}`, "limit", "1"),
			check: aggResults(`[{"objectId":"xyz","total":30}]`)},
		{name: "stage parameters with $", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "$group", `{"objectId":"$region","n":{"$sum":1}}`, "$sort", `{"n":-1,"objectId":1}`, "$skip", "1"),
			check: aggResults(`[{"objectId":"south","n":2},{"objectId":"east","n":1}]`)},
		{name: "project", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$match":{"item":"jkl"}},{"$project":{"item":1,"objectId":0,"cost":"$price"}}]`),
			check: aggResults(`[{"item":"jkl","cost":20}]`)},
		{name: "project exclusion", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$match":{"item":"jkl"}},{"$project":{"tags":0,"objectId":0,"createdAt":0,"updatedAt":0}}]`),
			check: aggResults(`[{"item":"jkl","price":20,"qty":1,"region":"south"}]`)},
		{name: "unwind and count", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$unwind":"$tags"},{"$group":{"objectId":"$tags","n":{"$sum":1}}}]`),
			check: aggResults(`[{"objectId":"a","n":2},{"objectId":"b","n":2},{"objectId":"c","n":1}]`)},
		{name: "unwind preserving", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$unwind":{"path":"$tags","preserveNullAndEmptyArrays":true,"includeArrayIndex":"i"}},{"$count":"n"}]`),
			check: aggResults(`[{"n":7}]`)},
		{name: "count", headers: m, expectedStatus: 200,
			path: aggURL("Sale", "pipeline", `[{"$match":{"region":"north"}},{"$count":"northern"}]`), check: aggResults(`[{"northern":2}]`)},
		{name: "count of nothing", headers: m, expectedStatus: 200,
			path: aggURL("Sale", "pipeline", `[{"$match":{"region":"west"}},{"$count":"n"}]`), check: aggResults(`[]`)},
		{name: "sample", headers: m, expectedStatus: 200,
			path: aggURL("Sale", "pipeline", `[{"$sample":{"size":2}},{"$project":{"objectId":0,"item":1}}]`),
			check: func(t testing.TB, res servertest.Response) {
				r, _ := res.Map()["results"].([]any)
				if len(r) != 2 {
					t.Errorf("sample of %d: %s", len(r), res.Body)
				}
			}},
		{name: "date operators", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$group":{"objectId":{"y":{"$year":"$createdAt"}},"n":{"$sum":1}}},{"$project":{"objectId":0,"n":1}}]`),
			check: aggResults(`[{"n":5}]`)},
		{name: "group by a pointer gives its objectId", headers: m, expectedStatus: 200,
			path:  aggURL("Sale", "pipeline", `[{"$limit":1},{"$project":{"p":{"$literal":{"__type":"Pointer","className":"X","objectId":"abc"}}}},{"$group":{"objectId":"$p"}}]`),
			check: aggResults(`[{"objectId":"abc"}]`)},
		{name: "results never hold internal fields", headers: m, expectedStatus: 200,
			path:                aggURL("Sale", "pipeline", `[{"$limit":1}]`),
			notExpectedContains: []string{`"_`}},
		{name: "unknown stage", headers: m, expectedStatus: 400, path: aggURL("Sale", "pipeline", `[{"$lookup":{}}]`),
			check: checkAll(codeIs(102), replyAt("error", `"Invalid aggregate stage '$lookup'."`))},
		{name: "unknown stage parameter", headers: m, expectedStatus: 400, path: aggURL("Sale", "frobnicate", `{}`),
			check: checkAll(codeIs(102), replyAt("error", `"Invalid aggregate stage 'frobnicate'."`))},
		{name: "unknown operator", headers: m, expectedStatus: 400,
			path:  aggURL("Sale", "pipeline", `[{"$project":{"x":{"$regexMatch":"$item"}}}]`),
			check: checkAll(codeIs(102), replyAt("error", `"Unsupported aggregate operator $regexMatch"`))},
		{name: "unknown accumulator", headers: m, expectedStatus: 400,
			path:  aggURL("Sale", "pipeline", `[{"$group":{"objectId":"$item","x":{"$stdDevPop":"$qty"}}}]`),
			check: checkAll(codeIs(102), replyAt("error", `"Unsupported $group accumulator $stdDevPop"`))},
		{name: "group without a key", headers: m, expectedStatus: 400,
			path: aggURL("Sale", "pipeline", `[{"$group":{"n":{"$sum":1}}}]`), check: codeIs(102)},
		{name: "two keys in a stage", headers: m, expectedStatus: 400,
			path:  aggURL("Sale", "pipeline", `[{"$match":{},"$limit":1}]`),
			check: checkAll(codeIs(102), replyAt("error", `"Pipeline stages should only have one key but found $match, $limit"`))},
		{name: "bad limit", headers: m, expectedStatus: 400, path: aggURL("Sale", "pipeline", `[{"$limit":-1}]`), check: codeIs(102)},
		{name: "bad sort", headers: m, expectedStatus: 400, path: aggURL("Sale", "pipeline", `[{"$sort":{"qty":2}}]`), check: codeIs(102)},
		{name: "mixed projection", headers: m, expectedStatus: 400,
			path: aggURL("Sale", "pipeline", `[{"$project":{"qty":1,"price":0}}]`), check: codeIs(102)},
		{name: "bad match", headers: m, expectedStatus: 400, path: aggURL("Sale", "pipeline", `[{"$match":{"qty":{"$bogus":1}}}]`),
			check: codeIs(107)},
		{name: "pipeline and stage parameters", headers: m, expectedStatus: 400,
			path: aggURL("Sale", "pipeline", `[]`, "limit", "1"), check: codeIs(102)},
		{name: "distinct and stages", headers: m, expectedStatus: 400,
			path: aggURL("Sale", "distinct", "item", "limit", "1"), check: codeIs(102)},
		{name: "an internal class name", headers: m, expectedStatus: 400, path: aggURL("_Secret", "distinct", "x"), check: codeIs(103)},
		{name: "an empty class", headers: m, expectedStatus: 200, path: aggURL("Nothing", "pipeline", `[{"$count":"n"}]`),
			check: aggResults(`[]`)},
	})
}

// TestScenarioAggregateBody: the JS SDK's form (POST with _method GET and
// the parameters in the body) keeps the key order of a $sort.
func TestScenarioAggregateBody(t *testing.T) {
	srv := servertest.Start(t, nil)
	seedSales(t, srv)
	body := `{"_method":"GET","_ApplicationId":"` + servertest.AppID + `","_MasterKey":"` + servertest.MasterKey + `",` +
		`"pipeline":[{"$project":{"objectId":0,"item":1,"qty":1}},{"$sort":{"item":-1,"qty":1}}]}`
	body2 := `{"_method":"GET","_ApplicationId":"` + servertest.AppID + `","_MasterKey":"` + servertest.MasterKey + `",` +
		`"pipeline":[{"$project":{"objectId":0,"item":1,"qty":1}},{"$sort":{"qty":1,"item":-1}}]}`
	h := map[string]string{"Content-Type": "text/plain"}
	runScenarios(t, srv, []scenario{
		{name: "item desc, qty asc", method: "POST", path: "/aggregate/Sale", body: body, headers: h, expectedStatus: 200,
			check: aggResults(`[{"item":"xyz","qty":10},{"item":"xyz","qty":20},{"item":"jkl","qty":1},{"item":"abc","qty":2},{"item":"abc","qty":10}]`)},
		{name: "qty asc, item desc", method: "POST", path: "/aggregate/Sale", body: body2, headers: h, expectedStatus: 200,
			check: aggResults(`[{"item":"jkl","qty":1},{"item":"abc","qty":2},{"item":"xyz","qty":10},{"item":"abc","qty":10},{"item":"xyz","qty":20}]`)},
		{name: "without the master key", method: "POST", path: "/aggregate/Sale", headers: h, expectedStatus: 403,
			body: `{"_method":"GET","_ApplicationId":"` + servertest.AppID + `","distinct":"item"}`},
	})
}

// TestScenarioAggregateIndex: a leading $match (and $sort) runs through the
// planner, so a declared index serves it.
func TestScenarioAggregateIndex(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	for i := 0; i < 50; i++ {
		mustCreate(t, srv, "Reading", map[string]any{"v": i, "bucket": i % 5})
	}
	plan := func(name, pipeline, wantAccess string, wantExamined float64) scenario {
		return scenario{name: name, headers: m, expectedStatus: 200, path: aggURL("Reading", "pipeline", pipeline, "explain", "true"),
			check: func(t testing.TB, res servertest.Response) {
				p, _ := res.Map()["results"].(map[string]any)["plan"].(map[string]any)
				access, _ := p["access"].(string)
				if !strings.HasPrefix(access, wantAccess) {
					t.Errorf("access %q, want %q…: %s", access, wantAccess, res.Body)
				}
				if wantExamined >= 0 && p["examined"] != wantExamined {
					t.Errorf("examined %v, want %v", p["examined"], wantExamined)
				}
			}}
	}
	runScenarios(t, srv, []scenario{
		plan("no index: full scan", `[{"$match":{"v":{"$gte":45}}},{"$group":{"objectId":null,"n":{"$sum":1}}}]`, "full scan", 50),
		{name: "add an index", method: "PUT", path: "/schemas/Reading", headers: m,
			body: map[string]any{"indexes": map[string]any{"v_1": map[string]any{"v": 1}}}, expectedStatus: 200},
		plan("the index serves the match", `[{"$match":{"v":{"$gte":45}}},{"$group":{"objectId":null,"n":{"$sum":1}}}]`, "index v", 5),
		plan("and the sort with a limit", `[{"$sort":{"v":-1}},{"$limit":3}]`, "full scan", 3),
		{name: "same results", headers: m, expectedStatus: 200,
			path:  aggURL("Reading", "pipeline", `[{"$match":{"v":{"$gte":45}}},{"$sort":{"v":-1}},{"$limit":2},{"$project":{"objectId":0,"v":1}}]`),
			check: aggResults(`[{"v":49},{"v":48}]`)},
		{name: "where joins the pipeline", headers: m, expectedStatus: 200,
			path:  aggURL("Reading", "where", `{"v":{"$lt":10}}`, "group", `{"objectId":"$bucket","n":{"$sum":1}}`),
			check: aggResults(`[{"objectId":0,"n":2},{"objectId":1,"n":2},{"objectId":2,"n":2},{"objectId":3,"n":2},{"objectId":4,"n":2}]`)},
	})
}
