package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// masterOnly are the built-in classes only the master key may touch.
var masterOnly = []string{"_Hooks", "_JobSchedule", "_JobStatus", "_PushStatus", "_Audience", "_Idempotency"}

// writeDump writes a mongoexport directory: collection name -> lines.
func writeDump(t *testing.T, collections map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, lines := range collections {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// importDump runs the import command into a new data file.
func importDump(t *testing.T, dump string) (db string, code int, out string) {
	t.Helper()
	db = filepath.Join(t.TempDir(), "imported.db")
	code, out = call("import", "--from", dump, "--databaseURI", db, "--progress", "none")
	return db, code, out
}

// checkMasterOnly asserts that a client with only the application id can
// neither read nor write class, and that the master key can.
func checkMasterOnly(t *testing.T, srv *servertest.Server, class, id string) {
	t.Helper()
	app := servertest.App()
	for _, req := range []struct{ method, path string }{
		{"GET", "/classes/" + class},
		{"GET", "/classes/" + class + "/" + id},
		{"POST", "/classes/" + class},
		{"PUT", "/classes/" + class + "/" + id},
		{"DELETE", "/classes/" + class + "/" + id},
	} {
		var body any
		if req.method == "POST" || req.method == "PUT" {
			body = map[string]any{"url": "https://attacker.example/hook", "className": "_User", "triggerName": "beforeSave"}
		}
		r := srv.Do(t, req.method, req.path, body, app)
		if r.Status != 400 || r.Map()["code"] != float64(119) {
			t.Errorf("%s %s with the application id only: %d %s, want 119", req.method, req.path, r.Status, r.Body)
		}
	}
	if r := srv.Do(t, "GET", "/classes/"+class+"/"+id, nil, servertest.Master()); r.Status != 200 {
		t.Errorf("master GET %s/%s: %d %s", class, id, r.Status, r.Body)
	}
}

// TestImportKeepsMasterOnlyClassesMasterOnly: a Parse dump holding the
// server's own bookkeeping classes, with no _SCHEMA entry for them (the
// usual case) or with one granting the public everything, gives classes
// only the master key can read or write.
func TestImportKeepsMasterOnlyClassesMasterOnly(t *testing.T) {
	publicCLP := `"_metadata":{"class_permissions":{"get":{"*":true},"find":{"*":true},"count":{"*":true},"create":{"*":true},"update":{"*":true},"delete":{"*":true},"addField":{"*":true},"protectedFields":{}}}`
	for _, withSchema := range []bool{false, true} {
		name := map[bool]string{false: "no _SCHEMA entry", true: "public _SCHEMA entry"}[withSchema]
		t.Run(name, func(t *testing.T) {
			dump := map[string][]string{"Post": {`{"_id":"post000001","title":"hello"}`}}
			for i, class := range masterOnly {
				id := "obj" + strings.Repeat("0", 6) + string(rune('a'+i))
				dump[class] = []string{`{"_id":"` + id + `","functionName":"f","url":"http://127.0.0.1:1/"}`}
				if withSchema {
					dump["_SCHEMA"] = append(dump["_SCHEMA"], `{"_id":"`+class+`","objectId":"string",`+publicCLP+`}`)
				}
			}
			db, code, out := importDump(t, writeDump(t, dump))
			if code != 0 {
				t.Fatalf("import: %d %s", code, out)
			}
			srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = db })
			for i, class := range masterOnly {
				checkMasterOnly(t, srv, class, "obj"+strings.Repeat("0", 6)+string(rune('a'+i)))
			}
			if r := srv.Do(t, "GET", "/classes/Post/post000001", nil, servertest.App()); r.Status != 200 {
				t.Errorf("an ordinary class is public as before: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestMasterOnlyClassesOverREST: on a fresh server, and after the master
// key stored a public CLP for one through the schemas API, a client with
// the application id cannot read or write the master-only classes.
func TestMasterOnlyClassesOverREST(t *testing.T) {
	srv := servertest.Start(t, nil)
	m := servertest.Master()
	for _, class := range masterOnly {
		r := srv.Do(t, "POST", "/classes/"+class, map[string]any{"functionName": "f", "url": "http://127.0.0.1:1/"}, m)
		if r.Status != 201 {
			t.Fatalf("master create in %s: %d %s", class, r.Status, r.Body)
		}
		id, _ := r.Map()["objectId"].(string)
		checkMasterOnly(t, srv, class, id)
		public := map[string]any{"classLevelPermissions": map[string]any{
			"find": map[string]any{"*": true}, "get": map[string]any{"*": true}, "create": map[string]any{"*": true},
			"update": map[string]any{"*": true}, "delete": map[string]any{"*": true}}}
		srv.Do(t, "PUT", "/schemas/"+class, public, m) // refused or stored: either way it must not open the class
		checkMasterOnly(t, srv, class, id)
	}
}

// TestImportRefusesMalformedCLP: a _SCHEMA entry whose class-level
// permissions are malformed stops the import with a message naming the
// class, instead of leaving the class public.
func TestImportRefusesMalformedCLP(t *testing.T) {
	for name, meta := range map[string]string{
		"operation not an object": `{"class_permissions":{"find":"notobj","get":{"*":true}}}`,
		"grant not true":          `{"class_permissions":{"find":{"*":"yes"}}}`,
		"unknown operation":       `{"class_permissions":{"steal":{"*":true}}}`,
		"permissions not object":  `{"class_permissions":"public"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dump := writeDump(t, map[string][]string{
				"_SCHEMA": {`{"_id":"Secret","objectId":"string","note":"string","_metadata":` + meta + `}`},
				"Secret":  {`{"_id":"secret0001","note":"hidden"}`},
			})
			_, code, out := importDump(t, dump)
			if code == 0 || !strings.Contains(out, "malformed class-level permissions") || !strings.Contains(out, "Secret") {
				t.Errorf("import: %d %s", code, out)
			}
		})
	}
}

// TestImportRejectsBadObjectIDs: documents whose objectId is not
// Parse-shaped, or repeats an earlier document's, are not imported; the
// command lists them and exits with status 3, and the first of repeated
// documents is the one kept.
func TestImportRejectsBadObjectIDs(t *testing.T) {
	long := strings.Repeat("A", 100<<10)
	enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	dump := writeDump(t, map[string][]string{
		"Post": {
			enc(map[string]any{"_id": "goodPost01", "title": "kept"}),
			enc(map[string]any{"_id": "../../etc/passwd", "title": "path"}),
			enc(map[string]any{"_id": long, "title": "long"}),
			enc(map[string]any{"_id": "nul\x00byte", "title": "nul"}),
			enc(map[string]any{"_id": "dupPost001", "title": "first"}),
			enc(map[string]any{"_id": "dupPost001", "title": "second"}),
			enc(map[string]any{"_id": "goodPost02", "title": "kept"}),
		},
		"_Join:likes:Post": {`{"owningId":"goodPost01","relatedId":"../x"}`},
	})
	db, code, out := importDump(t, dump)
	if code != exitRejected {
		t.Errorf("import exit status %d, want %d: %s", code, exitRejected, out)
	}
	for _, want := range []string{`"../../etc/passwd"`, `"nul\x00byte"`, "(102400 bytes)", `"dupPost001": objectId repeats`, "4 documents were not imported"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %s:\n%s", want, out)
		}
	}
	got := storedObjects(t, db, "Post")
	if len(got) != 3 || got["goodPost01"] == "" || got["goodPost02"] == "" {
		t.Errorf("stored %d Posts: %v", len(got), got)
	}
	if !strings.Contains(got["dupPost001"], `"first"`) {
		t.Errorf("the repeated id keeps %s, want the first document", got["dupPost001"])
	}
	srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = db })
	r := srv.Do(t, "GET", "/classes/Post?count=1&limit=0", nil, servertest.Master())
	if r.Map()["count"] != float64(3) {
		t.Errorf("the server counts %s", r.Body)
	}
}
