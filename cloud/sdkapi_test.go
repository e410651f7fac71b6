package cloud_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// serverSideOnly are the official SDK's public names that mean nothing
// inside a server, each with why; a name listed here is not looked for
// in cloud code. A prefix ending in '.' covers everything under it.
var serverSideOnly = map[string]string{
	// The local datastore and offline queues live in a client.
	"Parse.LocalDatastore":                     "client-side cache",
	"Parse.LocalDatastore.":                    "client-side cache",
	"Parse.EventuallyQueue":                    "client-side offline queue",
	"Parse.enableLocalDatastore":               "client-side cache",
	"Parse.isLocalDatastoreEnabled":            "client-side cache",
	"Parse.dumpLocalDatastore":                 "client-side cache",
	"Parse.setLocalDatastoreController":        "client-side cache",
	"Parse.Object.pinAll":                      "client-side cache",
	"Parse.Object.pinAllWithName":              "client-side cache",
	"Parse.Object.unPinAll":                    "client-side cache",
	"Parse.Object.unPinAllWithName":            "client-side cache",
	"Parse.Object.unPinAllObjects":             "client-side cache",
	"Parse.Object.unPinAllObjectsWithName":     "client-side cache",
	"Parse.Object.enableSingleInstance":        "client-side object identity",
	"Parse.Object.disableSingleInstance":       "client-side object identity",
	".prototype.pin":                           "client-side cache",
	".prototype.unPin":                         "client-side cache",
	".prototype.isPinned":                      "client-side cache",
	".prototype.pinWithName":                   "client-side cache",
	".prototype.unPinWithName":                 "client-side cache",
	".prototype.fetchFromLocalDatastore":       "client-side cache",
	".prototype.saveEventually":                "client-side offline queue",
	".prototype.destroyEventually":             "client-side offline queue",
	".prototype.toOfflinePointer":              "client-side cache",
	"Parse.Query.prototype.fromLocalDatastore": "client-side cache",
	"Parse.Query.prototype.fromPin":            "client-side cache",
	"Parse.Query.prototype.fromPinWithName":    "client-side cache",
	"Parse.Query.prototype.fromNetwork":        "client-side cache",
	// Browser and device storage, and the client's controllers.
	"Parse.Storage":                "client storage (localStorage, AsyncStorage)",
	"Parse.Storage.":               "client storage (localStorage, AsyncStorage)",
	"Parse.IndexedDB":              "browser storage",
	"Parse.setAsyncStorage":        "React Native storage",
	"Parse.CoreManager":            "the client's controller registry",
	"Parse.CoreManager.":           "the client's controller registry",
	"Parse.encryptedUser":          "encrypts the client's stored current user",
	"Parse.enableEncryptedUser":    "encrypts the client's stored current user",
	"Parse.isEncryptedUserEnabled": "encrypts the client's stored current user",
	"Parse.secret":                 "encrypts the client's stored current user",
	"Parse.GeoPoint.current":       "the browser's geolocation",
	// Client sign-in flows and the current user/installation of a device.
	"Parse.FacebookUtils":                    "browser Facebook sign-in",
	"Parse.FacebookUtils.":                   "browser Facebook sign-in",
	"Parse.AnonymousUtils":                   "a device's anonymous current user",
	"Parse.AnonymousUtils.":                  "a device's anonymous current user",
	"Parse.User.enableUnsafeCurrentUser":     "a client's current user",
	"Parse.User.disableUnsafeCurrentUser":    "a client's current user",
	"Parse.User.enableRevocableSession":      "a client's current user",
	"Parse.User.allowCustomUserClass":        "a client's current user",
	"Parse.User.prototype.isCurrentAsync":    "a client's current user",
	"Parse.User.prototype.stripAnonymity":    "a client's anonymous current user",
	"Parse.User.prototype.restoreAnonimity":  "a client's anonymous current user",
	"Parse.Installation.currentInstallation": "a device's current installation",
	// LiveQuery clients subscribe over a socket to a server; cloud code is
	// the server (it has beforeSubscribe and afterLiveQueryEvent).
	"Parse.LiveQuery":                 "client LiveQuery socket",
	"Parse.LiveQueryClient":           "client LiveQuery socket",
	"Parse.LiveQueryClient.":          "client LiveQuery socket",
	"Parse.liveQueryServerURL":        "client LiveQuery socket",
	"Parse.Query.prototype.subscribe": "client LiveQuery socket",
	"Parse.Query.prototype.watch":     "client LiveQuery socket option",
	// Client settings with nothing to set in-process.
	"Parse.nodeLogging": "logs the client's HTTP requests; there are none",
}

