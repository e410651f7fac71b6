package transport_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// upload stores a file with the master key and returns its stored name.
func upload(t testing.TB, srv *servertest.Server, name, contentType, body string) string {
	t.Helper()
	res := srv.Do(t, "POST", "/files/"+name, body, with(servertest.Master(), "Content-Type", contentType))
	stored, _ := res.Map()["name"].(string)
	if res.Status != 201 || stored == "" {
		t.Fatalf("upload %s: %d %s", name, res.Status, res.Body)
	}
	return stored
}

// sessionOf signs a user up and returns headers carrying its session.
func sessionOf(t *testing.T, srv *servertest.Server, name string) map[string]string {
	_, token := signUp(t, srv, name, "")
	return asUser(token)
}

// TestFilesUpload: both upload forms, the name rules, the size limit and
// the fileUpload rules, through the real server.
func TestFilesUpload(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.MaxUploadSize = 4096 })
	app, master := servertest.App(), servertest.Master()
	user := sessionOf(t, srv, "ann")
	text := func(h map[string]string) map[string]string { return with(h, "Content-Type", "text/plain") }
	b64 := base64.StdEncoding.EncodeToString([]byte("hello from the JS SDK"))
	jsForm := func(extra ...any) map[string]any {
		m := map[string]any{"base64": b64, "_ContentType": "text/plain", "_ApplicationId": servertest.AppID,
			"fileData": map[string]any{"metadata": map[string]any{"owner": "ann"}, "tags": map[string]any{"t": "1"}}}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	created := []string{`"name":"`, `_a.txt"`, `"url":"` + srv.URL + `/files/test-app/`}
	runScenarios(t, srv, []scenario{
		{name: "raw bytes, master key", method: "POST", path: "/files/a.txt", body: "hello", headers: text(master),
			expectedStatus: 201, expectedContains: created, expectedHeaders: map[string]string{"Location": ""}},
		{name: "raw bytes, signed-in user", method: "POST", path: "/files/a.txt", body: "hello", headers: text(user),
			expectedStatus: 201, expectedContains: created},
		{name: "public upload is off by default", method: "POST", path: "/files/a.txt", body: "hello", headers: text(app),
			expectedStatus: 400, check: msgIs(130, "File upload by public is disabled.")},
		{name: "JS SDK JSON form with the master key", method: "POST", path: "/files/a.txt",
			body: jsForm("_MasterKey", servertest.MasterKey), headers: map[string]string{"Content-Type": "text/plain"},
			expectedStatus: 201, expectedContains: created},
		{name: "JS SDK JSON form with a session", method: "POST", path: "/files/a.txt",
			body: jsForm("_SessionToken", user["X-Parse-Session-Token"]), expectedStatus: 201, expectedContains: created},
		{name: "JS SDK JSON form, public", method: "POST", path: "/files/a.txt", body: jsForm(),
			expectedStatus: 400, check: msgIs(130, "File upload by public is disabled.")},
		{name: "JS SDK JSON form, bad base64", method: "POST", path: "/files/a.txt",
			body: jsForm("_MasterKey", servertest.MasterKey, "base64", "%%%"), expectedStatus: 400, check: codeIs(130)},
		{name: "no credentials at all", method: "POST", path: "/files/a.txt", body: "not json", expectedStatus: 403},
		{name: "html by a user", method: "POST", path: "/files/page.html", body: "<b>x</b>", headers: text(user),
			expectedStatus: 400, check: msgIs(130, "File upload of extension html is disabled.")},
		{name: "svg by type, no extension", method: "POST", path: "/files/pic", body: "<svg/>",
			headers:        with(user, "Content-Type", "image/svg+xml"),
			expectedStatus: 400, check: msgIs(130, "File upload of extension svg is disabled.")},
		{name: "js by a user", method: "POST", path: "/files/app.js", body: "alert(1)", headers: text(user),
			expectedStatus: 400, check: codeIs(130)},
		{name: "html by the master key", method: "POST", path: "/files/page.html", body: "<b>x</b>", headers: text(master),
			expectedStatus: 201},
		{name: "space in the name: the specification's rule", method: "POST", path: "/files/my%20photo.png", body: "png", headers: text(master),
			expectedStatus: 400, check: msgIs(122, "Filename contains invalid characters.")},
		{name: "a dash too", method: "POST", path: "/files/my-photo.png", body: "png", headers: text(master),
			expectedStatus: 400, check: msgIs(122, "Filename contains invalid characters.")},
		{name: "empty body", method: "POST", path: "/files/a.txt", body: "", headers: text(master),
			expectedStatus: 400, check: msgIs(130, "Invalid file upload.")},
		{name: "no name", method: "POST", path: "/files", body: "x", headers: text(master),
			expectedStatus: 400, check: msgIs(122, "Filename not provided.")},
		{name: "too long", method: "POST", path: "/files/" + strings.Repeat("a", 129), body: "x", headers: text(master),
			expectedStatus: 400, check: msgIs(122, "Filename too long.")},
		{name: "leading dot", method: "POST", path: "/files/.htaccess", body: "x", headers: text(master),
			expectedStatus: 400, check: msgIs(122, "Filename contains invalid characters.")},
		{name: "encoded slash", method: "POST", path: "/files/a%2Fb.txt", body: "x", headers: text(master),
			expectedStatus: 400, check: msgIs(122, "Filename contains invalid characters.")},
		{name: "double dots", method: "POST", path: "/files/a..txt", body: "x", headers: text(master),
			expectedStatus: 400, check: codeIs(122)},
		{name: "backslash", method: "POST", path: "/files/a%5Cb.txt", body: "x", headers: text(master),
			expectedStatus: 400, check: codeIs(122)},
		{name: "over maxUploadSize", method: "POST", path: "/files/big.bin", body: strings.Repeat("x", 4097),
			headers: text(master), expectedStatus: 413, check: codeIs(129)},
		{name: "at maxUploadSize", method: "POST", path: "/files/big.bin", body: strings.Repeat("x", 4096),
			headers: text(master), expectedStatus: 201},
	})
	// A traversal the HTTP layer resolves away never reaches the files API.
	for _, p := range []string{"/files/../x.txt", "/files/%2e%2e/x.txt", "/files/%2e%2e", "/files/..%2Fx.txt"} {
		if res := srv.Do(t, "POST", p, "x", text(master)); res.Status == 201 {
			t.Errorf("POST %s stored a file: %s", p, res.Body)
		}
	}
}

