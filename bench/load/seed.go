package main

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"
)

// batchLimit is how many commands one POST /batch carries, Parse Server's
// and Quarry's default limit.
const batchLimit = 20

// env is what every workload shares: the server, the connection pool and
// the seeded data.
type env struct {
	t    *target
	hc   *fasthttp.HostClient
	d    *dataset
	conc int
	// liveURL is the LiveQuery WebSocket; empty derives it from t.base.
	liveURL string
	logf    func(format string, args ...any)
	notes   []string // remarks for the report, e.g. how indexes were made
}

// parallel calls fn(c, i) for i in [0, n) from e.conc workers and returns
// the first error; the others stop soon after it.
func (e *env) parallel(n int, fn func(c *client, i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(e.conc, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient(e.t, e.hc)
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(c, i); err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// createAll creates objects of class through POST /batch and returns their
// ids in order.
func (e *env) createAll(class string, bodies []map[string]any) ([]string, error) {
	ids := make([]string, len(bodies))
	chunks := (len(bodies) + batchLimit - 1) / batchLimit
	path := e.t.mountPath() + "/classes/" + class
	uri := e.t.uri("/batch", nil)
	err := e.parallel(chunks, func(c *client, k int) error {
		lo, hi := k*batchLimit, min((k+1)*batchLimit, len(bodies))
		reqs := make([]map[string]any, 0, hi-lo)
		for _, b := range bodies[lo:hi] {
			reqs = append(reqs, map[string]any{"method": "POST", "path": path, "body": b})
		}
		out, err := c.expect(fasthttp.StatusOK, "POST", uri, map[string]any{"requests": reqs})
		if err != nil {
			return err
		}
		res := gjson.ParseBytes(out).Array()
		if len(res) != hi-lo {
			return fmt.Errorf("batch create in %s: %d results for %d requests", class, len(res), hi-lo)
		}
		for i, r := range res {
			id := r.Get("success.objectId").String()
			if id == "" {
				return fmt.Errorf("batch create in %s failed: %s", class, clip(r.Raw, 200))
			}
			ids[lo+i] = id
		}
		return nil
	})
	return ids, err
}

// seed loads the dataset into an empty server: owners, items, relations and
// counters. Users are made by the login workload when it runs.
func (e *env) seed() error {
	d := e.d
	c := newClient(e.t, e.hc)
	q := url.Values{"count": {"1"}, "limit": {"0"}}
	out, err := c.expect(fasthttp.StatusOK, "GET", e.t.uri("/classes/"+d.itemClass(), q), nil)
	if err != nil {
		return fmt.Errorf("checking that the server is empty: %w", err)
	}
	if n := gjson.GetBytes(out, "count").Int(); n != 0 {
		return fmt.Errorf("the server already holds %d %s objects: start it on an empty database or pass another -class-prefix", n, d.itemClass())
	}
	e.ensureIndexes(c)

	start := time.Now()
	owners := make([]map[string]any, d.owners)
	for o := range owners {
		owners[o] = map[string]any{"name": ownerName(o), "tier": ownerTier(o)}
	}
	if d.ownerIDs, err = e.createAll(d.ownerClass(), owners); err != nil {
		return err
	}
	items := make([]map[string]any, len(d.items))
	for n := range items {
		items[n] = d.itemBody(n)
	}
	if d.itemIDs, err = e.createAll(d.itemClass(), items); err != nil {
		return err
	}
	err = e.parallel(d.owners, func(c *client, o int) error {
		ptrs := make([]any, 0, len(d.favorites[o]))
		for _, n := range d.favorites[o] {
			ptrs = append(ptrs, pointer(d.itemClass(), d.itemIDs[n]))
		}
		body := map[string]any{"favorites": map[string]any{"__op": "AddRelation", "objects": ptrs}}
		_, err := c.expect(fasthttp.StatusOK, "PUT", e.t.uri("/classes/"+d.ownerClass()+"/"+d.ownerIDs[o], nil), body)
		return err
	})
	if err != nil {
		return err
	}
	counters := make([]map[string]any, counterObjects)
	for i := range counters {
		counters[i] = map[string]any{"k": i, "count": 0}
	}
	if d.counterIDs, err = e.createAll(d.counterClass(), counters); err != nil {
		return err
	}
	e.logf("seeded %d items, %d owners with %d favorites each, %d counters in %.1fs",
		len(d.items), d.owners, favoritesPer, counterObjects, time.Since(start).Seconds())
	return nil
}

// ensureIndexes asks for the indexes through Parse Server's schema API:
// it creates each class with its fields and indexes, or adds the missing
// indexes to a class that exists. A server without that API must be given
// its indexes by configuration (`load setup` prints them); the report's
// notes say which way it went.
func (e *env) ensureIndexes(c *client) {
	d := e.d
	fields := map[string]map[string]any{
		d.ownerClass(): {
			"name":      map[string]any{"type": "String"},
			"tier":      map[string]any{"type": "Number"},
			"favorites": map[string]any{"type": "Relation", "targetClass": d.itemClass()},
		},
		d.itemClass(): {
			"n":        map[string]any{"type": "Number"},
			"category": map[string]any{"type": "String"},
			"score":    map[string]any{"type": "Number"},
			"tag":      map[string]any{"type": "Number"},
			"owner":    map[string]any{"type": "Pointer", "targetClass": d.ownerClass()},
			"location": map[string]any{"type": "GeoPoint"},
		},
	}
	how := "created through the schema API"
	for _, class := range []string{d.ownerClass(), d.itemClass()} {
		idx := map[string]any{}
		for _, s := range d.indexes() {
			if s.Class == class {
				idx[s.Field+"_1"] = map[string]any{s.Field: 1}
			}
		}
		uri := e.t.uri("/schemas/"+class, nil)
		status, out, err := c.do("POST", uri, map[string]any{"className": class, "fields": fields[class], "indexes": idx})
		code := gjson.GetBytes(out, "code")
		switch {
		case err != nil:
			e.noteIndexes("creating them through the schema API failed: " + err.Error())
			return
		case status/100 == 2:
			continue
		case code.Exists() && code.Int() == 103: // the class exists already
			added, err := e.addMissingIndexes(c, uri, fields[class], idx)
			if err != nil {
				e.noteIndexes("adding them through the schema API failed: " + err.Error())
				return
			}
			if !added {
				how = "already declared by the server (seen through its schema API)"
			}
		case !code.Exists() && (status == fasthttp.StatusNotFound || status == fasthttp.StatusMethodNotAllowed || status == fasthttp.StatusNotImplemented):
			e.noteIndexes(fmt.Sprintf("the server has no schema API (%d); it must be started with them (`load setup` prints the list)", status))
			return
		default:
			e.noteIndexes(fmt.Sprintf("creating them through the schema API failed: %d %s", status, clip(string(out), 200)))
			return
		}
	}
	e.noteIndexes(how)
}

func (e *env) noteIndexes(how string) {
	if !strings.HasPrefix(how, "created") && !strings.HasPrefix(how, "already") {
		e.logf("indexes: %s", how)
	}
	e.notes = append(e.notes, "indexes: "+how)
}

// addMissingIndexes reads a class's schema and adds (PUT) the indexes and
// fields it lacks; it reports whether anything was added.
func (e *env) addMissingIndexes(c *client, uri string, fields, want map[string]any) (bool, error) {
	out, err := c.expect(fasthttp.StatusOK, "GET", uri, nil)
	if err != nil {
		return false, err
	}
	schema := gjson.ParseBytes(out)
	have := map[string]bool{}
	schema.Get("indexes").ForEach(func(_, spec gjson.Result) bool {
		if keys := spec.Map(); len(keys) == 1 {
			for f := range keys {
				have[f] = true
			}
		}
		return true
	})
	missing, newFields := map[string]any{}, map[string]any{}
	for name, spec := range want {
		for f := range spec.(map[string]any) {
			if !have[f] {
				missing[name] = spec
				if !schema.Get("fields").Get(f).Exists() {
					newFields[f] = fields[f]
				}
			}
		}
	}
	if len(missing) == 0 {
		return false, nil
	}
	_, err = c.expect(fasthttp.StatusOK, "PUT", uri, map[string]any{"className": schema.Get("className").String(), "fields": newFields, "indexes": missing})
	return err == nil, err
}
