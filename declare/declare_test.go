package declare_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/declare"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openService is a service on a buntdb file of its own.
func openService(t *testing.T) *service.Service {
	t.Helper()
	adapter, err := store.Open(filepath.Join(t.TempDir(), "declare.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adapter.Close() })
	svc, err := service.Open(adapter, service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// counting counts the schema updates Apply makes.
type counting struct {
	*service.Service
	updates int
}

func (c *counting) UpdateSchema(auth service.Auth, class string, body map[string]any) (map[string]any, error) {
	c.updates++
	return c.Service.UpdateSchema(auth, class, body)
}

var master = service.Auth{Master: true}

func typ(t string) map[string]any { return map[string]any{"type": t} }

// fieldTypes is class's fields as name -> type (target class in <>).
func fieldTypes(t *testing.T, svc *service.Service, class string) map[string]string {
	t.Helper()
	s, err := svc.Schema(class)
	if err != nil {
		t.Fatalf("schema of %s: %v", class, err)
	}
	out := map[string]string{}
	for name, f := range s["fields"].(map[string]any) {
		m := f.(map[string]any)
		out[name], _ = m["type"].(string)
		if target, _ := m["targetClass"].(string); target != "" {
			out[name] += "<" + target + ">"
		}
	}
	return out
}

// TestApply: each case starts from a class with the fields before (none:
// no class), applies one definition with its options, and checks the
// fields after, the error and the log.
func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  map[string]any // fields of Team before; nil: no class
		def     map[string]any // Team's definition
		opts    declare.Options
		want    map[string]string // Team's custom fields after
		wantErr string
		wantLog string
	}{
		{name: "created", def: map[string]any{"fields": map[string]any{"name": typ("String"), "owner": map[string]any{"type": "Pointer", "targetClass": "_User"}}},
			want: map[string]string{"name": "String", "owner": "Pointer<_User>"}},
		{name: "system fields in a definition are left alone", def: map[string]any{"fields": map[string]any{"name": typ("String"), "objectId": typ("String"), "createdAt": typ("Date"), "ACL": typ("ACL")}},
			want: map[string]string{"name": "String"}},
		{name: "missing field added, extra kept", before: map[string]any{"extra": typ("Number")},
			def:  map[string]any{"fields": map[string]any{"name": typ("String")}},
			want: map[string]string{"name": "String", "extra": "Number"}},
		{name: "extra field deleted with deleteExtraFields", before: map[string]any{"extra": typ("Number")},
			def: map[string]any{"fields": map[string]any{"name": typ("String")}}, opts: declare.Options{DeleteExtraFields: true},
			want: map[string]string{"name": "String"}},
		{name: "modified field kept and reported without recreateModifiedFields", before: map[string]any{"kind": typ("Number")},
			def:  map[string]any{"fields": map[string]any{"kind": typ("String")}},
			want: map[string]string{"kind": "Number"}, wantLog: "set recreateModifiedFields"},
		{name: "modified field recreated", before: map[string]any{"kind": typ("Number")},
			def: map[string]any{"fields": map[string]any{"kind": typ("String")}}, opts: declare.Options{RecreateModifiedFields: true},
			want: map[string]string{"kind": "String"}},
		{name: "pointer target change is a modification", before: map[string]any{"p": map[string]any{"type": "Pointer", "targetClass": "_User"}},
			def: map[string]any{"fields": map[string]any{"p": map[string]any{"type": "Pointer", "targetClass": "_Role"}}}, opts: declare.Options{RecreateModifiedFields: true},
			want: map[string]string{"p": "Pointer<_Role>"}},
		{name: "a bad type fails the class, logged when not strict", def: map[string]any{"fields": map[string]any{"x": typ("Nope")}},
			wantErr: "schema: class Team", wantLog: "could not be brought up to date"},
		{name: "a bad type fails the start-up when strict", def: map[string]any{"fields": map[string]any{"x": typ("Nope")}}, opts: declare.Options{Strict: true},
			wantErr: "schema: class Team"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := openService(t)
			if tc.before != nil {
				if _, err := svc.CreateSchema(master, "Team", map[string]any{"fields": tc.before}); err != nil {
					t.Fatal(err)
				}
			}
			var logged bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logged, nil))
			def := map[string]any{"className": "Team"}
			for k, v := range tc.def {
				def[k] = v
			}
			err := declare.Apply(svc, []map[string]any{def}, tc.opts, log)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Apply: %v, want an error containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if !strings.Contains(logged.String(), tc.wantLog) {
				t.Errorf("log %q lacks %q", logged.String(), tc.wantLog)
			}
			if tc.want == nil {
				return
			}
			got := fieldTypes(t, svc, "Team")
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("field %s is %q, want %q (fields %v)", name, got[name], want, got)
				}
			}
			for name := range got {
				if _, ok := tc.want[name]; !ok && !strings.Contains("objectId createdAt updatedAt ACL", name) {
					t.Errorf("field %s kept, want it gone (fields %v)", name, got)
				}
			}
		})
	}
}

