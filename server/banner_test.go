package server_test

import (
	"net"
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

// TestBannerShowsGraphQL: with mountGraphQL the banner gives the GraphQL
// address (at the server root, beside the REST mount), and the
// playground's when it is mounted too.
func TestBannerShowsGraphQL(t *testing.T) {
	banner, addr := startedBanner(t, "--appId", "app", "--masterKey", "m", "--mountGraphQL", "--mountPlayground")
	root := "http://" + addr.String()
	for _, want := range []string{"graphQL:    " + root + "/graphql\n", "playground: " + root + "/playground\n"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
}

// startedBanner is the banner of a server started with args on a data
// file of its own, and the address it listens on.
func startedBanner(t *testing.T, args ...string) (string, net.Addr) {
	t.Helper()
	args = append([]string{"--databaseURI", filepath.Join(t.TempDir(), "q.db"), "--port", "0", "--host", "127.0.0.1"}, args...)
	opts, _, err := config.Load(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Open(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	return srv.Banner(addr), addr
}
