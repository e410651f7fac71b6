package scaleout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/anishathalye/porcupine"
	"github.com/fasthttp/websocket"
)

// appID is the application id of every instance this test process
// starts: its own, so that two runs sharing the local Redis (LiveQuery
// channels are named by it) never hear each other.
var appID = fmt.Sprintf("scaleout-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)

const (
	masterKey = "scaleout-history-master"
	// liveClass is the class every instance serves to LiveQuery.
	liveClass = "Live"
	// sqlCounterClass is kept out of memory (sqlClasses) by every instance.
	sqlCounterClass = "SqlCounter"
	// startTimeout bounds one instance's start; eventTimeout bounds the wait
	// for one LiveQuery event (a bound on a failure, never an assertion on
	// speed).
	startTimeout = 30 * time.Second
	eventTimeout = 20 * time.Second
)

// quarryBin is the binary TestMain builds once for the package.
var quarryBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "quarry-scaleout-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if !testingShort() {
		quarryBin = filepath.Join(dir, "quarry")
		out, err := exec.Command("go", "build", "-o", quarryBin, "github.com/quarrydata/quarry/cmd/quarry").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}

// testingShort reads -test.short before m.Run parses the flags (TestMain
// builds the binary only when a test will run it).
func testingShort() bool {
	for _, a := range os.Args[1:] {
		if a == "-test.short" || a == "-test.short=true" {
			return true
		}
	}
	return false
}

// instance is one quarry process of the cluster.
type instance struct {
	name string // A, B or C in messages
	cmd  *exec.Cmd
	port int
	out  *lockedBuffer
	done chan struct{} // closed when the process has exited
}

func (in *instance) url() string { return fmt.Sprintf("http://127.0.0.1:%d/parse", in.port) }
func (in *instance) ws() string  { return fmt.Sprintf("ws://127.0.0.1:%d/parse", in.port) }

// lockedBuffer collects a process's output for the failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startInstance runs the binary on the database uri and waits until it
// answers /health. It is stopped (SIGTERM, then SIGKILL) when t ends.
func startInstance(t *testing.T, name, uri string, extra ...string) *instance {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	in := &instance{name: name, port: port, out: &lockedBuffer{}, done: make(chan struct{})}
	in.cmd = exec.Command(quarryBin, "--appId", appID, "--masterKey", masterKey, "--databaseURI", uri,
		"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--logLevel", "error",
		"--liveQuery.classNames", liveClass, "--sqlClasses", sqlCounterClass)
	in.cmd.Args = append(in.cmd.Args, extra...)
	in.cmd.Dir = t.TempDir()
	in.cmd.Stdout, in.cmd.Stderr = in.out, in.out
	in.cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // no QUARRY_* from the environment
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { in.cmd.Wait(); close(in.done) }()
	t.Cleanup(func() {
		in.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.done:
		case <-time.After(10 * time.Second):
			in.cmd.Process.Kill()
			<-in.done
		}
		if t.Failed() {
			t.Logf("--- output of instance %s ---\n%s", name, in.out)
		}
	})
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := http.Get(in.url() + "/health")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return in
			}
		}
		select {
		case <-in.done:
			t.Fatalf("instance %s exited at start:\n%s", name, in.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s did not start within %s:\n%s", name, startTimeout, in.out)
		}
		time.Sleep(50 * time.Millisecond) // a process starting: nothing tells us when it listens
	}
}

// kill9 ends the process at once (SIGKILL) and waits until it is gone.
func (in *instance) kill9() {
	in.cmd.Process.Kill()
	<-in.done
}

// reply is one HTTP answer: status 0 and err set when no answer came
// (the outcome of a write is then unknown).
type reply struct {
	status int
	body   map[string]any
	err    error
}

// code is the Parse error code of the reply, 0 when it has none.
func (r reply) code() int {
	c, _ := r.body["code"].(float64)
	return int(c)
}

// httpClient is shared by every simulated client: keep-alive connections
// to each instance, never a proxy.
var httpClient = &http.Client{
	Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64},
	Timeout:   30 * time.Second,
}

// call sends one request with the master key.
func call(method, url string, body any) reply {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return reply{err: err}
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{err: err}
	}
	req.Header.Set("X-Parse-Application-Id", appID)
	req.Header.Set("X-Parse-Master-Key", masterKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{err: err}
	}
	r := reply{status: resp.StatusCode}
	if err := json.Unmarshal(data, &r.body); err != nil {
		r.err = fmt.Errorf("HTTP %d, body not a JSON object: %q", resp.StatusCode, data)
	}
	return r
}