// TestFilesUploadOptions: fileUpload and preserveFileName change who may
// upload what, and how it is named.
func TestFilesUploadOptions(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.Files.FileUpload = config.FileUploadOptions{EnableForPublic: true, FileExtensions: []string{"txt", "png"}}
		o.Files.PreserveFileName = true
	})
	user := sessionOf(t, srv, "bob")
	text := func(h map[string]string) map[string]string { return with(h, "Content-Type", "text/plain") }
	runScenarios(t, srv, []scenario{
		{name: "public allowed", method: "POST", path: "/files/a.txt", body: "x", headers: text(servertest.App()),
			expectedStatus: 201, expectedContains: []string{`"name":"a.txt"`, `/files/test-app/a.txt"`}},
		{name: "extension not listed", method: "POST", path: "/files/a.pdf", body: "x", headers: text(servertest.App()),
			expectedStatus: 400, check: msgIs(130, "File upload of extension pdf is disabled.")},
		{name: "users turned off", method: "POST", path: "/files/a.txt", body: "x", headers: text(user),
			expectedStatus: 400, check: msgIs(130, "File upload by authenticated user is disabled.")},
		{name: "master key is never refused", method: "POST", path: "/files/a.pdf", body: "x",
			headers: text(servertest.Master()), expectedStatus: 201},
	})
}

