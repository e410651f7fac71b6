package webhooks_test

import (
	"testing"
	"time"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
	"github.com/quarrydata/quarry/webhooks"
)

// chanHost hands every definition it is given to a channel.
type chanHost chan webhooks.Webhook

func (h chanHost) SetWebhook(w webhooks.Webhook)          { h <- w }
func (h chanHost) DefinesInProcess(webhooks.Webhook) bool { return false }

// TestWebhooksAcrossInstances: a webhook one instance defines, changes
// and deletes reaches the host of another instance sharing the
// PostgreSQL store, through the core's WatchForeign.
func TestWebhooksAcrossInstances(t *testing.T) {
	uri := pgtest.NewDatabase(t) // skips loudly without PostgreSQL (fails with CI=true)
	open := func() *service.Service {
		a, err := postgres.Open(uri, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		s, err := service.Open(a, service.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.CloseChanges(0) })
		return s
	}
	a, b := open(), open()
	hostA, hostB := make(chanHost, 16), make(chanHost, 16)
	ra, rb := webhooks.New(a, hostA), webhooks.New(b, hostB)
	if _, err := b.Follow(service.FollowOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.StopFollowing)
	master := service.Auth{Master: true}
	w := webhooks.Webhook{FunctionName: "f", URL: "http://127.0.0.1:1/a"}
	steps := []struct {
		name    string
		do      func() error
		wantURL string // what b's host is given ("" forgets)
		has     bool   // rb.HasWebhooks afterwards
	}{
		{"create", func() error { _, err := ra.CreateWebhook(master, w); return err }, "http://127.0.0.1:1/a", true},
		{"update", func() error {
			w2 := w
			w2.URL = "http://127.0.0.1:1/b"
			_, err := ra.UpdateWebhook(master, w2)
			return err
		}, "http://127.0.0.1:1/b", true},
		{"delete", func() error { return ra.DeleteWebhook(master, w) }, "", false},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		<-hostA // the writer's own host
		select {
		case got := <-hostB:
			if got.FunctionName != "f" || got.URL != st.wantURL {
				t.Fatalf("%s: the other instance's host got %+v, want url %q", st.name, got, st.wantURL)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the other instance's host got nothing", st.name)
		}
		if rb.HasWebhooks() != st.has {
			t.Errorf("%s: the other instance's HasWebhooks = %v", st.name, !st.has)
		}
	}
}
