package graphql_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/graphql"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// TestConfigChangesUnderRequests changes /graphql-config while requests
// read it (run it with -race): each request sees one configuration
// whole, either hiding Item or showing it, never an error of a half one.
func TestConfigChangesUnderRequests(t *testing.T) {
	srv := servertest.Start(t, nil)
	svc := srv.Service
	master := service.Auth{Master: true}
	if _, err := svc.Create(master, "Item", map[string]any{"name": "pen"}); err != nil {
		t.Fatal(err)
	}
	h := graphql.New(svc, graphql.Options{})
	stop := make(chan struct{})
	errs := make(chan string, 3)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				out := h.Execute(master, `{ items { count } }`, "", nil)
				if !bytes.Contains(out, []byte(`"count":1`)) && !bytes.Contains(out, []byte(`GRAPHQL_VALIDATION_FAILED`)) {
					errs <- string(out)
					return
				}
			}
		}()
	}
	for i := range 100 {
		cfg := map[string]any{"disabledForClasses": []any{}}
		if i%2 == 0 {
			cfg = map[string]any{"disabledForClasses": []any{"Item"}}
		}
		if err := svc.SetGraphQLConfig(master, cfg); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case out := <-errs:
		t.Fatalf("a request during the changes: %s", out)
	default:
	}
	out := h.Execute(master, `{ items { count } }`, "", nil)
	if !bytes.Contains(out, []byte(`"count":1`)) {
		t.Fatalf("after the last change (Item shown): %s", out)
	}
}
