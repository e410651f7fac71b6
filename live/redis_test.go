package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/live/redistest"
	"github.com/quarrydata/quarry/server/servertest"
)

// The Redis tests use the local redis-server on 127.0.0.1:6379 (nothing
// else, ever) and channels of their own: each test's application id is
// quarry-test-<random>, and channel names start with it. They hold no
// keys; closing their connections cleans up. Without Redis they skip
// loudly, and fail when CI=true (.ci/run installs and starts Redis).
const redisURL = redistest.URL

func requireRedis(t *testing.T) {
	t.Helper()
	redistest.Require(t, "the multi-instance LiveQuery tests")
}

func testAppID() string {
	id := fmt.Sprintf("quarry-test-%d", rand.Uint64())
	testApps.Lock()
	testApps.ids = append(testApps.ids, id)
	testApps.Unlock()
	return id
}

// testApps are the application ids the tests used: TestMain deletes
// their LiveQuery streams from the shared Redis (only theirs: other
// processes may be testing against it at the same time).
var testApps struct {
	sync.Mutex
	ids []string
}

func dropTestStreams() {
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	testApps.Lock()
	defer testApps.Unlock()
	for _, id := range testApps.ids {
		rdb.Del(context.Background(), id+live.StreamSuffix)
	}
}

// appHeaders are the headers of an application id other than servertest's.
func appHeaders(appID, masterKey string) map[string]string {
	h := map[string]string{"X-Parse-Application-Id": appID}
	if masterKey != "" {
		h["X-Parse-Master-Key"] = masterKey
	}
	return h
}

// Two in-process servers on one Redis: a write on either reaches the
// subscribers of both, each event exactly once.
func TestRedisTwoInstancesInProcess(t *testing.T) {
	requireRedis(t)
	app := testAppID()
	start := func() *servertest.Server {
		return servertest.Start(t, func(o *config.Options) {
			o.AppID = app
			o.LiveQuery.ClassNames = []string{"Message"}
			o.LiveQuery.RedisURL = redisURL
		})
	}
	a, b := start(), start()
	onA, onB := dial(t, wsURL(a)), dial(t, wsURL(b))
	for _, c := range []*wsClient{onA, onB} {
		c.send(map[string]any{"op": "connect", "applicationId": app})
		c.expect("connected")
		c.subscribe(1, "Message", map[string]any{"room": "r"}, nil)
	}
	h := appHeaders(app, "")
	ra := a.Do(t, "POST", "/classes/Message", map[string]any{"room": "r", "from": "a"}, h)
	rb := b.Do(t, "POST", "/classes/Message", map[string]any{"room": "r", "from": "b"}, h)
	if ra.Status != 201 || rb.Status != 201 {
		t.Fatalf("writes: %d %s / %d %s", ra.Status, ra.Body, rb.Status, rb.Body)
	}
	// Sentinels: a second change of each object, on the instance that
	// holds it, follows its create everywhere; a create delivered twice
	// would take a place among these four events.
	for _, w := range []struct {
		on  *servertest.Server
		res servertest.Response
	}{{a, ra}, {b, rb}} {
		if r := w.on.Do(t, "PUT", "/classes/Message/"+w.res.Map()["objectId"].(string), map[string]any{"mark": "end"}, h); r.Status != 200 {
			t.Fatalf("sentinel write: %d %s", r.Status, r.Body)
		}
	}
	for name, c := range map[string]*wsClient{"A": onA, "B": onB} {
		got := map[string]bool{}
		for _, ev := range c.expectEvents("create 1", "create 1", "update 1", "update 1") {
			if ev["op"] == "create" {
				got[fmt.Sprint(ev["object"].(map[string]any)["from"])] = true
			}
		}
		if !got["a"] || !got["b"] {
			t.Errorf("subscriber on %s got %v", name, got)
		}
	}
}

