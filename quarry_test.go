package quarry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry"
	"github.com/quarrydata/quarry/cloud"
)

// TestEmbeddedApp: a Go program embeds Quarry, defines a function and a
// beforeSave in Go, and clients see them over HTTP; the app stops when its
// context ends.
func TestEmbeddedApp(t *testing.T) {
	opts, _, err := quarry.Config("--appId", "embed", "--masterKey", "mk", "--host", "127.0.0.1", "--port", "0",
		"--databaseURI", filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	app := quarry.New(opts, nil)
	app.Define("double", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) {
		n, _ := req.Params["n"].(float64)
		return 2 * n, nil
	}, cloud.Validator{Fields: map[string]cloud.Field{"n": {Type: "Number", Required: true}}})
	app.BeforeSave("Post", func(ctx context.Context, req *cloud.TriggerRequest) error {
		title, _ := req.Object["title"].(string)
		req.Object["title"] = strings.ToUpper(title)
		return nil
	})
	addr, err := app.Start()
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx) }()
	base := "http://" + addr.String() + "/parse"
	post := func(path string, body any) (int, map[string]any) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
		req.Header.Set("X-Parse-Application-Id", "embed")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	if status, out := post("/functions/double", map[string]any{"n": 21}); status != 200 || out["result"] != 42.0 {
		t.Errorf("function: %d %v", status, out)
	}
	if status, out := post("/functions/double", map[string]any{}); status != 400 || out["code"] != 142.0 {
		t.Errorf("function without its required param: %d %v", status, out)
	}
	if status, out := post("/classes/Post", map[string]any{"title": "hello"}); status != 201 || out["title"] != "HELLO" {
		t.Errorf("beforeSave's edit in the reply: %d %v", status, out)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	if _, err := app.Start(); err == nil {
		t.Error("a second Start was accepted")
	}
}
