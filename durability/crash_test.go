//go:build unix

package durability

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Shape of the crash test. Each round restarts the server on the file the
// previous round killed, checks it, loads it for loadMin plus up to
// loadJitter, and SIGKILLs it mid-load.
const (
	appID      = "crash-app"
	masterKey  = "crash-master"
	mountPath  = "/parse"
	workers    = 16
	counters   = 4
	rounds     = 3
	loadMin    = 800 * time.Millisecond
	loadJitter = 400 * time.Millisecond
	// Of every opCycle requests of a worker, one is an Increment and one a
	// transactional POST /batch of txParts creates; the rest are creates.
	opCycle = 4
	txParts = 5
	// spotChecks is how many of the last acknowledged creates of each
	// worker are fetched one by one, on top of the full listing.
	spotChecks   = 8
	startTimeout = 15 * time.Second
	stopTimeout  = 15 * time.Second
)

// quarryBin is the binary built once by TestMain.
var quarryBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "quarry-durability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	quarryBin = filepath.Join(dir, "quarry")
	build := exec.Command("go", "build", "-o", quarryBin, "github.com/quarrydata/quarry/cmd/quarry")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building quarry: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// TestCrashKeepsAcknowledgedWrites SIGKILLs the server under a concurrent
// load of creates, Increments and transactional batches, several times on
// one database file, and checks after each restart that every acknowledged
// create is there with its fields, no create is there twice or unsent, every
// counter lies between its acknowledged and its sent Increments, and every
// transaction is all there or all gone (all there if acknowledged).
//
// Its power: a server that acknowledged before the write reached the file
// (acks on enqueue, a background flusher, a user-space buffer) would have
// up to a queue's worth of acknowledged but unwritten commits at every kill,
// and thousands of acknowledged writes per round make missing ones certain
// to show. Since SIGKILL can also cut a large write(2) between pages, a store
// that is not atomic across a torn write may show up as a partial
// transaction, though rarely. Acks after write(2) but before fsync pass: the
// page cache survives a process kill (see the package comment).
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	db := filepath.Join(t.TempDir(), "data", "quarry.db")
	l := newLedger()

	srv := start(t, db)
	for i := range counters {
		status, body, err := do(srv.client, "POST", srv.url+"/classes/Counter", fmt.Sprintf(`{"count":0,"slot":%d}`, i))
		if err != nil || status != http.StatusCreated {
			t.Fatalf("creating counter %d: %d %s %v", i, status, body, err)
		}
		l.counterIDs[i] = objectID(t, body)
	}

	for round := 1; round <= rounds; round++ {
		if round > 1 {
			srv = start(t, db)
			verify(t, srv, l)
			if t.Failed() {
				return
			}
		}
		load(t, srv, l, round, loadMin+rand.N(loadJitter))
		if t.Failed() {
			return
		}
	}

	srv = start(t, db)
	verify(t, srv, l)
	srv.stop(t)
}

// TestConcurrentIncrementsExact sends 100 Increments of one field at once:
// the field ends at exactly +100, every reply carries a different new value,
// and the total survives a SIGKILL.
func TestConcurrentIncrementsExact(t *testing.T) {
	const n = 100
	db := filepath.Join(t.TempDir(), "quarry.db")
	srv := start(t, db)
	status, body, err := do(srv.client, "POST", srv.url+"/classes/Counter", `{"count":7}`)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create: %d %s %v", status, body, err)
	}
	path := "/classes/Counter/" + objectID(t, body)

	client := newClient(n)
	gate := make(chan struct{})
	values := make([]float64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-gate
			status, body, err := do(client, "PUT", srv.url+path, `{"count":{"__op":"Increment","amount":1}}`)
			if err != nil || status != http.StatusOK {
				t.Errorf("increment %d: %d %s %v", i, status, body, err)
				return
			}
			var reply struct{ Count *float64 }
			if err := json.Unmarshal(body, &reply); err != nil || reply.Count == nil {
				t.Errorf("increment %d: reply without count: %s", i, body)
				return
			}
			values[i] = *reply.Count
		})
	}
	close(gate)
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.Sort(values)
	for i, v := range values {
		if v != float64(8+i) {
			t.Fatalf("increment replies are not 8..107 once each: sorted replies %v", values)
		}
	}
	if got := fetchNumber(t, srv, path, "count"); got != 7+n {
		t.Fatalf("count after %d concurrent increments = %v, want %d", n, got, 7+n)
	}

	srv.kill()
	srv = start(t, db)
	if got := fetchNumber(t, srv, path, "count"); got != 7+n {
		t.Fatalf("count after SIGKILL and restart = %v, want %d", got, 7+n)
	}
	srv.stop(t)
}

// objKey names one create of the load: its fields are exactly these.
type objKey struct{ Round, Worker, N int }

