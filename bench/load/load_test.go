package main

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/valyala/fasthttp"
)

// Small and short: the whole file runs in a few seconds inside `go test ./...`.
const (
	testSize        = 400
	testConcurrency = 4
)

var testOpts = runOpts{concurrency: testConcurrency, warmup: 0, duration: 150 * time.Millisecond, maxOps: 2000}

func testEnv(t *testing.T, rawURL string, d *dataset) *env {
	t.Helper()
	f := &runFlags{appID: servertest.AppID, masterKey: servertest.MasterKey, prefix: "X-Parse-", timeout: 10 * time.Second}
	tg, err := newTarget(f, rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: tg, hc: newHostClient(tg, testConcurrency+2), d: d, conc: testConcurrency, logf: t.Logf}
}

// serve runs handler on a loopback port until the test ends and returns
// its REST URL.
func serve(t *testing.T, handler fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return "http://" + ln.Addr().String() + "/parse"
}

// Every workload against a real in-process Quarry: capabilities it has
// must come out correct (zero errors); the ones it lacks must say "not
// supported", never errors. Which is which is found by probing.
func TestWorkloads_AgainstQuarry(t *testing.T) {
	d := newDataset("Bench", testSize, 1)
	srv := servertest.Start(t, func(o *config.Options) {
		a := serverArgs(d)
		o.Indexes = strings.Split(a[1], ",")
		o.LiveQuery.ClassNames = []string{d.liveClass()}
	})
	e := testEnv(t, srv.URL, d)
	if err := e.seed(); err != nil {
		t.Fatal(err)
	}
	if err := e.seed(); err == nil || !strings.Contains(err.Error(), "already holds") {
		t.Errorf("seeding twice must refuse: %v", err)
	}
	// The core REST features: these exist, so they must be right.
	core := []string{"create", "get", "update", "query-equal", "query-range-order", "query-in", "query-or",
		"query-inquery", "query-relatedto", "query-include", "count", "batch"}
	for i, w := range workloads() {
		res := e.runWorkload(w, i, testOpts)
		t.Logf("%-18s %-13s %6.0f ops/s %d errors %s", w.name, res.Status, res.OpsPerSec, res.Errors, res.Reason)
		switch {
		case res.Status == statusNotSupported && slices.Contains(core, w.name):
			t.Errorf("%s: core capability reported not supported: %s", w.name, res.Reason)
		case res.Status == statusNotSupported:
			if res.Reason == "" {
				t.Errorf("%s: not supported without a reason", w.name)
			}
		case res.Errors > 0 || res.Status != statusOK:
			t.Errorf("%s: %d errors: %v", w.name, res.Errors, res.ErrorSamples)
		case res.Ops == 0 || res.OpsPerSec <= 0 || res.LatencyMs.P50 <= 0 || res.LatencyMs.P99 < res.LatencyMs.P50:
			t.Errorf("%s: implausible numbers: %+v", w.name, res)
		}
	}
}

// A server that answers with the right status but the wrong content gets
// errors, not speed: here every query is answered by the ceiling's fixed
// reply.
func TestWorkloads_WrongAnswersAreErrors(t *testing.T) {
	d := newDataset("Bench", testSize, 1)
	d.itemIDs = make([]string, testSize)
	d.ownerIDs = make([]string, d.owners)
	for i := range d.itemIDs {
		d.itemIDs[i] = "id"
	}
	e := testEnv(t, serve(t, ceilingHandler), d)
	for _, name := range []string{"get", "query-equal", "query-range-order", "query-in", "count", "geo-box", "create"} {
		wl, err := selectWorkloads(name)
		if err != nil {
			t.Fatal(err)
		}
		res := e.runWorkload(wl[0], 0, testOpts)
		if res.Status != statusErrors || res.Errors == 0 || res.Ops != 0 || res.OpsPerSec != 0 {
			t.Errorf("%s against a wrong server: status %s, %d errors, %d ops", name, res.Status, res.Errors, res.Ops)
		}
		if len(res.ErrorSamples) == 0 {
			t.Errorf("%s: no error sample", name)
		}
	}
}

