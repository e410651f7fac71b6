package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// answer is one create as the client saw it.
type answer struct {
	status int
	id     string
	body   string
	retry  string
}

// TestPostgresOutage cuts the instance off from PostgreSQL (a proxy
// between them; the shared server keeps running) exactly when a create's
// COMMIT went through but before its reply came back, writes on during the
// outage, and restores the connection. Recorded and checked: every write
// refused meanwhile is a 503 with Parse's {code, error} naming the
// database and a Retry-After; /health is not ready during the outage and
// ready after it; the create whose outcome the instance could not know is
// answered once known and is served by the running instance, no restart;
// every answered write is in the database.
func TestPostgresOutage(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	proxy := pgtest.NewProxy(t, uri)
	srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = proxy.URI(uri) })

	create := func(n int) answer {
		res := srv.Do(t, "POST", "/classes/Fault", map[string]any{"n": n}, servertest.Master())
		a := answer{status: res.Status, body: string(res.Body), retry: res.Header.Get("Retry-After")}
		if id, ok := res.Map()["objectId"].(string); ok {
			a.id = id
		}
		return a
	}
	var answers []answer
	for i := range 20 {
		answers = append(answers, create(i))
	}

	// The create in doubt: its COMMIT reaches PostgreSQL, the reply does
	// not reach the instance.
	cut := proxy.CutAtCommit()
	doubt := make(chan answer, 1)
	doubtErr := make(chan error, 1)
	go func() {
		// Answered only after the outage below and the restore: a client
		// of its own without servertest's 30 s timeout, and no t.Fatal
		// off the test's goroutine (it would leave the test waiting).
		a, err := createPatiently(srv, -1)
		if err != nil {
			doubtErr <- err
			return
		}
		doubt <- a
	}()
	<-cut

	// During the outage: 4 writers, 25 creates each, and the readiness
	// probe until it says not ready. The connection comes back once 20
	// of them were answered, not after all (a create whose new id shares
	// the stripe the create in doubt holds is answered 503 too, after a
	// wait of its own: TestPostgresInDoubtHoldsNoWriter).
	var mu sync.Mutex
	var wg sync.WaitGroup
	enough := make(chan struct{})
	var enoughOnce sync.Once
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				a, err := createPatiently(srv, 1000+100*w+i)
				if err != nil {
					t.Errorf("a create during the outage: %v", err)
					return
				}
				mu.Lock()
				answers = append(answers, a)
				if len(answers) >= 20+20 {
					enoughOnce.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}()
	}
	health := waitHealth(t, srv, 503)
	select {
	case <-enough:
	case <-time.After(3 * time.Minute):
		t.Fatal("20 creates were not answered within 3 minutes of the cut")
	}
	if health.Header.Get("Retry-After") == "" || health.Map()["status"] != "error" {
		t.Errorf("/health during the outage: %d %v %s, want 503 {status: error} with Retry-After", health.Status, health.Header, health.Body)
	}
	mu.Lock()
	during := slices.Clone(answers)
	mu.Unlock()
	refused := 0
	for _, a := range during {
		if a.status != 503 {
			continue
		}
		refused++
		if a.retry == "" || a.body != `{"code":1,"error":"The database is unavailable: nothing was saved. Try again later."}` {
			t.Errorf("a write refused during the outage: %d Retry-After %q %s, want 503 {code, error naming the database} with Retry-After", a.status, a.retry, a.body)
			break
		}
	}
	if refused == 0 {
		t.Error("no write was refused with 503 while the database was cut off")
	}

	proxy.Restore()
	wg.Wait() // the creates left answer once the database is back
	var d answer
	select {
	case d = <-doubt:
	case err := <-doubtErr:
		t.Fatalf("the create in doubt: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("the create in doubt was not answered within 3 minutes of the restore")
	}
	if d.status != 201 {
		t.Fatalf("the create whose COMMIT went through before the cut: %d %s, want 201 once the instance knows it committed", d.status, d.body)
	}
	answers = append(answers, d)
	waitHealth(t, srv, 200)
	for i := range 10 {
		answers = append(answers, create(2000+i))
	}

	for _, a := range answers {
		switch a.status {
		case 201:
		case 503:
			continue
		default:
			t.Errorf("answer %d %s: want 201 or 503", a.status, a.body)
			continue
		}
		if res := srv.Do(t, "GET", "/classes/Fault/"+a.id, nil, servertest.Master()); res.Status != 200 {
			t.Errorf("answered create %s on the running instance: %d %s", a.id, res.Status, res.Body)
		}
	}
	// A fresh instance reads the database itself: every answered write
	// is there.
	fresh := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = uri })
	for _, a := range answers {
		if a.status != 201 {
			continue
		}
		if res := fresh.Do(t, "GET", "/classes/Fault/"+a.id, nil, servertest.Master()); res.Status != 200 {
			t.Errorf("answered create %s in the database: %d %s", a.id, res.Status, res.Body)
		}
	}
}

