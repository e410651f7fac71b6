package aggregate

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// eval1 projects one expression over one document and returns the value
// (JSON), or the error text.
func eval1(t *testing.T, doc, expression string) string {
	t.Helper()
	var e any
	if err := json.Unmarshal([]byte(expression), &e); err != nil {
		t.Fatal(err)
	}
	p, err := Compile([]Stage{{Name: "$project", Spec: map[string]any{"v": e}}})
	if err != nil {
		return "compile: " + err.Error()
	}
	out, err := p.Run(docs(t, "["+doc+"]"), RunOptions{Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		return "run: " + err.Error()
	}
	v, present := out[0]["v"]
	if !present {
		return "missing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestValueOperators(t *testing.T) {
	doc := `{"objectId":"o1","name":"Ada Lovelace","city":"Bâle","n":7,"m":2,"price":2.5,"qty":4,"tags":["a","b","c"],
		"nothing":null,"when":{"__type":"Date","iso":"2024-03-05T06:07:08.009Z"},"later":{"__type":"Date","iso":"2024-03-05T06:07:09.509Z"},
		"createdAt":"2023-01-01T00:00:00.000Z"}`
	for _, c := range []struct{ expr, want string }{
		{`{"$concat":["$name"," / ","$city"]}`, `"Ada Lovelace / Bâle"`},
		{`{"$concat":["$name","$nothing"]}`, `null`},
		{`{"$concat":["$name","$missing"]}`, `null`},
		{`{"$concat":["x",5]}`, `run: parse error 102: $concat needs strings, got a number`},
		{`{"$toUpper":"$name"}`, `"ADA LOVELACE"`},
		{`{"$toLower":["$city"]}`, `"bâle"`},
		{`{"$toUpper":"$nothing"}`, `""`},
		{`{"$toUpper":"$n"}`, `"7"`},
		{`{"$toUpper":"$tags"}`, `run: parse error 102: $toUpper needs a string, got an array`},
		{`{"$substr":["$name",0,3]}`, `"Ada"`},
		{`{"$substr":["$name",4,-1]}`, `"Lovelace"`},
		{`{"$substr":["$name",40,2]}`, `""`},
		{`{"$substrBytes":["$city",0,2]}`, `"B"`},
		{`{"$substrCP":["$city",0,2]}`, `"Bâ"`},
		{`{"$substr":["$name",-1,2]}`, `run: parse error 102: $substr needs a whole, non-negative start and a whole length`},
		{`{"$substr":["$name",1]}`, `compile: parse error 102: $substr takes 3 arguments, got 2`},
		{`{"$strLenCP":"$city"}`, `4`},
		{`{"$add":["$n","$m",1]}`, `10`},
		{`{"$add":["$n","$nothing"]}`, `null`},
		{`{"$add":["$when",1500]}`, `{"__type":"Date","iso":"2024-03-05T06:07:09.509Z"}`},
		{`{"$add":["$when","$later"]}`, `run: parse error 102: $add takes at most one date`},
		{`{"$add":["$n","x"]}`, `run: parse error 102: $add needs numbers, got a string`},
		{`{"$subtract":["$n","$m"]}`, `5`},
		{`{"$subtract":["$later","$when"]}`, `1500`},
		{`{"$subtract":["$later",1500]}`, `{"__type":"Date","iso":"2024-03-05T06:07:08.009Z"}`},
		{`{"$multiply":["$price","$qty"]}`, `10`},
		{`{"$divide":["$n","$m"]}`, `3.5`},
		{`{"$divide":["$n",0]}`, `run: parse error 102: $divide by zero`},
		{`{"$mod":["$n","$m"]}`, `1`},
		{`{"$size":"$tags"}`, `3`},
		{`{"$size":"$nothing"}`, `run: parse error 102: $size needs an array, got null`},
		{`{"$toUpper":{"$concat":["$name","-",{"$substr":["$city",0,1]}]}}`, `"ADA LOVELACE-B"`},
		{`{"$year":"$when"}`, `2024`},
		{`{"$week":"$when"}`, `9`},
		{`{"$dayOfWeek":"$when"}`, `3`},
		{`{"$year":"$_created_at"}`, `2023`},
	} {
		if got := eval1(t, doc, c.expr); got != c.want {
			t.Errorf("%s = %s, want %s", c.expr, got, c.want)
		}
	}
}

// TestOperatorsInGroupsAndRepeatedStages: operators inside accumulators and
// group keys, and a pipeline repeating a stage kind.
func TestOperatorsInGroupsAndRepeatedStages(t *testing.T) {
	in := docs(t, `[{"objectId":"1","cust":"ann","price":2,"qty":3},{"objectId":"2","cust":"Ann","price":1,"qty":4},{"objectId":"3","cust":"bob","price":5,"qty":1}]`)
	got := run(t, `[
		{"$match":{"qty":{"$gte":1}}},
		{"$match":{"price":{"$lt":5}}},
		{"$group":{"_id":{"$toLower":"$cust"},"revenue":{"$sum":{"$multiply":["$price","$qty"]}}}},
		{"$project":{"revenue":1}},
		{"$project":{"twice":{"$multiply":["$revenue",2]}}}
	]`, in)
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `"twice":20`) || len(got) != 1 {
		t.Errorf("got %s, want one group ann with twice 20", b)
	}
}