// allowedOut reports whether name is in serverSideOnly, by itself, by a
// class prefix ("Parse.Storage.") or by a prototype suffix
// (".prototype.pin", for every class).
func allowedOut(name string) bool {
	if _, ok := serverSideOnly[name]; ok {
		return true
	}
	for k := range serverSideOnly {
		if strings.HasSuffix(k, ".") && strings.HasPrefix(name, k) {
			return true
		}
		if strings.HasPrefix(k, ".prototype.") && strings.HasSuffix(name, k) {
			return true
		}
	}
	return false
}

// officialSDKNames lists the official parse npm package's public names
// (testdata/sdkapi/enumerate.js run by node over e2e/node_modules). It
// skips without node or the package, and fails instead when CI is set.
func officialSDKNames(t *testing.T) []string {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: %s", why)
		}
		t.Skipf("SKIPPED (set up node to run it): %s", why)
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed")
	}
	modules, _ := filepath.Abs(filepath.Join("..", "e2e", "node_modules"))
	if _, err := os.Stat(filepath.Join(modules, "parse", "package.json")); err != nil {
		skip("the parse package is not installed: run (cd e2e && npm ci)")
	}
	cmd := exec.Command(nodeBin, filepath.Join("testdata", "sdkapi", "enumerate.js"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("enumerate.js: %v", err)
	}
	var names []string
	if err := json.Unmarshal(out, &names); err != nil {
		t.Fatalf("enumerate.js answered %s: %v", out, err)
	}
	if len(names) < 300 {
		t.Fatalf("enumerate.js listed only %d names", len(names))
	}
	return names
}

// missingJS answers which of the given dotted names do not resolve from
// the global object of a cloud code runtime.
const missingJS = `
Parse.Cloud.define('missing', (req) => req.params.names.filter((n) => {
  let v = globalThis;
  for (const p of n.split('.')) {
    if (v === undefined || v === null || !(p in Object(v))) { return true; }
    v = Object.getOwnPropertyDescriptor(Object(v), p) && Object.getOwnPropertyDescriptor(Object(v), p).get ? {} : v[p];
  }
  return false;
}));
`

// TestSDKSurface: every public name of the official parse npm package
// that means something on a server exists in cloud code, so that the
// surface cannot drift from the SDK's.
func TestSDKSurface(t *testing.T) {
	names := officialSDKNames(t)
	var wanted []string
	for _, n := range names {
		if !allowedOut(n) {
			wanted = append(wanted, n)
		}
	}
	srv := startScript(t, missingJS)
	res := srv.Do(t, "POST", "/functions/missing", map[string]any{"names": wanted}, servertest.App())
	var out struct {
		Result []string `json:"result"`
	}
	if err := json.Unmarshal(res.Body, &out); err != nil || res.Status != 200 {
		t.Fatalf("missing: %d %s", res.Status, res.Body)
	}
	sort.Strings(out.Result)
	if len(out.Result) > 0 {
		t.Errorf("%d of %d official SDK names are missing in cloud code:\n%s", len(out.Result), len(wanted), strings.Join(out.Result, "\n"))
	}
	t.Logf("%d official names checked, %d left out as client-only", len(wanted), len(names)-len(wanted))
}
