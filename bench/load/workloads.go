package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"time"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fastjson"
)

// errUnsupported marks a capability the server does not have: the
// workload is reported as "not supported", not as errors.
var errUnsupported = errors.New("not supported")

// poolSize is how many distinct queries (with their answers) a query
// workload prepares; workers pick among them at random.
const poolSize = 64

// queryLimit is the page size asked for by set queries: larger than any
// answer they expect, so the whole answer comes back.
const queryLimit = 1000

// workload is one named operation run in a closed loop.
type workload struct {
	name  string
	about string
	setup func(e *env) (*plan, error)
}

// plan is a prepared workload.
type plan struct {
	// op performs one operation and returns its latency; an error means the
	// reply was wrong (status, shape or content) or never came.
	op func(w *worker) (time.Duration, error)
	// initWorker and closeWorker, if set, run around each worker's loop
	// (LiveQuery opens its socket there).
	initWorker  func(w *worker) error
	closeWorker func(w *worker)
	// after, if set, checks the server's state once the run is over; ok
	// and failed count the operations of every phase.
	after func(e *env, ok, failed int64) error
}

// worker is one closed-loop client.
type worker struct {
	id      int
	c       *client
	rng     *rand.Rand
	seq     int
	body    []byte          // scratch for request bodies (the request copies it)
	ns      []int           // scratch for checks: the reply's n in its order
	sorted  []int           // scratch for checks: ns sorted
	parser  fastjson.Parser // the checks' parser, reused for every reply
	escaped bool            // the reply being checked has a backslash
	state   any             // the workload's own per-worker state
}

// call sends a request, times it and checks the status.
func (w *worker) call(want int, method, uri string, body any) ([]byte, time.Duration, error) {
	start := time.Now()
	out, err := w.c.expect(want, method, uri, body)
	return out, time.Since(start), err
}

// query is one prepared read and the check of its reply.
type query struct {
	uri   string
	check func(w *worker, body []byte) error
}

// queryPlan runs GET requests picked from a pool.
func queryPlan(pool []query) *plan {
	return &plan{op: func(w *worker) (time.Duration, error) {
		q := pool[w.rng.IntN(len(pool))]
		out, lat, err := w.call(fasthttp.StatusOK, "GET", q.uri, nil)
		if err == nil {
			err = q.check(w, out)
			if err != nil {
				err = fmt.Errorf("GET %s: %w", shortURI(q.uri), err)
			}
		}
		return lat, err
	}}
}

// buildPool makes poolSize queries from a deterministic generator.
func buildPool(e *env, salt uint64, gen func(rng *rand.Rand) query) []query {
	rng := rand.New(rand.NewPCG(e.d.seed, salt))
	pool := make([]query, poolSize)
	for i := range pool {
		pool[i] = gen(rng)
	}
	return pool
}

