package cloud_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

const loginsJS = `
Parse.Cloud.beforeLogin((req) => {
  if (req.object.get('username') === 'banned') { throw new Parse.Error(101, 'banned: ' + req.object.className); }
});
Parse.Cloud.afterLogin(async (req) => {
  await new Parse.Object('LoginLog', { who: req.object.get('username'), asUser: req.user.id === req.object.id })
    .save(null, { useMasterKey: true });
});
Parse.Cloud.afterLogout(async (req) => {
  await new Parse.Object('LogoutLog', { session: req.object.className, user: req.object.get('user').id })
    .save(null, { useMasterKey: true });
});
Parse.Cloud.define('checked', (req) => 'ok ' + req.params.n, (req) => {
  if (req.params.n > 10) { throw 'too big'; }
});
Parse.Cloud.define('checkedAsync', () => 'ok', async (req) => {
  if (!req.params.n) { throw new Parse.Error(137, 'no n'); }
});
`

func startScript(t *testing.T, js string) *servertest.Server {
	t.Helper()
	return startScriptWith(t, js, nil)
}

// startScriptWith is startScript with more options set by edit.
func startScriptWith(t *testing.T, js string, edit func(*config.Options)) *servertest.Server {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.js"), []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	return servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join(dir, "main.js")
		if edit != nil {
			edit(o)
		}
	})
}

func TestLoginTriggersAndValidatorFunctions(t *testing.T) {
	srv := startScript(t, loginsJS)
	for _, u := range []string{"ada", "banned"} {
		if res := srv.Do(t, "POST", "/users", map[string]any{"username": u, "password": "p"}, servertest.App()); res.Status != 201 {
			t.Fatalf("sign-up %s: %d %s", u, res.Status, res.Body)
		}
	}
	login := srv.Do(t, "POST", "/login", map[string]any{"username": "ada", "password": "p"}, servertest.App())
	token, _ := login.Map()["sessionToken"].(string)
	if login.Status != 200 || token == "" {
		t.Fatalf("login: %d %s", login.Status, login.Body)
	}
	user := withHeader(servertest.App(), "X-Parse-Session-Token", token)
	run(t, srv, []scenario{
		{name: "beforeLogin refuses", method: "POST", path: "/login", body: map[string]any{"username": "banned", "password": "p"},
			status: 404, has: []string{`"code":101`, "banned: _User"}},
		{name: "afterLogin ran as the user", method: "GET", path: `/classes/LoginLog?where={"who":"ada"}`, headers: servertest.Master(),
			status: 200, has: []string{`"asUser":true`}},
		{name: "no afterLogin for the refused", method: "GET", path: `/classes/LoginLog?where={"who":"banned"}`, headers: servertest.Master(),
			status: 200, has: []string{`"results":[]`}},
		{name: "logout", method: "POST", path: "/logout", headers: user, status: 200},
		{name: "afterLogout saw the session", method: "GET", path: "/classes/LogoutLog", headers: servertest.Master(),
			status: 200, has: []string{`"session":"_Session"`, `"user":"` + login.Map()["objectId"].(string) + `"`}},
		{name: "validator function passes", method: "POST", path: "/functions/checked", body: map[string]any{"n": 2}, status: 200,
			has: []string{`"result":"ok 2"`}},
		{name: "validator function refuses with 142", method: "POST", path: "/functions/checked", body: map[string]any{"n": 20}, status: 400,
			has: []string{`{"code":142,"error":"too big"}`}},
		{name: "async validator keeps a Parse.Error's code", method: "POST", path: "/functions/checkedAsync", status: 400,
			has: []string{`{"code":137,"error":"no n"}`}},
		{name: "async validator passes", method: "POST", path: "/functions/checkedAsync", body: map[string]any{"n": 1}, status: 200},
	})
	if !strings.Contains(string(login.Body), `"username":"ada"`) {
		t.Errorf("login reply %s", login.Body)
	}
}
