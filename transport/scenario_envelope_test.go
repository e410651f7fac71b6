package transport_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

const unauthorizedBody = `{"error":"unauthorized"}`

// TestScenarioEnvelope covers how credentials reach the server: X-Parse-*
// and X-Svc-* headers, the JS SDK's body envelope, basic auth, bad app ids.
func TestScenarioEnvelope(t *testing.T) {
	srv := servertest.Start(t, nil)
	id := mustCreate(t, srv, "Env", map[string]any{"name": "first"})
	svc := map[string]string{"X-Svc-Application-Id": servertest.AppID}
	svcMaster := map[string]string{"X-Svc-Application-Id": servertest.AppID, "X-Svc-Master-Key": servertest.MasterKey}
	textPlain := map[string]string{"Content-Type": "text/plain"}

	runScenarios(t, srv, []scenario{
		{name: "X-Parse app id reads", path: "/classes/Env/" + id, headers: servertest.App(),
			expectedStatus: 200, expectedContains: []string{`"name":"first"`, `"objectId":"` + id + `"`}},
		{name: "header names are case-insensitive", path: "/classes/Env/" + id,
			headers:        map[string]string{"x-parse-application-id": servertest.AppID},
			expectedStatus: 200, expectedContains: []string{`"name":"first"`}},
		{name: "X-Svc app id reads", path: "/classes/Env/" + id, headers: svc,
			expectedStatus: 200, expectedContains: []string{`"name":"first"`}},
		{name: "X-Svc master key writes", method: "PUT", path: "/classes/Env/" + id, headers: svcMaster,
			body: map[string]any{"svc": true}, expectedStatus: 200, expectedContains: []string{`"updatedAt"`}},
		{name: "missing app id", path: "/classes/Env/" + id,
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}, notExpectedContains: []string{`"code"`}},
		{name: "wrong app id", path: "/classes/Env/" + id, headers: map[string]string{"X-Parse-Application-Id": "nope"},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "wrong X-Svc app id", path: "/classes/Env", headers: map[string]string{"X-Svc-Application-Id": "nope"},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "wrong app id in body", method: "POST", path: "/classes/Env", headers: textPlain,
			body:           map[string]any{"_method": "GET", "_ApplicationId": "nope"},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "missing app id on write", method: "POST", path: "/classes/Env", body: map[string]any{"a": 1},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},

		// The JS SDK: POST text/plain, method and credentials in the body.
		{name: "body envelope find", method: "POST", path: "/classes/Env", headers: textPlain,
			body: map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_JavaScriptKey": "",
				"_ClientVersion": "js5.3.0", "_InstallationId": "inst-1", "_RevocableSession": "1",
				"_ContentType": "application/json", "_context": map[string]any{"a": 1}, "limit": 10, "count": 1},
			expectedStatus: 200, expectedContains: []string{`"results":[`, `"count":1`, `"name":"first"`}},
		{name: "body envelope get", method: "POST", path: "/classes/Env/" + id, headers: textPlain,
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_ClientVersion": "js5.3.0"},
			expectedStatus: 200, expectedContains: []string{`"objectId":"` + id + `"`}},
		{name: "body envelope update", method: "POST", path: "/classes/Env/" + id, headers: textPlain,
			body:           map[string]any{"_method": "PUT", "_ApplicationId": servertest.AppID, "name": "renamed"},
			expectedStatus: 200, expectedContains: []string{`"updatedAt"`}},
		{name: "update visible", path: "/classes/Env/" + id, headers: servertest.App(),
			expectedStatus: 200, expectedContains: []string{`"name":"renamed"`}},
		{name: "body envelope with the master key", method: "POST", path: "/classes/Env/" + id, headers: textPlain,
			body: map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_MasterKey": servertest.MasterKey,
				"_SessionToken": "r:ignored-with-master"},
			expectedStatus: 200, expectedContains: []string{`"objectId":"` + id + `"`}},
		{name: "body envelope with a conflicting header master key", method: "POST", path: "/classes/Env/" + id,
			headers:        map[string]string{"X-Parse-Master-Key": "wrong"},
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "body app id when the header app id is unknown", method: "POST", path: "/classes/Env/" + id,
			headers:        map[string]string{"X-Parse-Application-Id": "stale", "Content-Type": "text/plain"},
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID},
			expectedStatus: 200, expectedContains: []string{`"objectId":"` + id + `"`}},
		{name: "wrong body master key acts as a client", method: "POST", path: "/classes/Env", headers: textPlain,
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_MasterKey": "wrong", "count": 1},
			expectedStatus: 200, expectedContains: []string{`"count":1`}},
		{name: "lower-case _method", method: "POST", path: "/classes/Env/" + id, headers: textPlain,
			body:           map[string]any{"_method": "get", "_ApplicationId": servertest.AppID},
			expectedStatus: 200, expectedContains: []string{`"objectId":"` + id + `"`}},
		{name: "harmless SDK headers", path: "/classes/Env/" + id,
			headers: with(servertest.App(), "X-Parse-Revocable-Session", "1", "X-Parse-Client-Version", "js5.3.0",
				"X-Parse-Installation-Id", "inst-1", "X-Parse-App-Build-Version", "1", "X-Svc-Revocable-Session", "1"),
			expectedStatus: 200},
		{name: "_method with header credentials", method: "POST", path: "/classes/Env/" + id, headers: servertest.App(),
			body:           map[string]any{"_method": "GET"},
			expectedStatus: 200, expectedContains: []string{`"objectId":"` + id + `"`}},
		{name: "_context not an object", method: "POST", path: "/classes/Env", headers: textPlain,
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_context": 5},
			expectedStatus: 400, check: codeIs(107), expectedContains: []string{"Invalid object for context."}},
		{name: "_context a string that is not an object", method: "POST", path: "/classes/Env", headers: textPlain,
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_context": "[1,2]"},
			expectedStatus: 400, check: codeIs(107)},
		{name: "_context as a JSON string of an object", method: "POST", path: "/classes/Env", headers: textPlain,
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_context": `{"a":1}`},
			expectedStatus: 200, expectedContains: []string{`"results"`}},
		{name: "cloud context header not an object", path: "/classes/Env",
			headers:        with(servertest.App(), "X-Parse-Cloud-Context", "nope"),
			expectedStatus: 400, check: codeIs(107), expectedContains: []string{"Invalid object for context."}},
		{name: "cloud context header null", path: "/classes/Env",
			headers:        with(servertest.App(), "X-Parse-Cloud-Context", "null"),
			expectedStatus: 400, check: codeIs(107)},
		{name: "_context the string null", method: "POST", path: "/classes/Env", headers: textPlain,
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_context": "null"},
			expectedStatus: 400, check: codeIs(107)},
		{name: "X-Svc cloud context header not an object", path: "/classes/Env",
			headers:        with(servertest.App(), "X-Svc-Cloud-Context", "[]"),
			expectedStatus: 400, check: codeIs(107)},
		{name: "cloud context header object", path: "/classes/Env",
			headers:        with(servertest.App(), "X-Parse-Cloud-Context", `{"a":1}`),
			expectedStatus: 200},

		// Basic auth.
		{name: "basic auth with the master key", method: "PUT", path: "/classes/Env/" + id,
			headers:        map[string]string{"Authorization": basic(servertest.AppID, servertest.MasterKey)},
			body:           map[string]any{"basic": 1},
			expectedStatus: 200, expectedContains: []string{`"updatedAt"`}},
		{name: "basic auth with a javascript key (none configured)", path: "/classes/Env/" + id,
			headers:        map[string]string{"Authorization": basic(servertest.AppID, "javascript-key=anything")},
			expectedStatus: 200, expectedContains: []string{`"basic":1`}},
		{name: "basic auth scheme is case-insensitive", path: "/classes/Env/" + id,
			headers:        map[string]string{"Authorization": "bAsIc " + basic(servertest.AppID, servertest.MasterKey)[6:]},
			expectedStatus: 200},
		{name: "basic auth with a wrong app id", path: "/classes/Env/" + id,
			headers:        map[string]string{"Authorization": basic("nope", servertest.MasterKey)},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "basic auth garbage", path: "/classes/Env/" + id,
			headers:        map[string]string{"Authorization": "Basic !!!"},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
	})

	t.Run("body credentials never reach the object", func(t *testing.T) {
		res := srv.Do(t, "POST", "/classes/EnvBody", map[string]any{
			"_ApplicationId": servertest.AppID, "_JavaScriptKey": "js", "_MasterKey": servertest.MasterKey,
			"_SessionToken": "r:abc", "_InstallationId": "inst-1", "_ClientVersion": "js5.3.0",
			"_RevocableSession": "1", "_ContentType": "application/json", "_context": map[string]any{"x": 1},
			"title": "kept",
		}, textPlain)
		if res.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		got := mustGet(t, srv, "EnvBody", res.Map()["objectId"].(string))
		if got["title"] != "kept" {
			t.Errorf("title lost: %v", got)
		}
		for k := range got {
			if k[0] == '_' {
				t.Errorf("envelope key %s stored in the object: %v", k, got)
			}
		}
		list := srv.Do(t, "GET", "/classes/EnvBody", nil, servertest.Master())
		for _, k := range []string{"_ApplicationId", "_MasterKey", "_SessionToken", "_context", "_ClientVersion"} {
			if strings.Contains(string(list.Body), k) {
				t.Errorf("%s visible in a listing: %s", k, list.Body)
			}
		}
	})
}