// ledger is what the clients know across rounds. Outcomes a kill left
// unknown are resolved by the next verify.
type ledger struct {
	acked      map[string]objKey // objectId -> fields, for every 201
	sent       map[objKey]bool   // every create sent, acknowledged or not
	txAcked    map[objKey]bool   // transactions answered with txParts successes
	txSent     map[objKey]bool   // every transaction sent
	lastAcked  []string          // the spotChecks latest acked ids per worker of the last round
	counterIDs [counters]string
	// Per counter: Increments acknowledged and Increments sent, counted
	// from the value last verified (the value itself is in base).
	base, incAcked, incSent [counters]int
}

func newLedger() *ledger {
	return &ledger{acked: map[string]objKey{}, sent: map[objKey]bool{},
		txAcked: map[objKey]bool{}, txSent: map[objKey]bool{}}
}

// workerLog is one load goroutine's own record, merged after the kill.
type workerLog struct {
	acked             map[string]objKey
	order             []string // acked ids in acknowledgement order
	sent              []objKey
	incAcked, incSent [counters]int
	txAcked, txSent   []objKey
	inFlight          int // requests whose outcome the kill made unknown
}

// load runs the write load for d, SIGKILLs the server while requests are in
// flight, and adds what was acknowledged to l.
func load(t *testing.T, srv *child, l *ledger, round int, d time.Duration) {
	t.Helper()
	var killed atomic.Bool
	// busy counts the requests under way; read when the kill is decided, it
	// shows the kill landed mid-load even when a slow process teardown lets
	// those requests finish first.
	var busy atomic.Int32
	client := newClient(workers)
	call := func(method, url, body string) (int, []byte, error) {
		busy.Add(1)
		defer busy.Add(-1)
		return do(client, method, url, body)
	}
	logs := make([]*workerLog, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wl := &workerLog{acked: map[string]objKey{}}
		logs[w] = wl
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
			for i := 0; !killed.Load(); i++ {
				var status int
				var body []byte
				var err error
				switch i % opCycle {
				case opCycle - 1:
					c := rng.IntN(counters)
					wl.incSent[c]++
					status, body, err = call("PUT", srv.url+"/classes/Counter/"+l.counterIDs[c],
						`{"count":{"__op":"Increment","amount":1}}`)
					if err == nil && status == http.StatusOK {
						wl.incAcked[c]++
						continue
					}
				case opCycle - 2:
					k := objKey{round, w, i}
					wl.txSent = append(wl.txSent, k)
					status, body, err = call("POST", srv.url+"/batch", txBody(k))
					if err == nil && status == http.StatusOK {
						if txSucceeded(t, body) {
							wl.txAcked = append(wl.txAcked, k)
						}
						continue
					}
				default:
					k := objKey{round, w, i}
					wl.sent = append(wl.sent, k)
					status, body, err = call("POST", srv.url+"/classes/Crash",
						fmt.Sprintf(`{"round":%d,"worker":%d,"n":%d}`, k.Round, k.Worker, k.N))
					if err == nil && status == http.StatusCreated {
						id := objectID(t, body)
						wl.acked[id] = k
						wl.order = append(wl.order, id)
						continue
					}
				}
				if err != nil && killed.Load() {
					wl.inFlight++ // the expected end of every worker
					return
				}
				t.Errorf("round %d worker %d request %d before the kill: status %d body %s err %v", round, w, i, status, body, err)
				return
			}
		})
	}
	time.Sleep(d)
	killed.Store(true) // before the signal: any error after this may be the kill's
	busyAtKill := busy.Load()
	srv.kill()
	wg.Wait()
	client.CloseIdleConnections()

	var creates, incs, txs, inFlight int
	l.lastAcked = l.lastAcked[:0]
	for _, wl := range logs {
		for id, k := range wl.acked {
			if _, dup := l.acked[id]; dup {
				t.Errorf("objectId %s acknowledged twice", id)
			}
			l.acked[id] = k
		}
		for _, k := range wl.sent {
			l.sent[k] = true
		}
		for _, k := range wl.txSent {
			l.txSent[k] = true
		}
		for _, k := range wl.txAcked {
			l.txAcked[k] = true
		}
		txs += len(wl.txAcked)
		for c := range counters {
			l.incAcked[c] += wl.incAcked[c]
			l.incSent[c] += wl.incSent[c]
			incs += wl.incAcked[c]
		}
		creates += len(wl.acked)
		inFlight += wl.inFlight
		l.lastAcked = append(l.lastAcked, wl.order[max(0, len(wl.order)-spotChecks):]...)
	}
	t.Logf("round %d: load %v, %d creates, %d increments and %d transactions acknowledged, %d requests cut by SIGKILL (%d under way when it was sent)",
		round, d.Round(time.Millisecond), creates, incs, txs, inFlight, busyAtKill)
	if creates == 0 || incs == 0 || txs == 0 {
		t.Errorf("round %d: the load acknowledged %d creates, %d increments and %d transactions; it did not run", round, creates, incs, txs)
	}
	if inFlight == 0 && busyAtKill == 0 {
		t.Errorf("round %d: no request was in flight at the kill; the test did not kill mid-load", round)
	}
}

