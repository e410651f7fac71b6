package live_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
// and started again while changes are published. The subscriber's reads
// wait until the test opens its gate, after the publisher has flushed what
// it queued meanwhile: with pub/sub every such change was lost; the stream
// keeps them for the subscriber to read on.
type outage struct {
	redis    *privateRedis
	pub      *live.Redis
	sub      *live.Redis
	rec      *lossRecorder
	logs     *syncBuffer
	gate     chan struct{} // closed: the subscriber may read again
	gateOnce sync.Once
	// pubFailing and subFailing are closed when the publisher failed to
	// publish and the subscriber failed to read.
	pubFailing, subFailing chan struct{}
}

func newOutage(t *testing.T, queue int) *outage {
	o := &outage{redis: startPrivateRedis(t), rec: &lossRecorder{}, logs: &syncBuffer{},
		gate: make(chan struct{}), pubFailing: make(chan struct{}), subFailing: make(chan struct{})}
	app := testAppID()
	var err error
	o.pub, err = live.OpenRedis(live.RedisOptions{URL: o.redis.url(), Prefix: app, PublishQueue: queue,
		Logger: slog.New(slog.NewTextHandler(o.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.pub.Close() })
	var pubFailed, subFailed sync.Once
	live.SetRetryWait(o.pub, func(int) bool {
		pubFailed.Do(func() { close(o.pubFailing) })
		// A killed redis-server: a short pause keeps retries from spinning.
		time.Sleep(10 * time.Millisecond)
		return true
	})
	o.sub, err = live.OpenRedis(live.RedisOptions{URL: o.redis.url(), Prefix: app,
		Logger: slog.New(slog.NewTextHandler(o.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.sub.Close() })
	// Runs before the subscriber's Close (cleanups run last-in first-out):
	// a test that failed before opening the gate must not leave the reader
	// waiting on it, or Close waits for that reader for ever.
	t.Cleanup(o.openGate)
	live.SetReadRetryWait(o.sub, func(int) bool {
		subFailed.Do(func() { close(o.subFailing) })
		<-o.gate
		time.Sleep(10 * time.Millisecond)
		return true
	})
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

// cut kills Redis, publishes [from, to) meanwhile, waits until both sides
// have failed, starts Redis again, waits until the publisher has flushed
// (its queue is empty and flushed holds for one of the stream's entries:
// on a loaded machine the publisher may drain part of the queue between
// the test's publishes, so the entry sought need not be the newest), then
// lets the subscriber read again.
func (o *outage) cut(t *testing.T, from, to int, flushed func(newest map[string]any) bool) {
	o.redis.kill()
	o.publish(from, to)
	for _, ch := range []chan struct{}{o.pubFailing, o.subFailing} {
		select {
		case <-ch:
		case <-time.After(waitFor):
			t.Fatal("the publisher or the subscriber never noticed that Redis is down")
		}
	}
	o.redis.start()
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", o.redis.port)})
	defer raw.Close()
	deadline := time.Now().Add(waitFor)
	for {
		entries, err := raw.XRange(context.Background(), o.pub.Stream(), "-", "+").Result()
		if err == nil && o.pub.Queued() == 0 && slices.ContainsFunc(entries, func(m redis.XMessage) bool { return flushed(m.Values) }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the publisher never flushed: %d entries, %v\n%s", len(entries), err, o.logs.String())
		}
		// Nothing tells the test when the publisher's retry succeeds.
		time.Sleep(10 * time.Millisecond)
	}
	o.openGate()
}

func (o *outage) openGate() { o.gateOnce.Do(func() { close(o.gate) }) }

// seqIs is a flushed condition: the entry with sequence number n.
func seqIs(n int) func(map[string]any) bool {
	return func(v map[string]any) bool { return v["s"] == fmt.Sprint(n) }
}

// TestRedisOutageLosesNothing: changes published while Redis is down wait
// in the publisher's queue; the subscriber, back only after the publisher
// flushed them, reads them from the stream after the last change it
// delivered: all of them, in order, and no loss notice. The outage is
// logged once, with its end.
func TestRedisOutageLosesNothing(t *testing.T) {
	o := newOutage(t, 0)
	o.publish(0, 50)
	waitUntil(t, "the first 50 changes", o.rec.wake(), func() bool { return o.rec.count() == 50 })
	o.cut(t, 50, 150, seqIs(150))
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
	if n := o.rec.lossCount(); n != 0 {
		t.Errorf("%d loss notices for an outage that lost nothing", n)
	}
	waitUntil(t, "the recovery log line", o.logs.wake(), func() bool { return strings.Contains(o.logs.String(), "redis reachable again") }, o.logs.String)
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
	o.cut(t, 0, 100, func(v map[string]any) bool { return v["c"] == live.ChannelChangesLost })
	// One notice, or more when the publisher drained part of its queue
	// while the changes were published and then dropped again.
	waitUntil(t, "the lost-changes notice", o.rec.wake(), func() bool { return o.rec.lossCount() >= 1 })
	dropped := o.pub.Dropped()
	if dropped == 0 || dropped > 100-queue {
		t.Fatalf("dropped %d of 100 with a queue of %d", dropped, queue)
	}
	waitUntil(t, "the kept changes", o.rec.wake(), func() bool { return o.rec.count() == 100-int(dropped) })
	o.rec.lossMu.Lock()
	if l := o.rec.losses[0]; len(l) != 1 || l[0] != "A" {
		t.Errorf("lost classes %v, want [A]", l)
	}
	o.rec.lossMu.Unlock()
	waitUntil(t, "the recovery log line", o.logs.wake(), func() bool { return strings.Contains(o.logs.String(), "reachable again") }, o.logs.String)
	if logs := o.logs.String(); !strings.Contains(logs, fmt.Sprintf("dropped=%d", dropped)) {
		t.Errorf("the log does not give the real count %d:\n%s", dropped, logs)
	}
}

// heldSink is a lossRecorder whose first delivery waits until release is
// closed: its reader stops reading meanwhile, as a slow or stuck
// LiveQuery server would.
type heldSink struct {
	lossRecorder
	held    chan struct{} // closed when the first delivery arrived
	release chan struct{}
	once    sync.Once
	// changesAtLoss is how many changes had been delivered at each notice.
	changesAtLoss []int
}

func (h *heldSink) Publish(c live.Change) {
	h.once.Do(func() {
		close(h.held)
		<-h.release
	})
	h.lossRecorder.Publish(c)
}

func (h *heldSink) ChangesLost(classes []string) {
	h.mu.Lock()
	h.changesAtLoss = append(h.changesAtLoss, len(h.changes))
	h.mu.Unlock()
	h.lossRecorder.ChangesLost(classes)
}

// TestRedisStreamTrimTellsSubscriber: a subscriber that fell behind by
// more than the stream keeps is told at once, before the changes after
// the gap, and then gets those in order.
func TestRedisStreamTrimTellsSubscriber(t *testing.T) {
	r := startPrivateRedis(t)
	app := testAppID()
	pub, err := live.OpenRedis(live.RedisOptions{URL: r.url(), Prefix: app, StreamMaxLen: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pub.Close() })
	sub, err := live.OpenRedis(live.RedisOptions{URL: r.url(), Prefix: app})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	sink := &heldSink{held: make(chan struct{}), release: make(chan struct{})}
	if err := sub.Subscribe(context.Background(), sink); err != nil {
		t.Fatal(err)
	}
	o := &outage{pub: pub}
	o.publish(0, 1)
	select {
	case <-sink.held:
	case <-time.After(waitFor):
		t.Fatal("the first change never arrived")
	}
	o.publish(1, 100)
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port)})
	defer raw.Close()
	deadline := time.Now().Add(waitFor)
	for {
		newest, err := raw.XRevRangeN(context.Background(), pub.Stream(), "+", "-", 1).Result()
		if err == nil && len(newest) == 1 && newest[0].Values["s"] == "100" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the publisher never published 100 changes")
		}
		time.Sleep(10 * time.Millisecond) // nothing tells when a pipeline is sent
	}
	close(sink.release)
	waitUntil(t, "the changes kept", sink.wake(), func() bool { return sink.count() == 11 })
	sink.mu.Lock()
	defer sink.mu.Unlock()
	got := []string{}
	for _, c := range sink.changes {
		got = append(got, fmt.Sprint(c.Object["objectId"]))
	}
	if want := []string{"0", "90", "91", "92", "93", "94", "95", "96", "97", "98", "99"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("received %v, want %v", got, want)
	}
	if len(sink.changesAtLoss) == 0 || sink.changesAtLoss[0] != 1 {
		t.Errorf("loss notices after %v changes, want one right after the first (before those after the gap)", sink.changesAtLoss)
	}
}

// TestRedisOutageKeepsClientsEvents: a WebSocket client of an instance
// whose Redis went away and came back stays connected and gets the events
// of writes made after (no reconnect asked: the stream lost nothing).
func TestRedisOutageKeepsClientsEvents(t *testing.T) {
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
	res := srv.Do(t, "POST", "/classes/Message", map[string]any{"text": "after the outage"},
		map[string]string{"X-Parse-Application-Id": app, "X-Parse-Master-Key": servertest.MasterKey})
	if res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	m := c.expect("create")
	if obj, _ := m["object"].(map[string]any); obj["text"] != "after the outage" {
		t.Errorf("event %v", m)
	}
}