// TestScenarioMountPath serves the API under a custom mount path only.
func TestScenarioMountPath(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.MountPath = "/api/v1" })
	runScenarios(t, srv, []scenario{
		{name: "create under the mount", method: "POST", path: "/classes/Mounted", headers: servertest.Master(),
			body: map[string]any{"a": 1}, expectedStatus: 201,
			expectedHeaders: map[string]string{"Location": ""},
			check: func(t testing.TB, res servertest.Response) {
				if loc := res.Header.Get("Location"); !strings.Contains(loc, "/api/v1/classes/Mounted/") {
					t.Errorf("Location %q is not under the mount path", loc)
				}
			}},
		{name: "find under the mount", path: "/classes/Mounted", headers: servertest.App(),
			expectedStatus: 200, expectedContains: []string{`"a":1`}},
		{name: "health under the mount", path: "/health", expectedStatus: 200, expectedContains: []string{`{"status":"ok"}`}},
		{name: "default mount is not served", root: true, path: "/parse/classes/Mounted", headers: servertest.App(),
			expectedStatus: 404},
		{name: "root path is not served", root: true, path: "/classes/Mounted", headers: servertest.App(),
			expectedStatus: 404},
		{name: "mount path prefix of another word", root: true, path: "/api/v1x/classes/Mounted", headers: servertest.App(),
			expectedStatus: 404},
	})
}

