package live_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/server/servertest"
)

// privateRedis is a redis-server of the test's own, on a free loopback
// port, that the test may kill and start again (the shared one on 6379 is
// never touched).
type privateRedis struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

func startPrivateRedis(t *testing.T) *privateRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		msg := "!!! redis-server is not installed: the Redis outage tests need it (apt-get install redis-server)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &privateRedis{t: t, port: port}
	r.start()
	t.Cleanup(r.kill)
	return r
}

func (r *privateRedis) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

func (r *privateRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(waitFor)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", r.port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %d did not start: %v", r.port, err)
		}
		// A real redis-server is starting: nothing tells us when it listens.
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *privateRedis) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		r.cmd = nil
	}
}

// lossRecorder is a Feed that also records ChangesLost notices.
type lossRecorder struct {
	recorder
	lossMu sync.Mutex
	losses [][]string
}

func (r *lossRecorder) ChangesLost(classes []string) {
	r.lossMu.Lock()
	r.losses = append(r.losses, classes)
	r.lossMu.Unlock()
	r.notify()
}

func (r *lossRecorder) lossCount() int {
	r.lossMu.Lock()
	defer r.lossMu.Unlock()
	return len(r.losses)
}

// waitUntil tests cond each time wake fires (a pulse's) until it holds,
// failing after waitFor.
func waitUntil(t *testing.T, what string, wake <-chan struct{}, cond func() bool, context ...func() string) {
	t.Helper()
	deadline := time.After(waitFor)
	for !cond() {
		select {
		case <-wake:
		case <-deadline:
			for _, c := range context {
				t.Log(c())
			}
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// outage runs a publisher and a subscriber through a Redis that is killed
// and started again while changes are published. The publisher's retries
// wait until the test opens its gate, after the subscriber is back, so
// what the subscriber receives does not depend on timing.
type outage struct {
	redis *privateRedis
	pub   *live.Redis
	sub   *live.Redis
	rec   *lossRecorder
	logs  *syncBuffer
	gate  chan struct{} // closed: the publisher may retry
	// failing is closed when the publisher has failed to publish.
	failing chan struct{}
}

func newOutage(t *testing.T, queue int) *outage {
	o := &outage{redis: startPrivateRedis(t), rec: &lossRecorder{}, logs: &syncBuffer{},
		gate: make(chan struct{}), failing: make(chan struct{})}
	app := testAppID()
	var err error
	o.pub, err = live.OpenRedis(live.RedisOptions{URL: o.redis.url(), Prefix: app, PublishQueue: queue,
		Logger: slog.New(slog.NewTextHandler(o.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.pub.Close() })
	var failed sync.Once
	live.SetRetryWait(o.pub, func(int) bool {
		failed.Do(func() { close(o.failing) })
		<-o.gate
		// redis-server has just restarted: a pooled connection may still
		// fail; a short pause keeps such retries from spinning.
		time.Sleep(10 * time.Millisecond)
		return true
	})
	o.sub, err = live.OpenRedis(live.RedisOptions{URL: o.redis.url(), Prefix: app})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.sub.Close() })
	if err := o.sub.Subscribe(context.Background(), o.rec); err != nil {
		t.Fatal(err)
	}
	return o
}

func (o *outage) publish(from, to int) {
	for i := from; i < to; i++ {
		o.pub.Publish(live.Change{Class: "A", Object: map[string]any{"objectId": fmt.Sprint(i), "className": "A"}})
	}
}

// cut kills Redis, publishes [from, to) meanwhile, waits until the
// publisher has failed, starts Redis again, waits until the subscriber has subscribed again (it reports a loss of
// every class then), then lets the publisher retry.
func (o *outage) cut(t *testing.T, from, to int) {
	o.redis.kill()
	o.publish(from, to)
	select {
	case <-o.failing:
	case <-time.After(waitFor):
		t.Fatal("the publisher never noticed that Redis is down")
	}
	o.redis.start()
	waitUntil(t, "the subscriber to subscribe again", o.rec.wake(), func() bool { return o.rec.lossCount() > 0 })
	close(o.gate)
}

// TestRedisOutageLosesNothingQueued: changes published while Redis is down
// wait in the queue and reach the subscriber, in order, once it is back;
// the outage is logged once, with its end.
func TestRedisOutageLosesNothingQueued(t *testing.T) {
	o := newOutage(t, 0)
	o.publish(0, 50)
	waitUntil(t, "the first 50 changes", o.rec.wake(), func() bool { return o.rec.count() == 50 })
	o.cut(t, 50, 150)
	waitUntil(t, "all 150 changes", o.rec.wake(), func() bool { return o.rec.count() == 150 }, o.logs.String)
	o.rec.mu.Lock()
	for i, c := range o.rec.changes {
		if id := c.Object["objectId"]; id != fmt.Sprint(i) {
			t.Fatalf("change %d is object %v: out of order", i, id)
		}
	}
	o.rec.mu.Unlock()
	if d := o.pub.Dropped(); d != 0 {
		t.Errorf("%d changes dropped", d)
	}
	if l := o.rec.losses[0]; len(l) != 0 {
		t.Errorf("the subscriber's own outage reported classes %v, want every class", l)
	}
	waitUntil(t, "the recovery log line", o.logs.wake(), func() bool { return strings.Contains(o.logs.String(), "reachable again") }, o.logs.String)
	logs := o.logs.String()
	if n := strings.Count(logs, "redis unreachable"); n != 1 {
		t.Errorf("the outage was logged %d times, want once:\n%s", n, logs)
	}
}

// TestRedisOverflowTellsSubscribers: past the publisher's queue, changes
// are dropped and counted; once Redis answers, the subscribers learn which
// classes lost changes, and the log says how many.
func TestRedisOverflowTellsSubscribers(t *testing.T) {
	const queue = 10
	o := newOutage(t, queue)
	o.cut(t, 0, 100)
	// The batch being retried plus a full queue survive; the rest is lost.
	waitUntil(t, "the lost-changes notice", o.rec.wake(), func() bool { return o.rec.lossCount() == 2 })
	dropped := o.pub.Dropped()
	if dropped == 0 || dropped > 100-queue {
		t.Fatalf("dropped %d of 100 with a queue of %d", dropped, queue)
	}
	waitUntil(t, "the kept changes", o.rec.wake(), func() bool { return o.rec.count() == 100-int(dropped) })
	o.rec.lossMu.Lock()
	if l := o.rec.losses[1]; len(l) != 1 || l[0] != "A" {
		t.Errorf("lost classes %v, want [A]", l)
	}
	o.rec.lossMu.Unlock()
	waitUntil(t, "the recovery log line", o.logs.wake(), func() bool { return strings.Contains(o.logs.String(), "reachable again") }, o.logs.String)
	if logs := o.logs.String(); !strings.Contains(logs, fmt.Sprintf("dropped=%d", dropped)) {
		t.Errorf("the log does not give the real count %d:\n%s", dropped, logs)
	}
}

// TestRedisOutageAsksClientsToRefetch: a WebSocket client of an instance
// whose Redis subscription was cut gets an error frame asking it to
// reconnect, then its connection is closed (the SDK re-subscribes).
func TestRedisOutageAsksClientsToRefetch(t *testing.T) {
	r := startPrivateRedis(t)
	app := testAppID()
	srv := servertest.Start(t, func(o *config.Options) {
		o.AppID = app
		o.LiveQuery.ClassNames = []string{"Message"}
		o.LiveQuery.RedisURL = r.url()
	})
	c := dial(t, wsURL(srv))
	c.send(map[string]any{"op": "connect", "applicationId": app})
	c.expect("connected")
	c.subscribe(1, "Message", map[string]any{}, nil)
	r.kill()
	r.start()
	m := c.expectError(live.CodeChangesLost, "reconnect")
	if m["reconnect"] != true {
		t.Errorf("error frame %v does not ask for a reconnect", m)
	}
	c.closed()
}
