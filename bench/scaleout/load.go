package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// client speaks JSON to the instances with the master key.
type client struct{ http *http.Client }

func newClient(conns int) *client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = conns*4, conns*2
	return &client{http: &http.Client{Transport: t, Timeout: 30 * time.Second}}
}

// do sends one request and decodes the reply into out (when not nil); a
// status other than want is an error.
func (c *client) do(method, u string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-Parse-Application-Id", appID)
	req.Header.Set("X-Parse-Master-Key", masterKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: HTTP %d %s", method, u, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// categories are the values of Item.category (indexed).
const categories = 50

// seed creates items objects through the first instance (batches of 20,
// the default batch size) and waits until the last instance has them all.
func seed(c *client, instances []*instance, items int) ([]string, error) {
	// The first item alone: it creates the class, which the requests of a
	// batch would otherwise race to do (Parse Server runs them at once).
	var first struct {
		ObjectID string `json:"objectId"`
	}
	if err := c.do("POST", instances[0].URL+"/classes/Item", map[string]any{"category": "c0", "n": 0}, 201, &first); err != nil {
		return nil, err
	}
	ids := []string{first.ObjectID}
	for start := 1; start < items; start += 20 {
		var reqs []map[string]any
		for i := start; i < min(start+20, items); i++ {
			reqs = append(reqs, map[string]any{"method": "POST", "path": "/parse/classes/Item",
				"body": map[string]any{"category": fmt.Sprintf("c%d", i%categories), "n": i}})
		}
		var replies []struct {
			Success struct {
				ObjectID string `json:"objectId"`
			} `json:"success"`
			Error any `json:"error"`
		}
		if err := c.do("POST", instances[0].URL+"/batch", map[string]any{"requests": reqs}, 200, &replies); err != nil {
			return nil, err
		}
		for _, r := range replies {
			if r.Error != nil {
				return nil, fmt.Errorf("a create of the batch failed: %v", r.Error)
			}
			ids = append(ids, r.Success.ObjectID)
		}
	}
	last := instances[len(instances)-1]
	deadline := time.Now().Add(30 * time.Second)
	for {
		var reply struct {
			Count int `json:"count"`
		}
		// With a where: Parse Server on PostgreSQL answers a count without
		// one from the table's statistics, 0 before an ANALYZE.
		if err := c.do("GET", last.URL+"/classes/Item?count=1&limit=0&where="+url.QueryEscape(`{"n":{"$gte":0}}`), nil, 200, &reply); err != nil {
			return nil, err
		}
		if reply.Count >= items {
			return ids, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the last instance holds %d of %d seeded items after 30 s", reply.Count, items)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// result is one load run's outcome.
type result struct {
	ops, writes, errors int64
	elapsed             time.Duration
	latencies           []time.Duration // every operation
	writeLatencies      []time.Duration // creates and Increments
	firstErr            error
	delays              []time.Duration // write answered on one instance -> readable on another
	delaysAtLeast       []time.Duration // the lower bound of each: until the last query that missed it began
	probeMisses         int             // probes not visible within probeTimeout
}

// probeTimeout bounds the wait for one probe write on another instance.
const probeTimeout = 5 * time.Second

// run drives the mixed load: workers spread round-robin over the
// instances, each in a closed loop of 70% gets by id, 10% equality
// queries, 10% creates and 10% Increments, for d. With two instances or
// more a probe measures the replication delay at the same time.
func run(c *client, instances []*instance, ids []string, workers int, d time.Duration) *result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res := &result{}
	var ops, writes, errs atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := instances[w%len(instances)]
			r := rand.New(rand.NewPCG(uint64(w), 7))
			var lat, wlat []time.Duration
			for ctx.Err() == nil {
				t0 := time.Now()
				write, err := operation(c, in, ids, r)
				if ctx.Err() != nil && err != nil {
					break // cut off by the end of the run
				}
				if err != nil {
					errs.Add(1)
					mu.Lock()
					if res.firstErr == nil {
						res.firstErr = err
					}
					mu.Unlock()
					continue
				}
				took := time.Since(t0)
				lat = append(lat, took)
				ops.Add(1)
				if write {
					writes.Add(1)
					wlat = append(wlat, took)
				}
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.writeLatencies = append(res.writeLatencies, wlat...)
			mu.Unlock()
		}()
	}
	if len(instances) > 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			probe(ctx, c, instances, res)
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.ops, res.writes, res.errors = ops.Load(), writes.Load(), errs.Load()
	return res
}

// getsOnly makes every operation a get by id (-gets).
var getsOnly bool

// operation makes one request of the mix; write says whether it wrote.
func operation(c *client, in *instance, ids []string, r *rand.Rand) (write bool, err error) {
	p := r.IntN(10)
	if getsOnly {
		p = 0
	}
	switch {
	case p < 7:
		return false, c.do("GET", in.URL+"/classes/Item/"+ids[r.IntN(len(ids))], nil, 200, nil)
	case p == 7:
		where := fmt.Sprintf(`{"category":"c%d"}`, r.IntN(categories))
		return false, c.do("GET", in.URL+"/classes/Item?limit=10&where="+url.QueryEscape(where), nil, 200, nil)
	case p == 8:
		return true, c.do("POST", in.URL+"/classes/Item", map[string]any{"category": fmt.Sprintf("c%d", r.IntN(categories)), "n": r.IntN(1000)}, 201, nil)
	default:
		return true, c.do("PUT", in.URL+"/classes/Item/"+ids[r.IntN(len(ids))], map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1}}, 200, nil)
	}
}

// probe writes one object at a time on instance k and queries for it on
// instance k+1 as fast as it can, until it is there. The object became
// visible after the last query that missed it began and before the first
// that found it ended: the delay counts from the write's answer to that
// end (at most one query's latency late), its lower bound to that
// beginning (0 when the first query found it). A query, not a read by id:
// a read by id catches up with the shared store before answering and
// would find the object at once, while a query answers from memory as it
// stands, so the delay is the follow lag (docs/scaling.md).
func probe(ctx context.Context, c *client, instances []*instance, res *result) {
	var delays, atLeast []time.Duration
	misses := 0
	for k := 0; ctx.Err() == nil; k++ {
		from, to := instances[k%len(instances)], instances[(k+1)%len(instances)]
		var created struct {
			ObjectID string `json:"objectId"`
		}
		if err := c.do("POST", from.URL+"/classes/Probe", map[string]any{"k": k}, 201, &created); err != nil {
			continue
		}
		answered := time.Now()
		query := to.URL + "/classes/Probe?limit=1&where=" + url.QueryEscape(`{"objectId":"`+created.ObjectID+`"}`)
		var missedFrom time.Duration
		for {
			began := time.Since(answered)
			var found struct {
				Results []json.RawMessage `json:"results"`
			}
			if c.do("GET", query, nil, 200, &found) == nil && len(found.Results) == 1 {
				delays = append(delays, time.Since(answered))
				atLeast = append(atLeast, missedFrom)
				break
			}
			missedFrom = began
			if time.Since(answered) > probeTimeout {
				misses++
				break
			}
		}
	}
	res.delays, res.delaysAtLeast, res.probeMisses = delays, atLeast, misses
}