// verify checks a restarted server against the ledger, then settles the
// counters to their recovered values.
func verify(t *testing.T, srv *child, l *ledger) {
	t.Helper()
	// Every object the server has must be one a client sent, once; every
	// acknowledged one must be among them with its own fields.
	status, body, err := doMaster(srv.client, "GET", srv.url+"/classes/Crash?limit=100000000", "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("listing Crash after restart: %d %.300s %v", status, body, err)
	}
	var list struct {
		Results []struct {
			ObjectID string
			objKey
		}
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("listing Crash: %v: %.300s", err, body)
	}
	found := make(map[string]objKey, len(list.Results))
	byKey := make(map[objKey]string, len(list.Results))
	for _, r := range list.Results {
		if !l.sent[r.objKey] {
			t.Errorf("object %s %+v was never sent", r.ObjectID, r.objKey)
		}
		if other, dup := byKey[r.objKey]; dup {
			t.Errorf("create %+v applied twice: objects %s and %s", r.objKey, other, r.ObjectID)
		}
		byKey[r.objKey] = r.ObjectID
		found[r.ObjectID] = r.objKey
	}
	lost := 0
	for id, want := range l.acked {
		got, ok := found[id]
		switch {
		case !ok:
			if lost++; lost <= 10 {
				t.Errorf("acknowledged object %s %+v is missing after restart", id, want)
			}
		case got != want:
			t.Errorf("acknowledged object %s has fields %+v, want %+v", id, got, want)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged objects lost", lost, len(l.acked))
	}
	// The creates acknowledged last before each kill, fetched one by one.
	for _, id := range l.lastAcked {
		status, body, err := do(srv.client, "GET", srv.url+"/classes/Crash/"+id, "")
		var got struct {
			ObjectID string
			objKey
		}
		if err == nil {
			err = json.Unmarshal(body, &got)
		}
		if err != nil || status != http.StatusOK || got.ObjectID != id || got.objKey != l.acked[id] {
			t.Errorf("GET acknowledged object %s (%+v): %d %s %v", id, l.acked[id], status, body, err)
		}
	}
	t.Logf("restart: %d objects stored, %d acknowledged, all acknowledged present: %v",
		len(found), len(l.acked), lost == 0)

	verifyTransactions(t, srv, l)

	for c, id := range l.counterIDs {
		got := int(fetchNumber(t, srv, "/classes/Counter/"+id, "count"))
		lo, hi := l.base[c]+l.incAcked[c], l.base[c]+l.incSent[c]
		if got < lo || got > hi {
			t.Errorf("counter %d = %d after restart; acknowledged increments make it at least %d, sent ones at most %d", c, got, lo, hi)
		}
		l.base[c], l.incAcked[c], l.incSent[c] = got, 0, 0
	}
}

// verifyTransactions checks that every transaction is all there or all
// gone, and all there when it was acknowledged.
func verifyTransactions(t *testing.T, srv *child, l *ledger) {
	t.Helper()
	status, body, err := doMaster(srv.client, "GET", srv.url+"/classes/CrashTx?limit=100000000", "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("listing CrashTx after restart: %d %.300s %v", status, body, err)
	}
	var list struct {
		Results []struct {
			objKey
			Part int
		}
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("listing CrashTx: %v: %.300s", err, body)
	}
	parts := map[objKey]uint{} // bit per part present
	for _, r := range list.Results {
		if !l.txSent[r.objKey] || r.Part < 0 || r.Part >= txParts {
			t.Errorf("CrashTx object %+v part %d was never sent", r.objKey, r.Part)
			continue
		}
		if parts[r.objKey]&(1<<r.Part) != 0 {
			t.Errorf("transaction %+v: part %d stored twice", r.objKey, r.Part)
		}
		parts[r.objKey] |= 1 << r.Part
	}
	const all = 1<<txParts - 1
	for k, got := range parts {
		if got != all {
			t.Errorf("transaction %+v partly applied after restart: parts %05b of %05b", k, got, uint(all))
		}
	}
	for k := range l.txAcked {
		if parts[k] != all {
			t.Errorf("acknowledged transaction %+v lost after restart (parts %05b)", k, parts[k])
		}
	}
	t.Logf("restart: %d transactions stored, %d acknowledged", len(parts), len(l.txAcked))
}

// txBody is a transactional POST /batch creating txParts CrashTx objects
// that carry k and their part number.
func txBody(k objKey) string {
	var b strings.Builder
	b.WriteString(`{"transaction":true,"requests":[`)
	for p := range txParts {
		if p > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"method":"POST","path":"%s/classes/CrashTx","body":{"round":%d,"worker":%d,"n":%d,"part":%d}}`,
			mountPath, k.Round, k.Worker, k.N, p)
	}
	b.WriteString("]}")
	return b.String()
}

// txSucceeded reports whether a batch reply holds txParts successes.
func txSucceeded(t *testing.T, body []byte) bool {
	t.Helper()
	var items []struct {
		Success map[string]any
	}
	if err := json.Unmarshal(body, &items); err != nil || len(items) != txParts {
		t.Errorf("transaction reply: %.300s (%v)", body, err)
		return false
	}
	for _, it := range items {
		if it.Success["objectId"] == nil {
			t.Errorf("transaction reply without objectIds: %.300s", body)
			return false
		}
	}
	return true
}

// child is one quarry process.
type child struct {
	cmd    *exec.Cmd
	url    string // base URL including the mount path
	log    string // file holding its stdout and stderr
	client *http.Client
	done   chan struct{}
	err    error // what Wait returned, once done is closed
}

// start runs quarry on db and waits until it answers /health.
func start(t *testing.T, db string) *child {
	t.Helper()
	logf, err := os.CreateTemp(t.TempDir(), "quarry-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	// Port 0: the child picks a free port itself and names it in its
	// banner, so no other process can take the port in between.
	cmd := exec.Command(quarryBin, "--appId", appID, "--masterKey", masterKey, "--host", "127.0.0.1",
		"--port", "0", "--mountPath", mountPath, "--databaseURI", db)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{
		cmd:    cmd,
		log:    logf.Name(),
		client: newClient(4),
		done:   make(chan struct{}),
	}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	t.Cleanup(c.kill)

	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-c.done:
			t.Fatalf("quarry exited during start-up: %v\n%s", c.err, c.output())
		default:
		}
		if c.url == "" {
			if m := bannerURL.FindStringSubmatch(c.output()); m != nil {
				c.url = "http://127.0.0.1:" + m[1] + mountPath
			}
		}
		var status int
		if c.url != "" {
			status, _, err = do(c.client, "GET", c.url+"/health", "")
			if err == nil && status == http.StatusOK {
				return c
			}
		}
		if time.Now().After(deadline) {
			c.kill()
			t.Fatalf("quarry did not answer %s/health within %v (last: %d %v)\n%s", c.url, startTimeout, status, err, c.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bannerURL finds the port in the start-up banner's serverURL line.
var bannerURL = regexp.MustCompile(`serverURL:\s+http://[^:/]+:(\d+)`)

// kill sends SIGKILL and reaps the process; a no-op once it has exited.
func (c *child) kill() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	c.client.CloseIdleConnections()
}

// stop asks for an orderly shutdown and expects exit status 0.
func (c *child) stop(t *testing.T) {
	t.Helper()
	c.client.CloseIdleConnections()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
		if c.err != nil {
			t.Errorf("quarry exited with %v after SIGTERM\n%s", c.err, c.output())
		}
	case <-time.After(stopTimeout):
		c.kill()
		t.Errorf("quarry did not stop within %v of SIGTERM\n%s", stopTimeout, c.output())
	}
}