// TestScenarioClientKeys: once any client key is configured, one must match.
func TestScenarioClientKeys(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.JavaScriptKey = "js-secret" })
	id := mustCreate(t, srv, "Keys", map[string]any{"v": 1})
	path := "/classes/Keys/" + id
	runScenarios(t, srv, []scenario{
		{name: "app id alone", path: path, headers: servertest.App(),
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "wrong javascript key", path: path, headers: with(servertest.App(), "X-Parse-Javascript-Key", "nope"),
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "right javascript key", path: path, headers: with(servertest.App(), "X-Parse-Javascript-Key", "js-secret"),
			expectedStatus: 200, expectedContains: []string{`"v":1`}},
		{name: "right javascript key as X-Svc", path: path,
			headers:        map[string]string{"X-Svc-Application-Id": servertest.AppID, "X-Svc-Javascript-Key": "js-secret"},
			expectedStatus: 200},
		{name: "right key under another key's header", path: path, headers: with(servertest.App(), "X-Parse-Client-Key", "js-secret"),
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "body javascript key", method: "POST", path: path, headers: map[string]string{"Content-Type": "text/plain"},
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_JavaScriptKey": "js-secret"},
			expectedStatus: 200, expectedContains: []string{`"v":1`}},
		{name: "wrong body javascript key", method: "POST", path: path, headers: map[string]string{"Content-Type": "text/plain"},
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_JavaScriptKey": "nope"},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "basic auth javascript key", path: path,
			headers:        map[string]string{"Authorization": basic(servertest.AppID, "javascript-key=js-secret")},
			expectedStatus: 200},
		{name: "basic auth wrong javascript key", path: path,
			headers:        map[string]string{"Authorization": basic(servertest.AppID, "javascript-key=nope")},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "master key needs no client key", path: path, headers: servertest.Master(), expectedStatus: 200},
		{name: "wrong master key is no key", path: path, headers: with(servertest.App(), "X-Parse-Master-Key", "nope"),
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
	})
}