// TestFilesDownload: public reads with content type, ranges and the
// headers that keep active content from running.
func TestFilesDownload(t *testing.T) {
	srv := servertest.Start(t, nil)
	name := upload(t, srv, "hello.txt", "text/plain", "hello world")
	page := upload(t, srv, "page.html", "text/html", "<script>alert(1)</script>")
	p := "/files/test-app/" + name
	runScenarios(t, srv, []scenario{
		{name: "whole file, no keys", path: p, expectedStatus: 200, expectedContains: []string{"hello world"},
			expectedHeaders: map[string]string{"Content-Type": "text/plain", "Content-Length": "11",
				"X-Content-Type-Options": "nosniff", "Accept-Ranges": "bytes"}},
		{name: "range", path: p, headers: map[string]string{"Range": "bytes=0-4"}, expectedStatus: 206,
			check: bodyIs("hello"), expectedHeaders: map[string]string{"Content-Range": "bytes 0-4/11", "Content-Length": "5"}},
		{name: "open range", path: p, headers: map[string]string{"Range": "bytes=6-"}, expectedStatus: 206,
			check: bodyIs("world"), expectedHeaders: map[string]string{"Content-Range": "bytes 6-10/11"}},
		{name: "suffix range", path: p, headers: map[string]string{"Range": "bytes=-3"}, expectedStatus: 206,
			check: bodyIs("rld")},
		{name: "range past the end is clipped", path: p, headers: map[string]string{"Range": "bytes=6-99"},
			expectedStatus: 206, check: bodyIs("world")},
		{name: "unsatisfiable range", path: p, headers: map[string]string{"Range": "bytes=11-"}, expectedStatus: 416,
			expectedHeaders: map[string]string{"Content-Range": "bytes */11"}},
		{name: "several ranges: the whole file", path: p, headers: map[string]string{"Range": "bytes=0-1,3-4"},
			expectedStatus: 200, check: bodyIs("hello world")},
		{name: "HEAD", method: "HEAD", path: p, expectedStatus: 200, check: bodyIs(""),
			expectedHeaders: map[string]string{"Content-Length": "11", "Content-Type": "text/plain"}},
		{name: "malformed range", path: p, headers: map[string]string{"Range": "bytes=x-y"}, expectedStatus: 416},
		{name: "active content is an attachment", path: "/files/test-app/" + page, expectedStatus: 200,
			expectedHeaders: map[string]string{"Content-Type": "text/html", "X-Content-Type-Options": "nosniff",
				"Content-Disposition": "attachment; filename=" + page}},
		{name: "plain text is inline", path: p, expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) {
				if d := res.Header.Get("Content-Disposition"); d != "" {
					t.Errorf("Content-Disposition %q on plain text", d)
				}
			}},
		{name: "other application id", path: "/files/other-app/" + name, expectedStatus: 403,
			check: msgIs(119, "Invalid application ID.")},
		{name: "missing file", path: "/files/test-app/nope.txt", expectedStatus: 404, check: msgIs(101, "File not found.")},
		{name: "no such route", method: "PUT", path: p, headers: servertest.Master(), expectedStatus: 404,
			check: codeIs(108)},
		{name: "too many segments", path: "/files/test-app/a/b", expectedStatus: 404, check: codeIs(108)},
		{name: "metadata of a file without any", path: "/files/test-app/metadata/" + name, expectedStatus: 200,
			check: bodyIs("{}")},
	})
	js := map[string]any{"base64": base64.StdEncoding.EncodeToString([]byte("x")), "_ApplicationId": servertest.AppID,
		"_MasterKey": servertest.MasterKey, "fileData": map[string]any{"metadata": map[string]any{"owner": "ann"}}}
	res := srv.Do(t, "POST", "/files/m.txt", js, nil)
	stored, _ := res.Map()["name"].(string)
	if res = srv.Do(t, "GET", "/files/test-app/metadata/"+stored, nil, nil); string(res.Body) != `{"metadata":{"owner":"ann"}}` {
		t.Errorf("metadata: %d %s", res.Status, res.Body)
	}
}

func bodyIs(want string) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		if string(res.Body) != want {
			t.Errorf("body %q, want %q", res.Body, want)
		}
	}
}

// TestFilesDelete: master key only; the file is gone afterwards.
func TestFilesDelete(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.ReadOnlyMasterKey = "read-only" })
	name := upload(t, srv, "gone.txt", "text/plain", "bye")
	user := sessionOf(t, srv, "cy")
	runScenarios(t, srv, []scenario{
		{name: "application id only", method: "DELETE", path: "/files/" + name, headers: servertest.App(),
			expectedStatus: 403, expectedContains: []string{"unauthorized: master key is required"}},
		{name: "a user", method: "DELETE", path: "/files/" + name, headers: user, expectedStatus: 403},
		{name: "read-only master key", method: "DELETE", path: "/files/" + name,
			headers: with(servertest.App(), "X-Parse-Master-Key", "read-only"), expectedStatus: 400, check: codeIs(119)},
		{name: "still there", path: "/files/test-app/" + name, expectedStatus: 200},
		{name: "master key", method: "DELETE", path: "/files/" + name, headers: servertest.Master(),
			expectedStatus: 200, check: bodyIs("{}")},
		{name: "gone", path: "/files/test-app/" + name, expectedStatus: 404},
		{name: "twice", method: "DELETE", path: "/files/" + name, headers: servertest.Master(),
			expectedStatus: 400, check: msgIs(153, "Could not delete file.")},
	})
}

