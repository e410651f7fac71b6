package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
)

const validateOptionsJS = `
Parse.Cloud.define("checkAcmeOptions", (request) => {
  if (request.params.provider !== "acme") throw new Error("wrong provider " + request.params.provider);
  if (request.params.options.cloudFunction !== undefined) throw new Error("cloudFunction leaked into the options");
  if (!request.params.options.secretWord) throw new Error("secretWord is required");
  return true;
});
Parse.Cloud.define("validateAcme", () => true);
`

// TestAuthValidateOptionsFunction: a custom adapter written as cloud code
// checks its options once at start-up; options it refuses stop the start
// with the provider and the reason.
func TestAuthValidateOptionsFunction(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "main.js")
	if err := os.WriteFile(main, []byte(validateOptionsJS), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		options string
		refused []string // what the start-up error must say
	}{
		{"accepted", `{"cloudFunction":"validateAcme","validateOptionsFunction":"checkAcmeOptions","secretWord":"swordfish"}`, nil},
		{"refused", `{"cloudFunction":"validateAcme","validateOptionsFunction":"checkAcmeOptions"}`,
			[]string{"auth.acme: the options were refused by checkAcmeOptions", "secretWord is required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, _, err := config.Load([]string{"--appId", "app", "--masterKey", "mk",
				"--databaseURI", filepath.Join(t.TempDir(), "q.db"), "--cloud", main,
				"--auth", `{"acme":` + tc.options + `}`}, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := server.Open(opts, nil)
			if tc.refused == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				srv.Close()
				return
			}
			if err == nil {
				srv.Close()
				t.Fatal("started with options the adapter refuses")
			}
			for _, want := range tc.refused {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q, want it to contain %q", err, want)
				}
			}
		})
	}
}