// TestApplyNotStrictGoesOn: without strict, a class that fails does not
// stop the next one.
func TestApplyNotStrictGoesOn(t *testing.T) {
	svc := openService(t)
	defs := []map[string]any{
		{"className": "Bad", "fields": map[string]any{"x": typ("Nope")}},
		{"className": "Good", "fields": map[string]any{"y": typ("Boolean")}},
	}
	err := declare.Apply(svc, defs, declare.Options{}, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "class Bad") {
		t.Fatalf("Apply: %v, want class Bad's error", err)
	}
	if got := fieldTypes(t, svc, "Good")["y"]; got != "Boolean" {
		t.Errorf("Good.y is %q, want Boolean", got)
	}
}

// TestApplyTwiceChangesNothing: a second start with the same definitions
// (numbers as a config file gives them) makes no schema update: indexes
// and CLPs compare equal whatever their numbers' types.
func TestApplyTwiceChangesNothing(t *testing.T) {
	var defs []map[string]any
	dec := json.NewDecoder(strings.NewReader(`[{"className": "Team",
		"fields": {"name": {"type": "String"}, "size": {"type": "Number"}},
		"indexes": {"name_1": {"name": 1}},
		"classLevelPermissions": {"find": {"*": true}, "get": {"*": true}, "count": {"*": true}, "create": {"*": true},
			"update": {"*": true}, "delete": {"*": true}, "addField": {}, "protectedFields": {"*": []}}}]`))
	dec.UseNumber()
	if err := dec.Decode(&defs); err != nil {
		t.Fatal(err)
	}
	svc := &counting{Service: openService(t)}
	log := slog.New(slog.DiscardHandler)
	if err := declare.Apply(svc, defs, declare.Options{Strict: true}, log); err != nil {
		t.Fatalf("first Apply: %v", err)
	}
	svc.updates = 0
	if err := declare.Apply(svc, defs, declare.Options{Strict: true, DeleteExtraFields: true}, log); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	if svc.updates != 0 {
		t.Errorf("second Apply made %d schema updates, want none", svc.updates)
	}
	s, _ := svc.Schema("Team")
	if idx, _ := s["indexes"].(map[string]any); idx["name_1"] == nil {
		t.Errorf("index name_1 missing: %v", s["indexes"])
	}
}

// TestApplyIndexes: a changed index is replaced, an undeclared one
// dropped, when the definition lists indexes; without an indexes key the
// class's indexes stay.
func TestApplyIndexes(t *testing.T) {
	svc := openService(t)
	log := slog.New(slog.DiscardHandler)
	fields := map[string]any{"a": typ("String"), "b": typ("Number")}
	apply := func(def map[string]any) {
		t.Helper()
		def["className"], def["fields"] = "Team", fields
		if err := declare.Apply(svc, []map[string]any{def}, declare.Options{Strict: true}, log); err != nil {
			t.Fatal(err)
		}
	}
	indexes := func() string {
		s, _ := svc.Schema("Team")
		idx, _ := s["indexes"].(map[string]any)
		delete(idx, "_id_")
		b, _ := json.Marshal(idx)
		return string(b)
	}
	apply(map[string]any{"indexes": map[string]any{"one": map[string]any{"a": 1}, "two": map[string]any{"b": 1}}})
	if got := indexes(); got != `{"one":{"a":1},"two":{"b":1}}` {
		t.Fatalf("indexes %s", got)
	}
	apply(map[string]any{"indexes": map[string]any{"one": map[string]any{"a": -1}}})
	if got := indexes(); got != `{"one":{"a":-1}}` {
		t.Errorf("after a change: indexes %s, want one replaced and two dropped", got)
	}
	apply(map[string]any{})
	if got := indexes(); got != `{"one":{"a":-1}}` {
		t.Errorf("without an indexes key: indexes %s, want them kept", got)
	}
}
