package subscribe_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/subscribe"
)

const secret = "s3cret"

// receiver is a webhook target on 127.0.0.1: it checks each body's
// signature, answers with fail(event) (200 when it returns 0) and keeps
// every attempt and the distinct events accepted, in arrival order.
type receiver struct {
	*httptest.Server
	t    testing.TB
	mu   sync.Mutex
	fail func(e subscribe.Event, attempt int) int
	// attempts counts the tries per event id; accepted holds the first
	// accepted copy of each event.
	attempts map[string]int
	accepted []subscribe.Event
	seen     map[string]bool
	got      chan subscribe.Event // each accepted event, duplicates included
}

func newReceiver(t testing.TB, fail func(subscribe.Event, int) int) *receiver {
	r := &receiver{t: t, fail: fail, attempts: map[string]int{}, seen: map[string]bool{}, got: make(chan subscribe.Event, 1000)}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(500)
		return
	}
	if got, want := req.Header.Get(subscribe.HeaderSignature), subscribe.Sign(secret, body); got != want {
		r.t.Errorf("signature %q, want %q", got, want)
		w.WriteHeader(401)
		return
	}
	var e subscribe.Event
	if err := json.Unmarshal(body, &e); err != nil {
		r.t.Errorf("body %s: %v", body, err)
		w.WriteHeader(400)
		return
	}
	if req.Header.Get(subscribe.HeaderEventID) != e.ID {
		r.t.Errorf("event id header %q, body %q", req.Header.Get(subscribe.HeaderEventID), e.ID)
	}
	r.mu.Lock()
	r.attempts[e.ID]++
	status := 0
	if r.fail != nil {
		status = r.fail(e, r.attempts[e.ID])
	}
	if status == 0 && !r.seen[e.ID] {
		r.seen[e.ID] = true
		r.accepted = append(r.accepted, e)
	}
	r.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	r.got <- e
}

// await returns the next accepted event (failing after 20s: a delivery
// that never comes).
func (r *receiver) await(t *testing.T) subscribe.Event {
	t.Helper()
	select {
	case e := <-r.got:
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("no event delivered")
	}
	return subscribe.Event{}
}

func subscriptions(max int) func(*config.Options) {
	return func(o *config.Options) {
		o.MaxServerSubscriptions = max
		o.OutboundAllowPrivate = true // the receivers listen on 127.0.0.1
	}
}

func mustDo(t *testing.T, srv *servertest.Server, method, path string, body any, want int) map[string]any {
	t.Helper()
	r := srv.Do(t, method, path, body, servertest.Master())
	if r.Status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, want)
	}
	return r.Map()
}

func webhook(name, class string, where map[string]any, url string) map[string]any {
	return map[string]any{"name": name, "className": class, "where": where, "keys": []string{"total"},
		"target": map[string]any{"type": "webhook", "url": url, "secret": secret}}
}

