// Command embedded runs Quarry inside a Go program with its cloud code
// written in Go: a function, a validated beforeSave that edits the object,
// and an afterSave. Run it with
//
//	go run ./examples/embedded --appId demo --masterKey secret --databaseURI ./demo-data/demo.db
//
// then call the function:
//
//	curl -X POST -H 'X-Parse-Application-Id: demo' -H 'Content-Type: application/json' \
//	  -d '{"name":"ada"}' http://localhost:1337/parse/functions/greet
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/quarrydata/quarry"
	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/schema"
)

func main() {
	opts, warnings, err := quarry.Config(os.Args[1:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	for _, w := range warnings {
		log.Warn(w)
	}
	app := quarry.New(opts, log)
	define(app)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

// define is the app's cloud code.
func define(app *quarry.App) {
	app.Define("greet", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) {
		name, _ := req.Params["name"].(string)
		if name == "" {
			return nil, schema.Errorf(schema.CodeScriptFailed, "greet needs a name")
		}
		return "Hello, " + strings.ToUpper(name[:1]) + name[1:] + "!", nil
	})
	// Titles are stored trimmed; a post without one is refused (142).
	app.BeforeSave("Post", func(ctx context.Context, req *cloud.TriggerRequest) error {
		title, _ := req.Object["title"].(string)
		req.Object["title"] = strings.TrimSpace(title)
		return nil
	}, cloud.Validator{Fields: map[string]cloud.Field{"title": {Type: "String", Required: true}}})
	app.AfterSave("Post", func(ctx context.Context, req *cloud.TriggerRequest) error {
		slog.Info("post saved", "objectId", req.Object["objectId"])
		return nil
	})
}
