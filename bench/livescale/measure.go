package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}

// call sends one REST request with the master key and decodes the reply.
func call(method, url string, body []byte, into any) error {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Parse-Application-Id", appID)
	req.Header.Set("X-Parse-Master-Key", masterKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %.300s", method, url, resp.StatusCode, out)
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(out, into)
}

var heapAllocLine = regexp.MustCompile(`# HeapAlloc = (\d+)`)

// heap is an instance's live heap after a forced collection (pprof).
func (in *instance) heap() int64 {
	resp, err := httpClient.Get("http://" + in.pprof + "/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := heapAllocLine.FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

type footprint struct{ heap, rss int64 }

func sample(ins []*instance) (f footprint) {
	for _, in := range ins {
		f.heap += in.heap()
		f.rss += in.RSS()
	}
	return f
}

func cpuOf(ins []*instance) (d time.Duration) {
	for _, in := range ins {
		d += in.CPU()
	}
	return d
}

// createOwners makes n Owners {tier: i} in batches and returns their ids.
func createOwners(base string, n int) ([]string, error) {
	ids := make([]string, 0, n)
	for start := 0; start < n; start += 20 {
		var reqs []map[string]any
		for t := start; t < min(n, start+20); t++ {
			reqs = append(reqs, map[string]any{"method": "POST", "path": "/parse/classes/Owner", "body": map[string]any{"tier": t}})
		}
		body, _ := json.Marshal(map[string]any{"requests": reqs})
		var out []struct {
			Success struct {
				ObjectID string `json:"objectId"`
			} `json:"success"`
			Error any `json:"error"`
		}
		if err := call("POST", base+"/batch", body, &out); err != nil {
			return nil, err
		}
		for _, r := range out {
			if r.Error != nil || r.Success.ObjectID == "" {
				return nil, fmt.Errorf("creating an Owner: %v", r.Error)
			}
			ids = append(ids, r.Success.ObjectID)
		}
	}
	return ids, nil
}

// awaitCount polls class's count on every instance until it is n (the
// instances follow the database's change log).
func awaitCount(ins []*instance, class string, n int) error {
	deadline := time.Now().Add(time.Minute)
	for _, in := range ins {
		for {
			var out struct {
				Count int `json:"count"`
			}
			if err := call("GET", in.URL+"/classes/"+class+"?count=1&limit=0", nil, &out); err != nil {
				return err
			}
			if out.Count >= n {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s at %s: %d %s, want %d", in.URL, class, out.Count, class, n)
			}
			time.Sleep(50 * time.Millisecond) // following a log: polled
		}
	}
	return nil
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func measure(o *options, ins []*instance) (int64, error) {
	m := newModel(o.subs, o.joinShare)
	fmt.Printf("%d instances, %d connections, %d subscriptions (equality %d, range %d, geo-circle %d, live join %d), %d writes/s for %s\n",
		len(ins), o.conns, m.total(), m.nEq, m.nRange, m.nGeo, m.nJoin, o.rate, o.duration)
	var owners []string
	if m.nJoin > 0 {
		var err error
		if owners, err = createOwners(ins[0].URL, m.tiers); err != nil {
			return 0, err
		}
	}
	// The class Item exists before anyone subscribes to it.
	if err := call("POST", ins[0].URL+"/classes/Item", write{}.body(-1, owners), nil); err != nil {
		return 0, err
	}
	if err := awaitCount(ins, "Owner", len(owners)); err != nil {
		return 0, err
	}
	if err := awaitCount(ins, "Item", 1); err != nil {
		return 0, err
	}
	base := sample(ins)
	fmt.Printf("instances before connections: heap %.0f MB, RSS %.0f MB\n", mb(base.heap), mb(base.rss))

	start := time.Now()
	conns, err := dialAll(o, ins)
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	if err != nil {
		return 0, err
	}
	connected := sample(ins)
	fmt.Printf("%d connections in %.1f s: heap +%.0f B, RSS +%.0f B per connection\n", len(conns), time.Since(start).Seconds(),
		float64(connected.heap-base.heap)/float64(len(conns)), float64(connected.rss-base.rss)/float64(len(conns)))

	start = time.Now()
	if err := subscribeAll(conns, m, o.conns); err != nil {
		return 0, err
	}
	subscribed := sample(ins)
	fmt.Printf("%d subscriptions in %.1f s: heap +%.0f B, RSS +%.0f B per subscription (instances: heap %.0f MB, RSS %.0f MB)\n",
		m.total(), time.Since(start).Seconds(),
		float64(subscribed.heap-connected.heap)/float64(m.total()), float64(subscribed.rss-connected.rss)/float64(m.total()),
		mb(subscribed.heap), mb(subscribed.rss))

	maxWrites := int(float64(o.rate)*o.duration.Seconds()*1.1) + 100
	got := make([]atomic.Int32, maxWrites)
	for _, c := range conns {
		go c.read(got)
	}
	profiled := make(chan struct{})
	if o.profile != "" {
		go func() {
			defer close(profiled)
			if err := fetchProfile(ins[0], o.duration, o.profile); err != nil {
				fmt.Println("CPU profile:", err)
			}
		}()
	} else {
		close(profiled)
	}
	cpu0 := cpuOf(ins)
	t0 := time.Now()
	writes, writeErrs, firstErr := pacedWrites(o, ins, m, owners)
	writeEnd := time.Now()
	var expected int64
	for _, w := range writes {
		expected += int64(w.expected)
	}
	// Drain: until every expected event arrived, or 10 s without one.
	var received int64
	last, lastAt := int64(-1), time.Now()
	for {
		received = 0
		for _, c := range conns {
			received += c.events.Load()
		}
		if received >= expected || time.Since(lastAt) > 10*time.Second || time.Since(writeEnd) > time.Minute {
			break
		}
		if received != last {
			last, lastAt = received, time.Now()
		}
		time.Sleep(20 * time.Millisecond) // counting arrivals: polled
	}
	end := time.Now()
	cpu := cpuOf(ins) - cpu0
	<-profiled
	var lostEvents, dupEvents int64
	for seq, w := range writes {
		switch d := int64(got[seq].Load()) - int64(w.expected); {
		case d < 0:
			lostEvents -= d
		case d > 0:
			dupEvents += d
		}
	}
	for _, c := range conns {
		c.close() // the readers end, so their samples can be read
	}
	var fromCommit, fromSend []time.Duration
	var errs []string
	for _, c := range conns {
		fromCommit = append(fromCommit, c.fromCommit...)
		fromSend = append(fromSend, c.fromSend...)
		if c.err != "" && len(errs) < 3 {
			errs = append(errs, c.err)
		}
	}
	slices.Sort(fromCommit)
	slices.Sort(fromSend)
	wsec := writeEnd.Sub(t0).Seconds()
	fmt.Printf("writes: %d in %.1f s (%.0f/s), %d failed%s\n", len(writes), wsec, float64(len(writes))/wsec, writeErrs, firstErr)
	fmt.Printf("events: %d expected, %d delivered, %d lost, %d duplicated; %.0f events/s over the writes and the drain (%.1f s)\n",
		expected, received, lostEvents, dupEvents, float64(received)/end.Sub(t0).Seconds(), end.Sub(t0).Seconds())
	fmt.Printf("commit→delivery (createdAt, ms resolution): p50 %s p99 %s max %s\n", pct(fromCommit, 50), pct(fromCommit, 99), pct(fromCommit, 100))
	fmt.Printf("send→delivery (includes the write's round trip): p50 %s p99 %s max %s\n", pct(fromSend, 50), pct(fromSend, 99), pct(fromSend, 100))
	fmt.Printf("server CPU: %.1f s over %d instances = %.1f µs per event, %.0f µs per write\n", cpu.Seconds(), len(ins),
		float64(cpu.Microseconds())/float64(max(received, 1)), float64(cpu.Microseconds())/float64(max(len(writes), 1)))
	if len(errs) > 0 {
		fmt.Printf("connection errors (first %d): %s\n", len(errs), strings.Join(errs, "; "))
	}
	return lostEvents, nil
}

func pct(d []time.Duration, p int) string {
	if len(d) == 0 {
		return "-"
	}
	i := min(len(d)-1, len(d)*p/100)
	return fmt.Sprintf("%.1fms", float64(d[i].Microseconds())/1000)
}

// pacedWrites creates Items at o.rate per second for o.duration, seq by
// seq, over o.writers workers and the instances in turn; a write that
// fails expects no events.
func pacedWrites(o *options, ins []*instance, m *model, owners []string) ([]write, int, string) {
	r := rand.New(rand.NewPCG(1, 2))
	n := int(float64(o.rate) * o.duration.Seconds())
	writes := make([]write, n)
	for i := range writes {
		writes[i] = m.nextWrite(r)
	}
	jobs := make(chan int, o.writers*4)
	var sent atomic.Int64
	var mu sync.Mutex
	var failed int
	var firstErr string
	var wg sync.WaitGroup
	for range o.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range jobs {
				body := writes[seq].body(seq, owners)
				body = append(body[:len(body)-1], fmt.Sprintf(`,"at":%d}`, time.Now().UnixNano())...)
				if err := call("POST", ins[seq%len(ins)].URL+"/classes/Item", body, nil); err != nil {
					mu.Lock()
					failed++
					writes[seq].expected = 0
					if firstErr == "" {
						firstErr = " (first: " + err.Error() + ")"
					}
					mu.Unlock()
				}
			}
		}()
	}
	start := time.Now()
	stopProgress := make(chan struct{})
	defer close(stopProgress)
	go func() {
		for {
			select {
			case <-stopProgress:
				return
			case <-time.After(5 * time.Second):
				fmt.Printf("  %.0f s: %d writes dispatched\n", time.Since(start).Seconds(), sent.Load())
			}
		}
	}()
	for seq := range n {
		if time.Since(start) > 2*o.duration {
			fmt.Printf("  writes fall behind the pace: stopped after %d of %d\n", seq, n)
			n = seq
			break
		}
		due := start.Add(time.Duration(float64(seq) / float64(o.rate) * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		jobs <- seq
		sent.Add(1)
	}
	close(jobs)
	wg.Wait()
	return writes[:n], failed, firstErr
}

// fetchProfile writes in's CPU profile over d to path (pprofAddress).
func fetchProfile(in *instance, d time.Duration, path string) error {
	c := &http.Client{Timeout: d + time.Minute}
	resp, err := c.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", in.pprof, int(d.Seconds())))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