func whereQuery(where any, extra ...string) url.Values {
	w, _ := json.Marshal(where)
	q := url.Values{"where": {string(w)}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return q
}

// matching lists, in n order, the items for which keep is true.
func (d *dataset) matching(keep func(it *item) bool) []int {
	var out []int
	for i := range d.items {
		if keep(&d.items[i]) {
			out = append(out, i)
		}
	}
	return out
}

// workloads lists every workload in run order.
func workloads() []*workload {
	return []*workload{
		{name: "create", about: "POST /classes/<Write>: one new object", setup: setupCreate},
		{name: "get", about: "GET /classes/<Item>/<id> of a random seeded object", setup: setupGet},
		{name: "update", about: "PUT an Increment on one of 100 counters; the sum is checked at the end", setup: setupUpdate},
		{name: "query-equal", about: "where category = c (~50 results)", setup: setupEqual},
		{name: "query-range-order", about: "where score in [a, a+200), order -score, limit 20", setup: setupRange},
		{name: "query-in", about: "where n $in 10 values", setup: setupIn},
		{name: "query-or", about: "$or of an equality and a range (~100 results)", setup: setupOr},
		{name: "query-inquery", about: "owner $inQuery owners of a tier, and a tag (~50 results)", setup: setupInQuery},
		{name: "query-relatedto", about: "$relatedTo an owner's favorites relation (20 results)", setup: setupRelatedTo},
		{name: "query-include", about: "n $in 10 values, include=owner", setup: setupInclude},
		{name: "count", about: "count=1&limit=0 where category = c", setup: setupCount},
		{name: "batch", about: "POST /batch of 20 creates", setup: setupBatch},
		{name: "login", about: "POST /login of one of 20 users", setup: setupLogin},
		{name: "geo-near", about: "$nearSphere with $maxDistance (~50 results, nearest first)", setup: setupNear},
		{name: "geo-box", about: "$within $box (~50 results)", setup: setupBox},
		{name: "geo-polygon", about: "$geoWithin $polygon, a hexagon (~50 results)", setup: setupPolygon},
		{name: "livequery", about: "create → LiveQuery create event on a subscribed socket", setup: setupLiveQuery},
	}
}

func setupCreate(e *env) (*plan, error) {
	uri := e.t.uri("/classes/"+e.d.writeClass(), nil)
	return &plan{op: func(w *worker) (time.Duration, error) {
		w.seq++
		w.body = fmt.Appendf(w.body[:0], `{"worker":%d,"seq":%d,"name":"create-%d-%d","score":%d}`, w.id, w.seq, w.id, w.seq, w.rng.IntN(1000))
		out, lat, err := w.call(fasthttp.StatusCreated, "POST", uri, w.body)
		if err == nil {
			err = checkCreated(w, out)
		}
		return lat, err
	}}, nil
}

func setupGet(e *env) (*plan, error) {
	d := e.d
	uris := make([]string, len(d.items))
	for n := range uris {
		uris[n] = e.t.uri("/classes/"+d.itemClass()+"/"+d.itemIDs[n], nil)
	}
	return &plan{op: func(w *worker) (time.Duration, error) {
		n := w.rng.IntN(len(uris))
		out, lat, err := w.call(fasthttp.StatusOK, "GET", uris[n], nil)
		if err == nil {
			if err = checkGot(w, out, d.itemIDs[n], n); err != nil {
				err = fmt.Errorf("GET %s: %w", d.itemIDs[n], err)
			}
		}
		return lat, err
	}}, nil
}

func setupUpdate(e *env) (*plan, error) {
	d := e.d
	body := []byte(`{"count":{"__op":"Increment","amount":1}}`)
	uris := make([]string, len(d.counterIDs))
	for i, id := range d.counterIDs {
		uris[i] = e.t.uri("/classes/"+d.counterClass()+"/"+id, nil)
	}
	return &plan{
		op: func(w *worker) (time.Duration, error) {
			out, lat, err := w.call(fasthttp.StatusOK, "PUT", uris[w.rng.IntN(len(uris))], body)
			if err == nil {
				err = checkCounter(w, out)
			}
			return lat, err
		},
		// Every acknowledged Increment must be in the final sum: lost
		// updates are errors even when each reply looked right.
		after: func(e *env, ok, failed int64) error {
			c := newClient(e.t, e.hc)
			q := url.Values{"limit": {"1000"}, "keys": {"count"}}
			out, err := c.expect(fasthttp.StatusOK, "GET", e.t.uri("/classes/"+d.counterClass(), q), nil)
			if err != nil {
				return err
			}
			var sum int64
			for _, r := range gjson.GetBytes(out, "results").Array() {
				sum += r.Get("count").Int()
			}
			if sum < ok || sum > ok+failed {
				return fmt.Errorf("counters sum to %d after %d acknowledged increments (%d failed)", sum, ok, failed)
			}
			return nil
		},
	}, nil
}

func setupEqual(e *env) (*plan, error) {
	d := e.d
	return queryPlan(buildPool(e, 1, func(rng *rand.Rand) query {
		k := rng.IntN(d.categories)
		want := d.matching(func(it *item) bool { return it.Category == k })
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(map[string]any{"category": categoryName(k)}, "limit", fmt.Sprint(queryLimit)))
		return query{uri, func(w *worker, b []byte) error { return checkSet(w, b, want) }}
	})), nil
}

