package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
)

// TestPushAdapterStart: a push adapter that cannot start stops the server
// from opening, with the option named; "log" opens a sender.
func TestPushAdapterStart(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "key.json")
	os.WriteFile(garbage, []byte("{}"), 0o600)
	cases := []struct {
		name, adapter, keyFile, err string
	}{
		{"log", config.PushAdapterLog, "", ""},
		{"none", "", "", ""},
		{"fcm, no key file", config.PushAdapterFCM, filepath.Join(dir, "missing.json"), "push.fcm.serviceAccountFile"},
		{"fcm, not a key", config.PushAdapterFCM, garbage, "push.fcm"},
		{"apns, no key file", config.PushAdapterAPNs, filepath.Join(dir, "missing.p8"), "push.apns.tokenKeyFile"},
		{"apns, not a key", config.PushAdapterAPNs, garbage, "push.apns"},
		{"native, no key files", config.PushAdapterNative, filepath.Join(dir, "missing.json"), "push.fcm.serviceAccountFile"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts, _, err := config.Load([]string{"--appId", "app", "--masterKey", "mk",
				"--databaseURI", filepath.Join(dir, c.name+".db")}, nil)
			if err != nil {
				t.Fatal(err)
			}
			opts.Push.Adapter, opts.Push.FCM.ServiceAccountFile = c.adapter, c.keyFile
			opts.Push.APNs = config.APNsOptions{Topics: []string{"com.example.app"}, TokenKeyFile: c.keyFile, KeyID: "k", TeamID: "t"}
			srv, err := server.Open(opts, nil)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("case %d: error %v, want one naming %s", i, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			if (srv.Push != nil) != (c.adapter != "") {
				t.Errorf("sender %v for adapter %q", srv.Push, c.adapter)
			}
		})
	}
}