// TestFilesFieldURL: a File value is stored by name and every read gives
// it the file's current URL, whatever url the client saved.
func TestFilesFieldURL(t *testing.T) {
	for _, tc := range []struct {
		name, public string
	}{{"listen address", ""}, {"publicServerURL", "https://cdn.example.com/parse/"}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := servertest.Start(t, func(o *config.Options) { o.PublicServerURL = tc.public })
			base := srv.URL
			if tc.public != "" {
				base = strings.TrimRight(tc.public, "/")
			}
			name := upload(t, srv, "pic.png", "image/png", "png bytes")
			id := mustCreate(t, srv, "Album", map[string]any{"title": "x",
				"cover": map[string]any{"__type": "File", "name": name, "url": "http://stale.example/" + name}})
			want := base + "/files/test-app/" + name
			check := func(where string, obj map[string]any) {
				f, _ := obj["cover"].(map[string]any)
				if f["url"] != want || f["name"] != name || f["__type"] != "File" {
					t.Errorf("%s: cover = %v, want url %s", where, f, want)
				}
			}
			check("get", mustGet(t, srv, "Album", id))
			for _, o := range listAll(t, srv, "Album") {
				check("find", o)
			}
			// The stored value is untouched: a second read says the same.
			check("get again", mustGet(t, srv, "Album", id))
			// Includes go through the same reply path.
			mustCreate(t, srv, "Track", map[string]any{"album": map[string]any{"__type": "Pointer", "className": "Album", "objectId": id}})
			res := srv.Do(t, "GET", `/classes/Track?include=album`, nil, servertest.App())
			results, _ := res.Map()["results"].([]any)
			if len(results) != 1 {
				t.Fatalf("tracks: %s", res.Body)
			}
			album, _ := results[0].(map[string]any)["album"].(map[string]any)
			check("include", album)
		})
	}
}

// TestFilesServedInlineOnlyWhenSafe: a signed-in user's upload is shown
// inline only when the one type a browser would read from its stored
// Content-Type is on the inline-safe list; anything else, lists and
// parameters included, is an attachment sent with a single clean type and
// nosniff, so no upload runs as a page on the API's origin.
func TestFilesServedInlineOnlyWhenSafe(t *testing.T) {
	srv := servertest.Start(t, nil)
	user := sessionOf(t, srv, "uploader")
	for _, tc := range []struct {
		stored, served string
		inline         bool
	}{
		{"text/plain,text/html", "text/html", false},
		{"application/rdf+xml", "application/rdf+xml", false},
		{"application/mathml+xml", "application/mathml+xml", false},
		{"application/vnd.wap.xhtml+xml", "application/vnd.wap.xhtml+xml", false},
		{"text/x-html", "text/x-html", false},
		{"TEXT/HTML ; charset=utf-8", "text/html; charset=utf-8", false},
		{"text/plain, */*, text/html;x=1", "text/html", false},
		{`text/plain; x="a,b", text/xml`, "text/xml", false},
		{"application/x-unknown", "application/x-unknown", false},
		{"not a type", "application/octet-stream", false},
		{"image/png", "image/png", true},
		{" Image/JPEG ", "image/jpeg", true},
		{"text/plain; charset=utf-8", "text/plain; charset=utf-8", true},
		{"text/html,text/plain", "text/plain", true},
		{"application/pdf", "application/pdf", true},
		{"video/mp4", "video/mp4", true},
	} {
		t.Run(tc.stored, func(t *testing.T) {
			res := srv.Do(t, "POST", "/files/evil.txt", "<script>alert(document.domain)</script>",
				with(user, "Content-Type", tc.stored))
			name, _ := res.Map()["name"].(string)
			if res.Status != 201 || name == "" {
				t.Fatalf("upload: %d %s", res.Status, res.Body)
			}
			got := srv.Do(t, "GET", "/files/"+servertest.AppID+"/"+name, nil, nil)
			disposition := got.Header.Get("Content-Disposition")
			if got.Status != 200 || got.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET: %d, nosniff %q", got.Status, got.Header.Get("X-Content-Type-Options"))
			}
			if ct := got.Header.Get("Content-Type"); ct != tc.served {
				t.Errorf("Content-Type %q, want %q", ct, tc.served)
			}
			if inline := disposition == ""; inline != tc.inline {
				t.Errorf("Content-Disposition %q, want inline %v", disposition, tc.inline)
			}
			if !tc.inline && !strings.HasPrefix(disposition, "attachment") {
				t.Errorf("Content-Disposition %q", disposition)
			}
		})
	}
}