func setupRange(e *env) (*plan, error) {
	d := e.d
	width := min(rangeWidth, len(d.items))
	return queryPlan(buildPool(e, 2, func(rng *rand.Rand) query {
		a := rng.IntN(len(d.items) - width + 1)
		var want []int
		for s := a + width - 1; s >= a && len(want) < rangePage; s-- {
			want = append(want, d.byScore[s])
		}
		where := map[string]any{"score": map[string]any{"$gte": a, "$lt": a + width}}
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(where, "order", "-score", "limit", fmt.Sprint(rangePage)))
		return query{uri, func(w *worker, b []byte) error { return checkSeq(w, b, want) }}
	})), nil
}

// randomNs picks k distinct item numbers, sorted.
func randomNs(rng *rand.Rand, size, k int) []int {
	perm := rng.Perm(size)[:min(k, size)]
	slices.Sort(perm)
	return perm
}

func setupIn(e *env) (*plan, error) {
	d := e.d
	return queryPlan(buildPool(e, 3, func(rng *rand.Rand) query {
		want := randomNs(rng, len(d.items), inValues)
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(map[string]any{"n": map[string]any{"$in": want}}))
		return query{uri, func(w *worker, b []byte) error { return checkSet(w, b, want) }}
	})), nil
}

func setupOr(e *env) (*plan, error) {
	d := e.d
	return queryPlan(buildPool(e, 4, func(rng *rand.Rand) query {
		k := rng.IntN(d.categories)
		lo := rng.IntN(max(1, len(d.items)-resultsPerQuery))
		want := d.matching(func(it *item) bool {
			return it.Category == k || it.N >= lo && it.N < lo+resultsPerQuery
		})
		where := map[string]any{"$or": []any{
			map[string]any{"category": categoryName(k)},
			map[string]any{"n": map[string]any{"$gte": lo, "$lt": lo + resultsPerQuery}},
		}}
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(where, "limit", fmt.Sprint(queryLimit)))
		return query{uri, func(w *worker, b []byte) error { return checkSet(w, b, want) }}
	})), nil
}

func setupInQuery(e *env) (*plan, error) {
	d := e.d
	return queryPlan(buildPool(e, 5, func(rng *rand.Rand) query {
		tier, tag := rng.IntN(tiers), rng.IntN(d.tags)
		want := d.matching(func(it *item) bool { return ownerTier(it.Owner) == tier && it.Tag == tag })
		where := map[string]any{
			"owner": map[string]any{"$inQuery": map[string]any{"className": d.ownerClass(), "where": map[string]any{"tier": tier}}},
			"tag":   tag,
		}
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(where, "limit", fmt.Sprint(queryLimit)))
		return query{uri, func(w *worker, b []byte) error { return checkSet(w, b, want) }}
	})), nil
}

func setupRelatedTo(e *env) (*plan, error) {
	d := e.d
	return queryPlan(buildPool(e, 6, func(rng *rand.Rand) query {
		o := rng.IntN(d.owners)
		want := slices.Sorted(slices.Values(d.favorites[o]))
		where := map[string]any{"$relatedTo": map[string]any{"object": pointer(d.ownerClass(), d.ownerIDs[o]), "key": "favorites"}}
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(where, "limit", fmt.Sprint(queryLimit)))
		return query{uri, func(w *worker, b []byte) error { return checkSet(w, b, want) }}
	})), nil
}

func setupInclude(e *env) (*plan, error) {
	d := e.d
	return queryPlan(buildPool(e, 7, func(rng *rand.Rand) query {
		want := randomNs(rng, len(d.items), inValues)
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(map[string]any{"n": map[string]any{"$in": want}}, "include", "owner"))
		return query{uri, func(w *worker, b []byte) error { return checkInclude(w, d, b, want) }}
	})), nil
}