// A refusal (4xx) is "not supported"; a failure (5xx) is an error.
func TestWorkloads_RefusalVersusFailure(t *testing.T) {
	d := newDataset("Bench", testSize, 1)
	for _, tc := range []struct {
		status int
		want   string
	}{
		{fasthttp.StatusNotFound, statusNotSupported},
		{fasthttp.StatusBadRequest, statusNotSupported},
		{fasthttp.StatusInternalServerError, statusErrors},
	} {
		url := serve(t, func(ctx *fasthttp.RequestCtx) {
			ctx.SetStatusCode(tc.status)
			ctx.SetBodyString(`{"code":102,"error":"no"}`)
		})
		e := testEnv(t, url, d)
		wl, _ := selectWorkloads("geo-near")
		if res := e.runWorkload(wl[0], 0, testOpts); res.Status != tc.want {
			t.Errorf("status %d: workload %s (%s), want %s", tc.status, res.Status, res.Reason, tc.want)
		}
	}
}

func TestCeiling_IsCorrectAgainstItsServer(t *testing.T) {
	d := newDataset("Bench", 1, 1)
	e := testEnv(t, serve(t, ceilingHandler), d)
	res := e.runWorkload(ceilingWorkload, 0, testOpts)
	if res.Status != statusOK || res.Ops == 0 {
		t.Errorf("ceiling: %+v", res)
	}
}

func TestDataset_DeterministicAndShaped(t *testing.T) {
	a, b := newDataset("Bench", 10_000, 7), newDataset("Bench", 10_000, 7)
	if !slices.Equal(a.items, b.items) {
		t.Fatal("same seed, different data")
	}
	if c := newDataset("Bench", 10_000, 8); slices.Equal(a.items, c.items) {
		t.Error("different seeds, same data")
	}
	seen := make([]bool, len(a.items))
	for _, it := range a.items {
		if seen[it.Score] {
			t.Fatalf("score %d twice: scores must be a permutation", it.Score)
		}
		seen[it.Score] = true
	}
	// Selective queries aim at resultsPerQuery answers.
	perCategory := len(a.matching(func(it *item) bool { return it.Category == 3 }))
	inTierTag := len(a.matching(func(it *item) bool { return ownerTier(it.Owner) == 2 && it.Tag == 5 }))
	var near int
	for _, it := range a.items {
		if haversineKm(10.5, 20.5, it.Lat, it.Lng) < a.nearRadiusKm() {
			near++
		}
	}
	for name, n := range map[string]int{"category": perCategory, "tier and tag": inTierTag, "near": near} {
		if n < resultsPerQuery/3 || n > resultsPerQuery*3 {
			t.Errorf("%s matches %d items, want about %d", name, n, resultsPerQuery)
		}
	}
	for o, favs := range a.favorites {
		if len(favs) != favoritesPer {
			t.Fatalf("owner %d has %d favorites", o, len(favs))
		}
	}
}

func TestGeo_PolygonAndDistance(t *testing.T) {
	square := []pt{{0, 0}, {0, 1}, {1, 1}, {1, 0}}
	if !inPolygon(pt{0.5, 0.5}, square) || inPolygon(pt{1.5, 0.5}, square) || inPolygon(pt{-0.1, 0.5}, square) {
		t.Error("inPolygon is wrong on a unit square")
	}
	if d := distToPolygonEdge(pt{0.5, 0.25}, square); d < 0.2499 || d > 0.2501 {
		t.Errorf("distance to edge = %v, want 0.25", d)
	}
	// One degree of latitude on Parse's sphere.
	if d := haversineKm(0, 0, 1, 0); d < 111.19 || d > 111.20 {
		t.Errorf("one degree = %v km", d)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1337/parse", "http://localhost/parse", "http://[::1]:80/parse"} {
		if _, err := newTarget(&runFlags{}, u); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1/parse", "http://example.com/parse", "ftp://127.0.0.1/"} {
		if _, err := newTarget(&runFlags{}, u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}