// TestScenarioNoClientKeys: without configured client keys any key passes.
func TestScenarioNoClientKeys(t *testing.T) {
	srv := servertest.Start(t, nil)
	id := mustCreate(t, srv, "Keys", map[string]any{"v": 1})
	path := "/classes/Keys/" + id
	runScenarios(t, srv, []scenario{
		{name: "app id alone", path: path, headers: servertest.App(), expectedStatus: 200},
		{name: "any javascript key", path: path, headers: with(servertest.App(), "X-Parse-Javascript-Key", "whatever"),
			expectedStatus: 200},
		{name: "any client key", path: path, headers: with(servertest.App(), "X-Parse-Client-Key", "whatever"),
			expectedStatus: 200},
		{name: "wrong master key acts as a client", path: path, headers: with(servertest.App(), "X-Parse-Master-Key", "nope"),
			expectedStatus: 200},
	})
}

// TestScenarioMasterKeyIPs refuses the master key from outside the allow list.
func TestScenarioMasterKeyIPs(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.MasterKeyIPs = []string{"10.9.9.9"}
		o.ReadOnlyMasterKey = "ro-key"
	})
	runScenarios(t, srv, []scenario{
		{name: "app id alone still works", path: "/classes/IPs", headers: servertest.App(), expectedStatus: 200},
		{name: "master key from a disallowed address", path: "/classes/IPs", headers: servertest.Master(),
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "master key in basic auth from a disallowed address", path: "/classes/IPs",
			headers:        map[string]string{"Authorization": basic(servertest.AppID, servertest.MasterKey)},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "master key in the body from a disallowed address", method: "POST", path: "/classes/IPs",
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_MasterKey": servertest.MasterKey},
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
		{name: "read-only master key from a disallowed address", path: "/classes/IPs",
			headers:        with(servertest.App(), "X-Parse-Master-Key", "ro-key"),
			expectedStatus: 403, expectedContains: []string{unauthorizedBody}},
	})
}

// TestScenarioReadOnlyMasterKey reads as master and fails every write.
func TestScenarioReadOnlyMasterKey(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.ReadOnlyMasterKey = "ro-key" })
	id := mustCreate(t, srv, "RO", map[string]any{"v": 1})
	ro := with(servertest.App(), "X-Parse-Master-Key", "ro-key")
	before := snapshot(t, srv, "RO")
	runScenarios(t, srv, []scenario{
		{name: "get", path: "/classes/RO/" + id, headers: ro, expectedStatus: 200, expectedContains: []string{`"v":1`}},
		{name: "find", path: "/classes/RO?count=1", headers: ro, expectedStatus: 200, expectedContains: []string{`"count":1`}},
		{name: "create", method: "POST", path: "/classes/RO", headers: ro, body: map[string]any{"v": 2},
			expectedStatus: 400, check: codeIs(119), expectedContains: []string{"read-only masterKey"}},
		{name: "update", method: "PUT", path: "/classes/RO/" + id, headers: ro, body: map[string]any{"v": 2},
			expectedStatus: 400, check: codeIs(119)},
		{name: "delete", method: "DELETE", path: "/classes/RO/" + id, headers: ro,
			expectedStatus: 400, check: codeIs(119)},
		{name: "batch item", method: "POST", path: "/batch", headers: ro,
			body: map[string]any{"requests": []any{
				map[string]any{"method": "PUT", "path": "/parse/classes/RO/" + id, "body": map[string]any{"v": 3}}}},
			expectedStatus: 200, expectedContains: []string{`"code":119`}},
		{name: "transaction", method: "POST", path: "/batch", headers: ro,
			body: map[string]any{"transaction": true, "requests": []any{
				map[string]any{"method": "PUT", "path": "/parse/classes/RO/" + id, "body": map[string]any{"v": 3}}}},
			expectedStatus: 400, check: codeIs(119)},
		{name: "read-only key in basic auth", method: "PUT", path: "/classes/RO/" + id,
			headers: map[string]string{"Authorization": basic(servertest.AppID, "ro-key")}, body: map[string]any{"v": 2},
			expectedStatus: 400, check: codeIs(119)},
	})
	if after := snapshot(t, srv, "RO"); after != before {
		t.Errorf("read-only key changed data:\nbefore %s\nafter  %s", before, after)
	}
}