func setupCount(e *env) (*plan, error) {
	d := e.d
	return queryPlan(buildPool(e, 8, func(rng *rand.Rand) query {
		k := rng.IntN(d.categories)
		want := len(d.matching(func(it *item) bool { return it.Category == k }))
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(map[string]any{"category": categoryName(k)}, "count", "1", "limit", "0"))
		return query{uri, func(w *worker, b []byte) error { return checkCount(w, b, want) }}
	})), nil
}

func setupBatch(e *env) (*plan, error) {
	uri := e.t.uri("/batch", nil)
	path := e.t.mountPath() + "/classes/" + e.d.writeClass()
	return &plan{op: func(w *worker) (time.Duration, error) {
		w.seq++
		body := append(w.body[:0], `{"requests":[`...)
		for i := range batchLimit {
			if i > 0 {
				body = append(body, ',')
			}
			body = fmt.Appendf(body, `{"method":"POST","path":%q,"body":{"worker":%d,"seq":%d,"i":%d,"name":"batch"}}`, path, w.id, w.seq, i)
		}
		body = append(body, "]}"...)
		w.body = body
		out, lat, err := w.call(fasthttp.StatusOK, "POST", uri, body)
		if err == nil {
			if err = checkBatchCreated(w, out, batchLimit); err != nil {
				err = fmt.Errorf("batch: %w", err)
			}
		}
		return lat, err
	}}, nil
}

// setupLogin signs up the users the workload logs in as. A server that
// refuses the sign-up has no users: the workload is not supported.
func setupLogin(e *env) (*plan, error) {
	d := e.d
	c := newClient(e.t, e.hc)
	for i := range userAccounts {
		body := map[string]any{"username": d.username(i), "password": d.password(i)}
		out, err := c.expect(fasthttp.StatusCreated, "POST", e.t.uri("/users", nil), body)
		var se *statusError
		if errors.As(err, &se) && se.refusal() {
			return nil, fmt.Errorf("%w: sign-up: %v", errUnsupported, err)
		}
		if err != nil {
			return nil, fmt.Errorf("sign-up: %w", err)
		}
		if gjson.GetBytes(out, "sessionToken").String() == "" {
			return nil, fmt.Errorf("sign-up reply without sessionToken: %s", clip(string(out), 120))
		}
	}
	// POST /login with a JSON body is what the JS SDK sends; older servers
	// only take GET /login?username=&password=.
	uri := e.t.uri("/login", nil)
	usePost := true
	if _, err := c.expect(fasthttp.StatusOK, "POST", uri, map[string]any{"username": d.username(0), "password": d.password(0)}); err != nil {
		usePost = false
		q := url.Values{"username": {d.username(0)}, "password": {d.password(0)}}
		if _, err2 := c.expect(fasthttp.StatusOK, "GET", e.t.uri("/login", q), nil); err2 != nil {
			var se *statusError
			if errors.As(err2, &se) && se.refusal() {
				return nil, fmt.Errorf("%w: %v", errUnsupported, err)
			}
			return nil, err2
		}
	}
	return &plan{op: func(w *worker) (time.Duration, error) {
		i := w.rng.IntN(userAccounts)
		var out []byte
		var lat time.Duration
		var err error
		if usePost {
			out, lat, err = w.call(fasthttp.StatusOK, "POST", uri, map[string]any{"username": d.username(i), "password": d.password(i)})
		} else {
			q := url.Values{"username": {d.username(i)}, "password": {d.password(i)}}
			out, lat, err = w.call(fasthttp.StatusOK, "GET", e.t.uri("/login", q), nil)
		}
		if err == nil {
			err = checkLogin(w, out, d.username(i))
		}
		return lat, err
	}}, nil
}

// Geo tolerances: how close to a boundary an item may be for either
// answer to count as right (different servers round differently and some
// draw polygon edges as great circles).
const (
	nearTolerance    = 1e-3 // relative to the radius
	boxTolerance     = 1e-7 // degrees
	polygonTolerance = 1e-4 // degrees
)

