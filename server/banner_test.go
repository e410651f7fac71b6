package server_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
)

// TestBannerShowsOnlyAGeneratedMasterKey: the banner prints the master key
// Quarry generated for a development start, never one the operator set.
func TestBannerShowsOnlyAGeneratedMasterKey(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		shown bool
	}{
		{"operator's key", []string{"--appId", "app", "--masterKey", "operator-secret-key"}, false},
		{"development start", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"--databaseURI", filepath.Join(t.TempDir(), "q.db"), "--port", "0", "--host", "127.0.0.1"}, c.args...)
			opts, _, err := config.Load(args, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := server.Open(opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			addr, err := srv.Listen()
			if err != nil {
				t.Fatal(err)
			}
			banner := srv.Banner(addr)
			if got := strings.Contains(banner, opts.MasterKey); got != c.shown {
				t.Errorf("master key shown = %v, want %v:\n%s", got, c.shown, banner)
			}
			if c.shown && !strings.Contains(banner, "liveQuery:") {
				t.Errorf("the development start's banner has no LiveQuery address:\n%s", banner)
			}
		})
	}
}