// The channel layout is Parse Server's; a plain Redis subscriber sees it.
func TestRedisChannelLayout(t *testing.T) {
	requireRedis(t)
	app := testAppID()
	r, err := live.OpenRedis(live.RedisOptions{URL: redisURL, Prefix: app})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sink := &recorder{}
	if err := r.Subscribe(context.Background(), sink); err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"__type": "Object", "className": "Message", "objectId": "m1", "text": "hi"}
	r.Publish(live.Change{Class: "Message", Object: obj, Original: map[string]any{"className": "Message", "objectId": "m1"}, CLP: map[string]any{"find": map[string]any{"*": true}}})
	r.Publish(live.Change{Class: "Message", Object: obj, Deleted: true})
	r.ForgetSessions("u1")
	r.ForgetSessions("")
	waitUntil(t, "two changes and two forgets", sink.wake(), func() bool { return sink.count() >= 4 })
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.changes) != 2 || len(sink.forgot) != 2 {
		t.Fatalf("received %d changes, %d forgets", len(sink.changes), len(sink.forgot))
	}
	save, del := sink.changes[0], sink.changes[1]
	if save.Class != "Message" || save.Deleted || save.Original["objectId"] != "m1" || save.CLP == nil || save.Object["text"] != "hi" {
		t.Errorf("afterSave decoded as %+v", save)
	}
	if !del.Deleted || del.Original != nil || del.Object["objectId"] != "m1" {
		t.Errorf("afterDelete decoded as %+v", del)
	}
	if sink.forgot[0] != "u1" || sink.forgot[1] != "" {
		t.Errorf("clearCache %q", sink.forgot)
	}
	if r.Channel(live.ChannelAfterSave) != app+"afterSave" {
		t.Errorf("channel %s", r.Channel(live.ChannelAfterSave))
	}
}

type recorder struct {
	pulse
	mu      sync.Mutex
	changes []live.Change
	forgot  []string
}

func (r *recorder) Publish(c live.Change) {
	r.mu.Lock()
	r.changes = append(r.changes, c)
	r.mu.Unlock()
	r.notify()
}

func (r *recorder) ForgetSessions(id string) {
	r.mu.Lock()
	r.forgot = append(r.forgot, id)
	r.mu.Unlock()
	r.notify()
}

// pulse wakes the one goroutine waiting for its owner to change (see
// waitUntil); the zero pulse is ready.
type pulse struct {
	once sync.Once
	ch   chan struct{}
}

func (p *pulse) wake() <-chan struct{} {
	p.once.Do(func() { p.ch = make(chan struct{}, 1) })
	return p.ch
}

// notify is called after each change; a wake-up not yet taken stands for
// all the changes since.
func (p *pulse) notify() {
	p.wake()
	select {
	case p.ch <- struct{}{}:
	default:
	}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.changes) + len(r.forgot)
}

// process is a quarry binary running for a test.
type process struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	port int
}

type syncBuffer struct {
	pulse
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.b.Write(p)
	s.mu.Unlock()
	s.notify()
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var buildOnce struct {
	sync.Once
	bin string
	err error
	dir string
}

// quarryBinary builds cmd/quarry once per test run.
func quarryBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildOnce.dir, buildOnce.err = os.MkdirTemp("", "quarry-live-bin-")
		if buildOnce.err != nil {
			return
		}
		buildOnce.bin = filepath.Join(buildOnce.dir, "quarry")
		out, err := exec.Command("go", "build", "-o", buildOnce.bin, "github.com/quarrydata/quarry/cmd/quarry").CombinedOutput()
		if err != nil {
			buildOnce.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
	return buildOnce.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	dropTestStreams()
	if buildOnce.dir != "" {
		os.RemoveAll(buildOnce.dir)
	}
	os.Exit(code)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// run starts the binary with args and waits until url answers /health.
func run(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{out: &syncBuffer{}, port: freePort(t)}
	args = append(args, "--host", "127.0.0.1", "--port", strconv.Itoa(p.port))
	p.cmd = exec.Command(quarryBinary(t), args...)
	p.cmd.Dir = t.TempDir()
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // no QUARRY_* from the environment
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("--- output of %s ---\n%s", strings.Join(args, " "), p.out)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/parse/health", p.port))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		select {
		case <-exited:
			t.Fatalf("quarry exited at start:\n%s", p.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("quarry did not start:\n%s", p.out)
		}
		// A real process is starting: nothing tells us when it listens.
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *process) url() string { return fmt.Sprintf("http://127.0.0.1:%d/parse", p.port) }
func (p *process) ws() string  { return fmt.Sprintf("ws://127.0.0.1:%d/parse", p.port) }

func restCall(t *testing.T, method, url string, body any, headers map[string]string) map[string]any {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url, bytes.NewReader(data))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: HTTP %d %s", method, url, resp.StatusCode, out)
	}
	var m map[string]any
	json.Unmarshal(out, &m)
	return m
}

