package service_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// TestIncludeSplicedAsStored: an included object the caller sees as
// stored is replied from its stored bytes (a stub in the results, its
// bytes spliced by AppendResults); the reply is byte for byte the one
// made from decoded copies (ReplyOnly off), for every caller and include,
// and the cases that must not be spliced (objects withholding public
// read, protected fields, a keys projection, a deeper include, a Relation
// field to show) still come out as the rules say.
func TestIncludeSplicedAsStored(t *testing.T) {
	s := openTestService(t, service.Options{})
	master := service.Auth{Master: true}
	create := func(class string, body map[string]any) string {
		t.Helper()
		r, err := s.Create(master, class, body)
		if err != nil {
			t.Fatalf("create %s: %v", class, err)
		}
		return r.ObjectID
	}
	if _, err := s.CreateSchema(master, "SpProtected", map[string]any{
		"fields": map[string]any{"secret": map[string]any{"type": "String"}},
		"classLevelPermissions": map[string]any{
			"find": map[string]any{"*": true}, "get": map[string]any{"*": true}, "count": map[string]any{"*": true},
			"create": map[string]any{"*": true}, "update": map[string]any{"*": true}, "delete": map[string]any{"*": true},
			"addField": map[string]any{"*": true}, "protectedFields": map[string]any{"*": []any{"secret"}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	last := create("SpTarget", map[string]any{"name": "last", "n": 3.0})
	t1 := create("SpTarget", map[string]any{"name": "one", "n": 1.0, "next": schema.Pointer("SpTarget", last),
		"quote": "say \"hi\" <&>", "ACL": map[string]any{"*": map[string]any{"read": true}}})
	t2 := create("SpTarget", map[string]any{"name": "two", "n": 2.0})
	gone := create("SpTarget", map[string]any{"name": "gone"})
	open := create("SpLocked", map[string]any{"name": "open"})
	locked := create("SpLocked", map[string]any{"name": "locked-secret", "ACL": map[string]any{"u1": map[string]any{"read": true}}})
	prot := create("SpProtected", map[string]any{"name": "p", "secret": "protected-value"})
	rel := create("SpRel", map[string]any{"name": "r", "fans": map[string]any{"__op": "AddRelation",
		"objects": []any{schema.Pointer("_User", "u1")}}})
	for i, h := range []map[string]any{
		{"t": schema.Pointer("SpTarget", t1), "l": schema.Pointer("SpLocked", open), "p": schema.Pointer("SpProtected", prot),
			"r": schema.Pointer("SpRel", rel), "arr": []any{schema.Pointer("SpTarget", t2), "x", schema.Pointer("SpTarget", gone)}},
		{"t": schema.Pointer("SpTarget", t2), "l": schema.Pointer("SpLocked", locked)},
		{"t": schema.Pointer("SpTarget", gone), "arr": []any{}},
		{"t": schema.Pointer("SpTarget", t1)}, // the same target twice
		{"name": "no pointers"},
		{"t": schema.Pointer("SpTarget", "nosuchid")},
	} {
		h["k"] = float64(i)
		create("SpHolder", h)
	}
	if err := s.Delete(master, "SpTarget", gone); err != nil {
		t.Fatal(err)
	}

	type check struct {
		include  []string
		keys     []string
		contains []string
		not      []string
		spliced  string // a key of the first holder whose value must be a stub
	}
	callers := map[string]service.Auth{"master": master, "public": {}}
	cases := []struct {
		caller string
		check
	}{
		{"master", check{include: []string{"t"}, contains: []string{`"t":{"ACL":{"*":{"read":true}},"__type":"Object","className":"SpTarget","createdAt"`,
			`"n":1,"name":"one","next":{"__type":"Pointer"`,
			`say \"hi\" \u003c\u0026\u003e`}, not: []string{`"gone"`}, spliced: "t"}},
		{"public", check{include: []string{"t"}, spliced: "t"}},
		{"public", check{include: []string{"arr"}, contains: []string{`"arr":[{"__type":"Object","className":"SpTarget"`, `"x"]`}, not: []string{"gone"}}},
		{"public", check{include: []string{"l"}, contains: []string{`"open"`}, not: []string{"locked-secret"}}},
		{"master", check{include: []string{"l"}, contains: []string{"locked-secret"}, spliced: "l"}},
		{"public", check{include: []string{"p"}, contains: []string{`"className":"SpProtected"`}, not: []string{"protected-value"}}},
		{"master", check{include: []string{"p"}, contains: []string{"protected-value"}, spliced: "p"}},
		{"public", check{include: []string{"r"}, contains: []string{`"fans":{"__type":"Relation","className":"_User"}`}}},
		{"public", check{include: []string{"t.next"}, contains: []string{`"next":{"__type":"Object","className":"SpTarget","createdAt"`, `"n":3,"name":"last"`}}},
		{"master", check{include: []string{"t", "t.next", "arr"}, contains: []string{`"name":"last"`}}},
		{"public", check{include: []string{"t"}, keys: []string{"t.name", "k"}, contains: []string{`"t":{"__type":"Object","className":"SpTarget","createdAt"`, `"name":"one"`}, not: []string{`"n":1`}}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s include=%v keys=%v", c.caller, c.include, c.keys)
		auth := callers[c.caller]
		p := service.FindParams{Limit: 100, Order: []service.SortKey{{Path: "k"}},
			Read: service.ReadOptions{Include: c.include, Keys: c.keys}}
		decoded, err := s.Find(auth, "SpHolder", p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := decoded.AppendResults(nil)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := json.Marshal(decoded.Results); !bytes.Equal(m, want) {
			t.Fatalf("%s: the decoded path's reply is not Marshal of its results:\n%s\n%s", name, want, m)
		}
		p.ReplyOnly = true
		spliced, err := s.Find(auth, "SpHolder", p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := spliced.AppendResults(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: spliced reply differs\n got  %s\n want %s", name, got, want)
		}
		for _, sub := range c.contains {
			if !strings.Contains(string(got), sub) {
				t.Errorf("%s: reply lacks %s\n%s", name, sub, got)
			}
		}
		for _, sub := range c.not {
			if strings.Contains(string(got), sub) {
				t.Errorf("%s: reply holds %s\n%s", name, sub, got)
			}
		}
		if c.spliced != "" {
			if stub, _ := spliced.Results[0][c.spliced].(map[string]any); len(stub) != 3 {
				t.Errorf("%s: %s was not spliced (results hold %v)", name, c.spliced, spliced.Results[0][c.spliced])
			}
		}
	}
}
