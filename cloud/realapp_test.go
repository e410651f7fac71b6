package cloud_test

import (
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestRealApp loads testdata/realapp, cloud code written as for Parse
// Server (several files, JSON data, triggers on users and a class, a job,
// SDK and Node names), and runs each of its functions through REST.
func TestRealApp(t *testing.T) {
	srv := servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join("testdata", "realapp", "main.js")
	})
	signup := srv.Do(t, "POST", "/users", map[string]any{"username": "Ada Lovelace", "password": "pw", "email": " Ada@Example.com"}, servertest.App())
	token, _ := signup.Map()["sessionToken"].(string)
	if signup.Status != 201 || token == "" {
		t.Fatalf("sign up: %d %s", signup.Status, signup.Body)
	}
	user := withHeader(servertest.App(), "X-Parse-Session-Token", token)
	srv.Do(t, "PUT", "/config", map[string]any{"params": map[string]any{"currency": "USD"}}, servertest.Master())
	run(t, srv, []scenario{
		{name: "afterSave on _User made the profile; beforeSave hashed the e-mail", method: "POST", path: "/functions/myProfile",
			headers: user, status: 200, has: []string{`"slug":"ada-lovelace"`, `"badges":[]`, `"hash":"3e3417d7ef77d5932a6734b916515ed5"`}},
		{name: "placeOrder runs beforeSave from a module with a JSON price list", method: "POST", path: "/functions/placeOrder",
			body: map[string]any{"qty": 3, "item": "book"}, headers: user, status: 200, has: []string{`"total":37.5`, `"ref":"Ym9vazoz"`}},
		{name: "a second order", method: "POST", path: "/functions/placeOrder", body: map[string]any{"qty": 1, "item": "gift"},
			headers: user, status: 200, has: []string{`"total":30`}},
		{name: "beforeSave refuses an unknown item", method: "POST", path: "/functions/placeOrder", body: map[string]any{"qty": 1, "item": "car"},
			headers: user, status: 400, has: []string{`"code":162`, "Unknown item car"}},
		{name: "the validator refuses the public", method: "POST", path: "/functions/placeOrder", body: map[string]any{"qty": 1, "item": "pen"},
			status: 400, has: []string{`"code":142`}},
		{name: "aggregate, distinct, Query.or, Config", method: "POST", path: "/functions/stats", headers: servertest.Master(), status: 200,
			has: []string{`"byItem":[{"objectId":"book","qty":3},{"objectId":"gift","qty":1}]`, `"items":["book","gift"]`, `"big":1`, `"currency":"USD"`}},
		{name: "URL, HMAC, randomUUID, process.env", method: "POST", path: "/functions/signedLink", body: map[string]any{"name": "a b.png"},
			status: 200, has: []string{`"url":"https://cdn.example.com/files?name=a+b.png\u0026sig=`, `"id":36`, `"env":true`}},
		{name: "the job starts through Parse.Cloud.startJob", method: "POST", path: "/functions/runAwards", headers: servertest.Master(),
			status: 200, has: []string{`"result":true`}},
	})
	srv.Service.WaitJobs()
	run(t, srv, []scenario{
		{name: "the job awarded the badge with addUnique", method: "POST", path: "/functions/myProfile", headers: user, status: 200,
			has: []string{`"badges":["big-spender"]`}},
		{name: "the job's message is in its status", method: "GET", path: "/classes/_JobStatus", headers: servertest.Master(), status: 200,
			has: []string{`"status":"succeeded"`, `"message":"awarded 1"`}},
	})
}