// TestScenarioCORSAndHealth: CORS on every reply, preflight, health, 404.
func TestScenarioCORSAndHealth(t *testing.T) {
	srv := servertest.Start(t, nil)
	cors := map[string]string{
		"Access-Control-Allow-Origin":   "*",
		"Access-Control-Allow-Methods":  "GET,PUT,POST,DELETE,OPTIONS",
		"Access-Control-Allow-Headers":  "",
		"Access-Control-Expose-Headers": "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id",
	}
	runScenarios(t, srv, []scenario{
		{name: "preflight", method: "OPTIONS", path: "/classes/Anything", expectedStatus: 200,
			expectedContains: []string{"OK"}, expectedHeaders: cors},
		{name: "preflight anywhere", method: "OPTIONS", root: true, path: "/whatever/else", expectedStatus: 200,
			expectedContains: []string{"OK"}, expectedHeaders: cors},
		{name: "preflight without credentials on a master route", method: "OPTIONS", path: "/batch",
			expectedStatus: 200, expectedHeaders: cors},
		{name: "health at the root", root: true, path: "/health", expectedStatus: 200,
			expectedContains: []string{`{"status":"ok"}`}, expectedHeaders: cors},
		{name: "health under the mount", path: "/health", expectedStatus: 200,
			expectedContains: []string{`{"status":"ok"}`}, expectedHeaders: cors},
		{name: "health with POST", method: "POST", path: "/health", expectedStatus: 200,
			expectedContains: []string{`"status":"ok"`}},
		{name: "success carries CORS", path: "/classes/Cors", headers: servertest.App(), expectedStatus: 200,
			expectedHeaders: cors},
		{name: "403 carries CORS", path: "/classes/Cors", expectedStatus: 403, expectedHeaders: cors},
		{name: "400 carries CORS", path: "/classes/Cors?limit=x", headers: servertest.App(), expectedStatus: 400,
			expectedHeaders: cors, check: codeIs(117)},
		{name: "404 object carries CORS", path: "/classes/Cors/nothere", headers: servertest.App(), expectedStatus: 404,
			expectedHeaders: cors, check: codeIs(101)},
		{name: "unknown route under the mount", path: "/nothing/here", headers: servertest.App(), expectedStatus: 404,
			expectedHeaders: cors},
		{name: "unknown method on a known path", method: "PATCH", path: "/classes/Cors", headers: servertest.App(),
			expectedStatus: 404, expectedHeaders: cors},
		{name: "unknown route outside the mount", root: true, path: "/nothing", expectedStatus: 404, expectedHeaders: cors},
		{name: "allowed origin is echoed", path: "/classes/Cors", headers: with(servertest.App(), "Origin", "https://x.example"),
			expectedStatus: 200, expectedHeaders: map[string]string{"Access-Control-Allow-Origin": "*"}},
	})
}

func BenchmarkScenario_Health(b *testing.B) {
	srv := servertest.Start(b, nil)
	benchScenario(b, srv, scenario{path: "/health", expectedStatus: 200})
}

func BenchmarkScenario_Get_BodyEnvelope(b *testing.B) {
	srv := servertest.Start(b, nil)
	id := mustCreate(b, srv, "Bench", map[string]any{"v": 1})
	benchScenario(b, srv, scenario{method: "POST", path: "/classes/Bench/" + id,
		headers:        map[string]string{"Content-Type": "text/plain"},
		body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "_ClientVersion": "js5.3.0"},
		expectedStatus: 200})
}