// TestWebhookEventsInOrderWithRetries: every event of a change matching
// the subscription reaches the webhook signed, narrowed to keys, once per
// id, in commit order, although the target fails some attempts (each is
// retried with backoff, holding the later events back).
func TestWebhookEventsInOrderWithRetries(t *testing.T) {
	recv := newReceiver(t, func(e subscribe.Event, attempt int) int {
		if (e.Op == "update" || e.Op == "enter") && attempt <= 2 {
			return 503 // twice unavailable, then accepted
		}
		return 0
	})
	srv := servertest.Start(t, subscriptions(5))
	mustDo(t, srv, "POST", "/hooks/subscriptions", webhook("orders", "Order", map[string]any{"total": map[string]any{"$gt": 10}}, recv.URL), 201)

	mustDo(t, srv, "POST", "/classes/Order", map[string]any{"total": 5, "note": "small"}, 201) // never matches
	id := mustDo(t, srv, "POST", "/classes/Order", map[string]any{"total": 20, "note": "x"}, 201)["objectId"].(string)
	for _, total := range []int{30, 1, 50} {
		mustDo(t, srv, "PUT", "/classes/Order/"+id, map[string]any{"total": total}, 200)
	}
	mustDo(t, srv, "DELETE", "/classes/Order/"+id, nil, 200)

	want := []struct {
		op    string
		total float64
	}{{"create", 20}, {"update", 30}, {"leave", 1}, {"enter", 50}, {"delete", 50}}
	for i, w := range want {
		e := recv.await(t)
		if e.Op != w.op || e.Object["total"] != w.total || e.Object["objectId"] != id || e.Subscription != "orders" || e.ClassName != "Order" {
			t.Fatalf("event %d: %+v, want %s with total %v", i, e, w.op, w.total)
		}
		if _, leaked := e.Object["note"]; leaked {
			t.Errorf("event %d carries note although keys is [total]", i)
		}
		if w.op == "update" && e.Original["total"] != 20.0 {
			t.Errorf("update's original: %v", e.Original)
		}
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, e := range recv.accepted {
		if (e.Op == "update" || e.Op == "enter") && recv.attempts[e.ID] != 3 {
			t.Errorf("%s was tried %d times, want 3 (two refusals, then accepted)", e.Op, recv.attempts[e.ID])
		}
	}
}

// TestSubscriptionsAPI: /hooks/subscriptions is the master key's, checks
// its input with Parse's codes, keeps the quota and never shows the
// secret; the definitions are objects of _Subscription, which the
// Dashboard reads with the master key.
func TestSubscriptionsAPI(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		subscriptions(2)(o)
		o.ReadOnlyMasterKey = "read-only"
	})
	readOnly := map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Master-Key": "read-only"}
	good := webhook("a", "Order", nil, "http://127.0.0.1:9/hook")
	with := func(edit func(map[string]any)) map[string]any {
		b := webhook("x", "Order", nil, "http://127.0.0.1:9/hook")
		edit(b)
		return b
	}
	cases := []struct {
		name, method, path string
		body               any
		headers            map[string]string
		status, code       int
		contains, not      string
	}{
		{"create", "POST", "/hooks/subscriptions", good, servertest.Master(), 201, 0, `"name":"a"`, secret},
		{"not master", "POST", "/hooks/subscriptions", webhook("b", "Order", nil, "http://127.0.0.1:9/h"), servertest.App(), 403, 0, "master key", ""},
		{"list not master", "GET", "/hooks/subscriptions", nil, servertest.App(), 403, 0, "", ""},
		{"taken name", "POST", "/hooks/subscriptions", good, servertest.Master(), 400, 143, "exists already", ""},
		{"no secret", "POST", "/hooks/subscriptions", with(func(b map[string]any) { delete(b["target"].(map[string]any), "secret") }), servertest.Master(), 400, 143, "secret", ""},
		{"bad type", "POST", "/hooks/subscriptions", with(func(b map[string]any) { b["target"].(map[string]any)["type"] = "sqs" }), servertest.Master(), 400, 143, "target.type", ""},
		{"bad event", "POST", "/hooks/subscriptions", with(func(b map[string]any) { b["events"] = []string{"save"} }), servertest.Master(), 400, 143, "unknown event", ""},
		{"bad where", "POST", "/hooks/subscriptions", with(func(b map[string]any) { b["where"] = map[string]any{"a": map[string]any{"$bogus": 1}} }), servertest.Master(), 400, 107, "", ""},
		{"live join", "POST", "/hooks/subscriptions", with(func(b map[string]any) {
			b["where"] = map[string]any{"room": map[string]any{"$inQuery": map[string]any{"className": "Room", "where": map[string]any{}}}}
		}), servertest.Master(), 400, 102, "live joins", ""},
		{"redis needs stream", "POST", "/hooks/subscriptions", map[string]any{"name": "r", "className": "Order", "target": map[string]any{"type": "redis", "url": "redis://127.0.0.1:6379/0"}}, servertest.Master(), 400, 143, "stream", ""},
		{"second", "POST", "/hooks/subscriptions", webhook("b", "Order", nil, "http://127.0.0.1:9/h"), servertest.Master(), 201, 0, "", ""},
		{"quota", "POST", "/hooks/subscriptions", webhook("c", "Order", nil, "http://127.0.0.1:9/h"), servertest.Master(), 400, 155, "maxServerSubscriptions", ""},
		{"get", "GET", "/hooks/subscriptions/a", nil, servertest.Master(), 200, 0, `"className":"Order"`, secret},
		{"list", "GET", "/hooks/subscriptions", nil, servertest.Master(), 200, 0, `"name":"b"`, secret},
		{"update keeps secret", "PUT", "/hooks/subscriptions/a", map[string]any{"events": []string{"create"}, "target": map[string]any{"type": "webhook", "url": "http://127.0.0.1:9/other"}}, servertest.Master(), 200, 0, `"events":["create"]`, secret},
		{"read-only master reads", "GET", "/hooks/subscriptions/a", nil, readOnly, 200, 0, `"name":"a"`, secret},
		{"read-only master may not write", "DELETE", "/hooks/subscriptions/a", nil, readOnly, 400, 119, "read-only", ""},
		{"missing", "GET", "/hooks/subscriptions/zzz", nil, servertest.Master(), 400, 143, "no server-side subscription", ""},
		{"dashboard reads the class", "GET", "/classes/_Subscription", nil, servertest.Master(), 200, 0, `"url":"http://127.0.0.1:9/other"`, ""},
		{"class hidden from clients", "GET", "/classes/_Subscription", nil, servertest.App(), 400, 119, "", "127.0.0.1"},
		{"delete", "DELETE", "/hooks/subscriptions/b", nil, servertest.Master(), 200, 0, "", ""},
		{"quota freed", "POST", "/hooks/subscriptions", webhook("c", "Order", nil, "http://127.0.0.1:9/h"), servertest.Master(), 201, 0, "", ""},
		{"delete by PUT", "PUT", "/hooks/subscriptions/c", map[string]any{"__op": "Delete"}, servertest.Master(), 200, 0, "", ""},
		{"deleted", "GET", "/hooks/subscriptions/c", nil, servertest.Master(), 400, 143, "", ""},
	}
	for _, c := range cases {
		r := srv.Do(t, c.method, c.path, c.body, c.headers)
		if r.Status != c.status {
			t.Fatalf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.status)
		}
		if c.code != 0 {
			if got, _ := r.Map()["code"].(float64); int(got) != c.code {
				t.Errorf("%s: %s, want code %d", c.name, r.Body, c.code)
			}
		}
		if c.contains != "" && !strings.Contains(string(r.Body), c.contains) {
			t.Errorf("%s: %s lacks %s", c.name, r.Body, c.contains)
		}
		if c.not != "" && strings.Contains(string(r.Body), c.not) {
			t.Errorf("%s: %s shows %s", c.name, r.Body, c.not)
		}
	}

	off := servertest.Start(t, nil)
	if r := off.Do(t, "GET", "/hooks/subscriptions", nil, servertest.Master()); r.Status != 400 || r.Map()["code"] != 119.0 {
		t.Errorf("with maxServerSubscriptions 0: %d %s, want 119", r.Status, r.Body)
	}
}