func (c *child) output() string {
	b, err := os.ReadFile(c.log)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// newClient keeps up to conns connections alive. net/http never replays a
// POST or PUT on its own, so one request is sent at most once.
func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			DisableCompression:  true,
		},
	}
}

// do sends a request with the application id; body "" sends none.
func do(c *http.Client, method, u, body string) (int, []byte, error) {
	return send(c, method, u, body, false)
}

// doMaster is do with the master key: the listings that check a whole class
// use it, since queries that scan a large class without an index are
// refused to other callers (maxScan).
func doMaster(c *http.Client, method, u, body string) (int, []byte, error) {
	return send(c, method, u, body, true)
}

func send(c *http.Client, method, u, body string, master bool) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Parse-Application-Id", appID)
	if master {
		req.Header.Set("X-Parse-Master-Key", masterKey)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func objectID(t *testing.T, body []byte) string {
	t.Helper()
	var reply struct{ ObjectID string }
	if err := json.Unmarshal(body, &reply); err != nil || reply.ObjectID == "" {
		t.Errorf("create reply without objectId: %s", body)
	}
	return reply.ObjectID
}

// fetchNumber GETs the object at path (below the mount) and returns one
// numeric field.
func fetchNumber(t *testing.T, srv *child, path, field string) float64 {
	t.Helper()
	status, body, err := do(srv.client, "GET", srv.url+path, "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("GET %s: %d %s %v", path, status, body, err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	v, ok := m[field].(float64)
	if !ok {
		t.Fatalf("GET %s: field %s is %v (%T)", path, field, m[field], m[field])
	}
	return v
}
