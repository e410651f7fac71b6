package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// workloads are the single-operation loads -workloads can name besides
// "mix": each runs alone for the run's duration, its clients spread
// round-robin over the instances.
var workloads = map[string]func(c *client, in *instance, ids []string, r *rand.Rand) error{
	// get: a seeded item by id.
	"get": func(c *client, in *instance, ids []string, r *rand.Rand) error {
		return c.do("GET", in.URL+"/classes/Item/"+ids[r.IntN(len(ids))], nil, 200, nil)
	},
	// query-equal: ten items of one value of the indexed category.
	"query-equal": func(c *client, in *instance, ids []string, r *rand.Rand) error {
		where := fmt.Sprintf(`{"category":"c%d"}`, r.IntN(categories))
		return c.do("GET", in.URL+"/classes/Item?limit=10&where="+url.QueryEscape(where), nil, 200, nil)
	},
	// create: a new item.
	"create": func(c *client, in *instance, ids []string, r *rand.Rand) error {
		return c.do("POST", in.URL+"/classes/Item", map[string]any{"category": fmt.Sprintf("c%d", r.IntN(categories)), "n": r.IntN(1000)}, 201, nil)
	},
	// update-inc: an Increment of a random seeded item.
	"update-inc": func(c *client, in *instance, ids []string, r *rand.Rand) error {
		return c.do("PUT", in.URL+"/classes/Item/"+ids[r.IntN(len(ids))], map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1}}, 200, nil)
	},
	// same-object: every client, through every instance, Increments one
	// item: the contended write.
	"same-object": func(c *client, in *instance, ids []string, r *rand.Rand) error {
		return c.do("PUT", in.URL+"/classes/Item/"+ids[0], map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1}}, 200, nil)
	},
}

// workloadOrder is the order of the table (reads first, the contended
// write last).
var workloadOrder = []string{"get", "query-equal", "create", "update-inc", "same-object"}

// runOne drives one workload for d with workers closed-loop clients, each
// bound to instance w % n for its whole run.
func runOne(c *client, instances []*instance, ids []string, workers int, d time.Duration, op func(*client, *instance, []string, *rand.Rand) error) *result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res := &result{}
	var ops, errs atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := instances[w%len(instances)]
			r := rand.New(rand.NewPCG(uint64(w), 11))
			var lat []time.Duration
			for ctx.Err() == nil {
				t0 := time.Now()
				err := op(c, in, ids, r)
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
				lat = append(lat, time.Since(t0))
				ops.Add(1)
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.ops, res.errors = ops.Load(), errs.Load()
	return res
}

// paced creates items at rate per second in all, spread round-robin over
// the instances, for d, while the probe measures how long a write
// answered by one instance takes to be served by the next: the follow lag
// at that write rate.
func paced(c *client, instances []*instance, rate int, d time.Duration) *result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res := &result{}
	var writes, errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		probe(ctx, c, instances, res)
	}()
	// A fixed schedule (not a ticker that drops ticks): the k-th write is
	// due at start + k/rate, sent by whichever of a pool of senders is free.
	due := make(chan int, 1024)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range due {
				in := instances[k%len(instances)]
				if err := c.do("POST", in.URL+"/classes/Item", map[string]any{"category": "paced", "n": k}, 201, nil); err != nil {
					if ctx.Err() == nil {
						errs.Add(1)
					}
					continue
				}
				writes.Add(1)
			}
		}()
	}
	for k := 0; ; k++ {
		next := start.Add(time.Duration(k) * time.Second / time.Duration(rate))
		if wait := time.Until(next); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			break
		}
		due <- k
	}
	close(due)
	wg.Wait()
	res.elapsed = time.Since(start)
	res.writes, res.errors = writes.Load(), errs.Load()
	return res
}