// TestSlowTargetDelaysNoOther: a webhook that never answers holds up its
// own subscription only; another subscription's events all arrive while
// the first target's handler is still stuck.
func TestSlowTargetDelaysNoOther(t *testing.T) {
	release := make(chan struct{})
	stuck := make(chan struct{}, 100)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stuck <- struct{}{}
		<-release
	}))
	defer slow.Close()
	defer close(release)
	fast := newReceiver(t, nil)
	srv := servertest.Start(t, subscriptions(5))
	mustDo(t, srv, "POST", "/hooks/subscriptions", webhook("slow", "Order", nil, slow.URL), 201)
	mustDo(t, srv, "POST", "/hooks/subscriptions", webhook("fast", "Order", nil, fast.URL), 201)
	const n = 20
	for i := range n {
		mustDo(t, srv, "POST", "/classes/Order", map[string]any{"total": i}, 201)
	}
	<-stuck // the slow target holds its first event
	for i := range n {
		if e := fast.await(t); e.Object["total"] != float64(i) {
			t.Fatalf("fast event %d: %+v", i, e)
		}
	}
	for _, st := range srv.Subscriptions().Stats() {
		if st.Name == "slow" && st.Delivered != 0 {
			t.Errorf("the slow target delivered %d events while stuck", st.Delivered)
		}
	}
}