// Two quarry processes and a standalone `quarry livequery` on one real
// Redis: a write on the first reaches a subscriber of the second and of
// the standalone server, which checks sessions with the first.
func TestRedisTwoProcesses(t *testing.T) {
	requireRedis(t)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	app, master := testAppID(), "mk-"+strconv.FormatUint(rand.Uint64(), 36)
	common := []string{"--appId", app, "--masterKey", master, "--liveQuery.classNames", "Message", "--liveQuery.redisURL", redisURL}
	a := run(t, append(common, "--databaseURI", filepath.Join(t.TempDir(), "a.db"))...)
	b := run(t, append(common, "--databaseURI", filepath.Join(t.TempDir(), "b.db"))...)
	lq := run(t, "livequery", "--appId", app, "--masterKey", master, "--liveQuery.redisURL", redisURL,
		"--liveQueryServerOptions.serverURL", a.url())

	h := appHeaders(app, "")
	alice := restCall(t, "POST", a.url()+"/users", map[string]any{"username": "alice", "password": "pw"}, h)
	bob := restCall(t, "POST", a.url()+"/users", map[string]any{"username": "bob", "password": "pw"}, h)

	onB := dial(t, b.ws())
	onB.send(map[string]any{"op": "connect", "applicationId": app})
	onB.expect("connected")
	onB.subscribe(1, "Message", map[string]any{}, nil)
	asAlice := dial(t, lq.ws())
	asAlice.send(map[string]any{"op": "connect", "applicationId": app, "sessionToken": alice["sessionToken"]})
	asAlice.expect("connected")
	asAlice.subscribe(1, "Message", map[string]any{}, nil)

	restCall(t, "POST", a.url()+"/classes/Message", map[string]any{"text": "public"}, h)
	if obj, _ := onB.event("create", 1); obj["text"] != "public" {
		t.Errorf("B got %v", obj)
	}
	if obj, _ := asAlice.event("create", 1); obj["text"] != "public" {
		t.Errorf("standalone got %v", obj)
	}
	// A private object: the standalone server applies the ACL with the
	// identity it got from the REST server.
	aclOf := func(user map[string]any) map[string]any {
		return map[string]any{user["objectId"].(string): map[string]any{"read": true}}
	}
	bobs := restCall(t, "POST", a.url()+"/classes/Message", map[string]any{"text": "bob's", "ACL": aclOf(bob)}, h)
	alices := restCall(t, "POST", a.url()+"/classes/Message", map[string]any{"text": "alice's", "ACL": aclOf(alice)}, h)
	if obj, _ := asAlice.event("create", 1); obj["text"] != "alice's" {
		t.Errorf("standalone got %v, want only alice's private object", obj)
	}
	// Sentinels: both objects made public. B's client (no session) heard
	// of neither, so both enter; alice heard only of hers.
	public := map[string]any{"ACL": map[string]any{"*": map[string]any{"read": true}}}
	for _, o := range []map[string]any{bobs, alices} {
		restCall(t, "PUT", a.url()+"/classes/Message/"+o["objectId"].(string), public, appHeaders(app, master))
	}
	onB.expectEvents("enter 1", "enter 1")
	for _, ev := range asAlice.expectEvents("enter 1", "update 1") {
		if want := map[any]string{"enter": "bob's", "update": "alice's"}[ev["op"]]; ev["object"].(map[string]any)["text"] != want {
			t.Errorf("standalone got %v", ev)
		}
	}
}