// waitHealth polls /health until it answers status, for at most a minute
// (the outage is detected and ended by probes with a backoff of at most
// 2 s), and returns that answer.
func waitHealth(t *testing.T, srv *servertest.Server, status int) servertest.Response {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res := srv.Do(t, "GET", "/health", nil, nil)
		if res.Status == status {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("/health never answered %d: last %d %s", status, res.Status, res.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// patient is a client for a request the server may hold for minutes (a
// commit in doubt waits for the database to come back).
var patient = &http.Client{Timeout: 5 * time.Minute}

// createPatiently is the test's create through patient, errors returned
// rather than failing the test from another goroutine.
func createPatiently(srv *servertest.Server, n int) (answer, error) {
	body, _ := json.Marshal(map[string]any{"n": n})
	req, err := http.NewRequest("POST", srv.URL+"/classes/Fault", bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	for k, v := range servertest.Master() {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := patient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	a := answer{status: res.StatusCode, body: string(data), retry: res.Header.Get("Retry-After")}
	var reply struct {
		ObjectID string `json:"objectId"`
	}
	if json.Unmarshal(data, &reply) == nil {
		a.id = reply.ObjectID
	}
	return a, nil
}

// TestPostgresInDoubtHoldsNoWriter: while an update's commit is in doubt
// (its COMMIT went through, the reply was cut off), it keeps its object's
// lock stripe until the database tells whether it committed, so that
// nothing contradicting it is answered. Another write of that stripe (the
// same object here, so the stripe is surely shared) does not wait for the
// database to come back: it is answered 503 with Retry-After, nothing
// saved. Once the database is back the update in doubt is answered 200
// and its value is the object's.
func TestPostgresInDoubtHoldsNoWriter(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	proxy := pgtest.NewProxy(t, uri)
	srv := servertest.Start(t, func(o *config.Options) { o.DatabaseURI = proxy.URI(uri) })
	res := srv.Do(t, "POST", "/classes/Fault", map[string]any{"n": 0}, servertest.Master())
	id, _ := res.Map()["objectId"].(string)
	if res.Status != 201 || id == "" {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	path := "/classes/Fault/" + id

	cut := proxy.CutAtCommit()
	doubt := make(chan answer, 1)
	doubtErr := make(chan error, 1)
	go func() {
		a, err := sendPatiently(srv, "PUT", path, map[string]any{"n": 1})
		if err != nil {
			doubtErr <- err
			return
		}
		doubt <- a
	}()
	<-cut
	// The database stays cut off until this write is answered.
	a, err := sendPatiently(srv, "PUT", path, map[string]any{"n": 2})
	if err != nil {
		t.Fatal(err)
	}
	if a.status != 503 || a.retry == "" {
		t.Errorf("a write of the stripe held by a commit in doubt, during the outage: %d Retry-After %q %s, want 503 with Retry-After", a.status, a.retry, a.body)
	}
	select {
	case d := <-doubt:
		t.Fatalf("the update in doubt was answered before the database came back: %d %s", d.status, d.body)
	default:
	}
	proxy.Restore()
	var d answer
	select {
	case d = <-doubt:
	case err := <-doubtErr:
		t.Fatalf("the update in doubt: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("the update in doubt was not answered within 3 minutes of the restore")
	}
	if d.status != 200 {
		t.Fatalf("the update whose COMMIT went through before the cut: %d %s, want 200", d.status, d.body)
	}
	if got := srv.Do(t, "GET", path, nil, servertest.Master()).Map()["n"]; got != 1.0 {
		t.Errorf("after the restore the object holds n = %v, want 1 (the update in doubt; the refused one saved nothing)", got)
	}
}

// sendPatiently is a request through patient, errors returned rather
// than failing the test from another goroutine.
func sendPatiently(srv *servertest.Server, method, path string, body any) (answer, error) {
	data, _ := json.Marshal(body)
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(data))
	if err != nil {
		return answer{}, err
	}
	for k, v := range servertest.Master() {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := patient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: res.StatusCode, body: string(out), retry: res.Header.Get("Retry-After")}, nil
}
