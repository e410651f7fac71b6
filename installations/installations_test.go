package installations_test

import (
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/installations"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openService opens a service on a new on-disk buntdb store, closed when
// the test ends.
func openService(t *testing.T) *service.Service {
	t.Helper()
	a, err := store.Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	s, err := service.Open(a, service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.CloseChanges(0) }) // before the store closes
	return s
}

// TestSaveInstallation: the identification and deduplication rules, run
// in order against one real service: which object each save lands on,
// which holders of a deviceToken go, and the refusals.
func TestSaveInstallation(t *testing.T) {
	s := openService(t)
	x := installations.New(s)
	master := service.Auth{Master: true}
	const tokenA = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" // 64: lower-cased
	ids := map[string]string{}                                                        // name -> objectId
	steps := []struct {
		name    string
		auth    service.Auth
		id      string // a name in ids: an update of it
		body    map[string]any
		code    int    // 0: saved
		created bool   // a new object
		as      string // remember the object under this name
		same    string // the object must be this one
	}{
		{name: "a new installation", auth: master, body: map[string]any{"installationId": "I1", "deviceType": "ios"}, created: true, as: "one"},
		{name: "the same installationId updates it", auth: master, body: map[string]any{"installationId": "i1", "deviceType": "ios", "badge": 1.0}, same: "one"},
		{name: "a second one with a token", auth: master, body: map[string]any{"installationId": "i2", "deviceType": "ios", "deviceToken": tokenA}, created: true, as: "two"},
		{name: "the token moves to the first: the second goes", auth: master, body: map[string]any{"installationId": "i1", "deviceType": "ios", "deviceToken": tokenA}, same: "one"},
		{name: "no identity", auth: master, body: map[string]any{"deviceType": "ios"}, code: schema.CodeMissingRequiredField},
		{name: "no deviceType", auth: master, body: map[string]any{"installationId": "i3"}, code: schema.CodeMissingRequiredField},
		{name: "a bad channel", auth: master, body: map[string]any{"installationId": "i3", "deviceType": "ios", "channels": []any{"1x"}}, code: schema.CodeInvalidChannelName},
		{name: "deviceType may not change", auth: master, id: "one", body: map[string]any{"deviceType": "android"}, code: schema.CodeChangedImmutableField},
		{name: "read-only master key", auth: service.Auth{Master: true, ReadOnly: true}, body: map[string]any{"installationId": "i4", "deviceType": "ios"}, code: schema.CodeOperationForbidden},
	}
	for _, st := range steps {
		res, err := x.SaveInstallation(st.auth, ids[st.id], st.body)
		if st.code != 0 {
			if pe, ok := schema.AsError(err); !ok || pe.Code != st.code {
				t.Fatalf("%s: %v, want code %d", st.name, err, st.code)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if res.Created != st.created {
			t.Fatalf("%s: created %v, want %v", st.name, res.Created, st.created)
		}
		if st.as != "" {
			ids[st.as] = res.ObjectID
		}
		if st.same != "" && res.ObjectID != ids[st.same] {
			t.Fatalf("%s: saved %s, want %s", st.name, res.ObjectID, ids[st.same])
		}
	}
	all, err := x.FindInstallations(master, service.FindParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Results) != 1 || all.Results[0]["objectId"] != ids["one"] || all.Results[0]["deviceToken"] != "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
		t.Fatalf("installations left %v, want only the first, holding the lower-cased token", all.Results)
	}
	refusals := []struct {
		name string
		err  error
	}{
		{"a client's find without installationId", func() error {
			_, err := x.FindInstallations(service.Auth{}, service.FindParams{})
			return err
		}()},
		{"a client's delete", x.DeleteInstallation(service.Auth{}, ids["one"])},
	}
	for _, r := range refusals {
		if pe, ok := schema.AsError(r.err); !ok || pe.Code != schema.CodeOperationForbidden {
			t.Errorf("%s: %v, want 119", r.name, r.err)
		}
	}
	if _, err := x.FindInstallations(service.Auth{}, service.FindParams{Where: map[string]any{"installationId": "i1"}}); err != nil {
		t.Errorf("a client's find of its installationId: %v", err)
	}
}