func setupNear(e *env) (*plan, error) {
	d := e.d
	radius := d.nearRadiusKm()
	margin := radius / 111.19 * 1.5
	return queryPlan(buildPool(e, 9, func(rng *rand.Rand) query {
		lat := geoLat0 + margin + rng.Float64()*(geoSpan-2*margin)
		lng := geoLng0 + margin + rng.Float64()*(geoSpan-2*margin)
		var must, may []int
		for _, it := range d.items {
			switch dist := haversineKm(lat, lng, it.Lat, it.Lng); {
			case dist < radius*(1-nearTolerance):
				must = append(must, it.N)
			case dist <= radius*(1+nearTolerance):
				may = append(may, it.N)
			}
		}
		// $maxDistance in radians is what the SDKs send (withinKilometers
		// divides by Parse's earth radius); Parse Server's PostgreSQL adapter
		// ignores $maxDistanceInKilometers.
		where := map[string]any{"location": map[string]any{"$nearSphere": geoPoint(lat, lng), "$maxDistance": radius / earthRadiusKm}}
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(where, "limit", fmt.Sprint(queryLimit)))
		return query{uri, func(w *worker, b []byte) error {
			if err := checkBand(w, b, must, may); err != nil {
				return err
			}
			// Nearest first (w.ns holds the reply's order).
			prev := 0.0
			for _, n := range w.ns {
				dist := haversineKm(lat, lng, d.items[n].Lat, d.items[n].Lng)
				if dist < prev-radius*nearTolerance {
					return fmt.Errorf("not sorted by distance: n=%d at %.4f km after %.4f km", n, dist, prev)
				}
				prev = math.Max(prev, dist)
			}
			return nil
		}}
	})), nil
}

func setupBox(e *env) (*plan, error) {
	d := e.d
	side := d.boxSide()
	return queryPlan(buildPool(e, 10, func(rng *rand.Rand) query {
		s := geoLat0 + rng.Float64()*(geoSpan-side)
		west := geoLng0 + rng.Float64()*(geoSpan-side)
		n, east := s+side, west+side
		var must, may []int
		for _, it := range d.items {
			inside := it.Lat > s+boxTolerance && it.Lat < n-boxTolerance && it.Lng > west+boxTolerance && it.Lng < east-boxTolerance
			near := it.Lat >= s-boxTolerance && it.Lat <= n+boxTolerance && it.Lng >= west-boxTolerance && it.Lng <= east+boxTolerance
			if inside {
				must = append(must, it.N)
			} else if near {
				may = append(may, it.N)
			}
		}
		where := map[string]any{"location": map[string]any{"$within": map[string]any{"$box": []any{geoPoint(s, west), geoPoint(n, east)}}}}
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(where, "limit", fmt.Sprint(queryLimit)))
		return query{uri, func(w *worker, b []byte) error { return checkBand(w, b, must, may) }}
	})), nil
}

func setupPolygon(e *env) (*plan, error) {
	d := e.d
	r := d.hexRadius()
	return queryPlan(buildPool(e, 11, func(rng *rand.Rand) query {
		c := pt{geoLat0 + r + rng.Float64()*(geoSpan-2*r), geoLng0 + r + rng.Float64()*(geoSpan-2*r)}
		turn := rng.Float64() * math.Pi / 3
		poly := make([]pt, 6)
		points := make([]any, 6)
		for i := range poly {
			a := turn + float64(i)*math.Pi/3
			poly[i] = pt{c.Lat + r*math.Sin(a), c.Lng + r*math.Cos(a)}
			points[i] = geoPoint(poly[i].Lat, poly[i].Lng)
		}
		var must, may []int
		for _, it := range d.items {
			p := pt{it.Lat, it.Lng}
			switch {
			case distToPolygonEdge(p, poly) <= polygonTolerance:
				may = append(may, it.N)
			case inPolygon(p, poly):
				must = append(must, it.N)
			}
		}
		where := map[string]any{"location": map[string]any{"$geoWithin": map[string]any{"$polygon": points}}}
		uri := e.t.uri("/classes/"+d.itemClass(), whereQuery(where, "limit", fmt.Sprint(queryLimit)))
		return query{uri, func(w *worker, b []byte) error { return checkBand(w, b, must, may) }}
	})), nil
}