// mustCall is call for set-up steps that must succeed with status want.
func mustCall(t *testing.T, want int, method, url string, body any) map[string]any {
	t.Helper()
	r := call(method, url, body)
	if r.err != nil || r.status != want {
		t.Fatalf("%s %s: HTTP %d %v %v (want %d)", method, url, r.status, r.body, r.err, want)
	}
	return r.body
}

// history records operations with their call and return times on one
// monotonic clock, safe for concurrent clients.
type history struct {
	mu    sync.Mutex
	start time.Time
	ops   []porcupine.Operation
}

func newHistory() *history { return &history{start: time.Now()} }

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// record runs do as one operation of client with input in; do's result is
// the operation's output. An output whose outcome is unknown (no answer)
// returns at the end of time, as a write that may take effect later.
func (h *history) record(client int, in any, do func() (out any, unknown bool)) any {
	call := h.now()
	out, unknown := do()
	ret := h.now()
	if unknown {
		ret = 1<<63 - 1
	}
	h.mu.Lock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	h.mu.Unlock()
	return out
}

// check runs the linearizability checker on the recorded operations and
// fails t with the first operations of a partition that has no serial
// order, described by describe.
func (h *history) check(t *testing.T, model porcupine.Model, what string) {
	t.Helper()
	h.mu.Lock()
	ops := append([]porcupine.Operation(nil), h.ops...)
	h.mu.Unlock()
	res, info := porcupine.CheckOperationsVerbose(model, ops, 20*time.Second)
	switch res {
	case porcupine.Ok:
		t.Logf("%s: %d operations, linearizable", what, len(ops))
	case porcupine.Unknown:
		t.Fatalf("%s: the checker found no answer within 20 s over %d operations", what, len(ops))
	default:
		t.Errorf("%s: the history of %d operations has no serial order that the model allows", what, len(ops))
		partitions := model.Partition(ops)
		shown := 0
		for i, partition := range info.PartialLinearizationsOperations() {
			if shown == 5 {
				t.Errorf("  (more objects fail)")
				break
			}
			for _, lin := range partition {
				if len(lin) == len(partitions[i]) {
					break // this object's history has a serial order
				}
				shown++
				var steps []string
				for _, op := range lin {
					steps = append(steps, model.DescribeOperation(op.Input, op.Output))
				}
				if len(steps) > 12 {
					steps = steps[len(steps)-12:]
				}
				t.Errorf("  one object's longest serial prefix (%d of %d operations) ends with: %s", len(lin), len(partitions[i]), strings.Join(steps, "; "))
				break
			}
		}
	}
}

// liveClient is a LiveQuery subscriber on one instance, subscribed to the
// whole of liveClass; events collects what it receives, in order.
type liveClient struct {
	conn   *websocket.Conn
	events chan map[string]any
}

// subscribe connects to in's LiveQuery endpoint and subscribes to every
// object of liveClass; it returns once the server confirmed.
func subscribe(t *testing.T, in *instance) *liveClient {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(in.ws(), nil)
	if err != nil {
		t.Fatalf("LiveQuery on %s: %v", in.name, err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &liveClient{conn: conn, events: make(chan map[string]any, 4096)}
	msgs := make(chan map[string]any, 16)
	go func() {
		defer close(c.events)
		confirmed := false
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(data, &m) != nil {
				continue
			}
			if !confirmed {
				msgs <- m
				confirmed = m["op"] == "subscribed" || m["op"] == "error"
				continue
			}
			c.events <- m
		}
	}()
	send := func(v any) {
		data, _ := json.Marshal(v)
		if err := conn.WriteMessage(websocket.TextMessage, data); err != nil {
			t.Fatalf("LiveQuery on %s: %v", in.name, err)
		}
	}
	expect := func(op string) {
		select {
		case m := <-msgs:
			if m["op"] != op {
				t.Fatalf("LiveQuery on %s: got %v, want %q", in.name, m, op)
			}
		case <-time.After(eventTimeout):
			t.Fatalf("LiveQuery on %s: no %q within %s", in.name, op, eventTimeout)
		}
	}
	send(map[string]any{"op": "connect", "applicationId": appID, "masterKey": masterKey})
	expect("connected")
	send(map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{"className": liveClass, "where": map[string]any{}}})
	expect("subscribed")
	return c
}
