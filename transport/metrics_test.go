package transport_test

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// scrape reads /metrics and returns each series (name with labels) and its
// value.
func scrape(t *testing.T, srv *servertest.Server) map[string]float64 {
	t.Helper()
	res := rawDo(t, rootURL(srv)+"/metrics", "GET", nil, nil)
	if res.Status != 200 {
		t.Fatalf("GET /metrics: %d %s", res.Status, res.Body)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(res.Body)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("unparseable series line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetricsFollowAKnownWorkload: after a known set of requests the
// counters moved by exactly those amounts.
func TestMetricsFollowAKnownWorkload(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.MaxScan = 2 })
	before := scrape(t, srv)
	var ids []string
	for i := range 5 {
		res := srv.Do(t, "POST", "/classes/Item", map[string]any{"n": i, "name": "item"}, servertest.App())
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		ids = append(ids, res.Map()["objectId"].(string))
	}
	for _, id := range ids[:2] {
		res := srv.Do(t, "GET", `/classes/Item?where={"objectId":"`+id+`"}`, nil, servertest.App())
		if res.Status != 200 {
			t.Fatalf("find: %d %s", res.Status, res.Body)
		}
	}
	// No index on name and more objects than maxScan: refused with 154.
	if res := srv.Do(t, "GET", `/classes/Item?where={"name":{"$regex":"te"}}`, nil, servertest.App()); res.Status != 400 || !strings.Contains(string(res.Body), "154") {
		t.Fatalf("unindexed regex: %d %s, want 154", res.Status, res.Body)
	}
	if res := srv.Do(t, "GET", "/classes/Item/nope", nil, servertest.App()); res.Status != 404 {
		t.Fatalf("missing object: %d %s", res.Status, res.Body)
	}
	after := scrape(t, srv)
	moved := func(series string) float64 { return after[series] - before[series] }
	for series, want := range map[string]float64{
		`quarry_http_requests_total{family="classes",method="POST",status="201"}`: 5,
		`quarry_http_requests_total{family="classes",method="GET",status="200"}`:  2,
		`quarry_http_requests_total{family="classes",method="GET",status="400"}`:  1,
		`quarry_http_requests_total{family="classes",method="GET",status="404"}`:  1,
		`quarry_http_request_duration_seconds_count{family="classes"}`:            9,
		`quarry_queries_total{plan="id_lookup"}`:                                  2,
		`quarry_query_duration_seconds_count{plan="id_lookup"}`:                   2,
		`quarry_query_refused_total`:                                              1,
	} {
		if got := moved(series); got != want {
			t.Errorf("%s moved by %v, want %v", series, got, want)
		}
	}
	if after["go_goroutines"] <= 0 {
		t.Errorf("runtime series missing: goroutines %v", after["go_goroutines"])
	}
	if srv.OnPostgres() {
		return // the store series are the embedded store's (the data file)
	}
	if got := moved(`quarry_store_commits_total`); got != 5 {
		t.Errorf("quarry_store_commits_total moved by %v, want 5", got)
	}
	if after[`quarry_store_fsync_seconds_count`] < 1 || after[`quarry_store_file_bytes`] <= 0 {
		t.Errorf("store series missing: fsyncs %v, file %v", after[`quarry_store_fsync_seconds_count`], after[`quarry_store_file_bytes`])
	}
}

// TestMetricsAllowList: metricsIps keeps other addresses out.
func TestMetricsAllowList(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.MetricsIPs = []string{"10.0.0.0/8"} })
	if res := rawDo(t, rootURL(srv)+"/metrics", "GET", nil, nil); res.Status != 403 {
		t.Fatalf("GET /metrics from outside metricsIps: %d %s", res.Status, res.Body)
	}
}

// TestScriptLog: the Dashboard's Logs page reads recent entries in Parse's
// shape, filtered by level and count, with the master key only.
func TestScriptLog(t *testing.T) {
	srv := servertest.Start(t, nil)
	srv.Do(t, "GET", "/classes/Item/nope", nil, servertest.App())
	srv.Do(t, "POST", "/classes/Item", map[string]any{"n": 1}, servertest.App())
	if res := srv.Do(t, "GET", "/scriptlog", nil, servertest.App()); res.Status != 403 {
		t.Fatalf("scriptlog without the master key: %d %s", res.Status, res.Body)
	}
	res := srv.Do(t, "GET", "/scriptlog?level=info&n=100&order=asc", nil, servertest.Master())
	entries, ok := res.JSON().([]any)
	if res.Status != 200 || !ok || len(entries) < 2 {
		t.Fatalf("scriptlog: %d %s", res.Status, res.Body)
	}
	var first map[string]any // the oldest request line (start-up lines may come before)
	for _, e := range entries {
		entry := e.(map[string]any)
		for _, k := range []string{"timestamp", "level", "message"} {
			if _, ok := entry[k]; !ok {
				t.Errorf("entry %v lacks %q", entry, k)
			}
		}
		if _, isRequest := entry["path"]; isRequest && first == nil {
			first = entry
		}
	}
	if first["path"] != "/parse/classes/Item/nope" || first["status"] != float64(404) {
		t.Errorf("oldest request entry %v, want the 404 request first (order=asc)", first)
	}
	res = srv.Do(t, "GET", "/scriptlog?n=1", nil, servertest.Master())
	if got := res.JSON().([]any); len(got) != 1 || got[0].(map[string]any)["path"] != "/parse/scriptlog" {
		t.Errorf("n=1, newest first: %s", res.Body)
	}
	res = srv.Do(t, "GET", "/scriptlog?level=error", nil, servertest.Master())
	for _, e := range res.JSON().([]any) {
		if e.(map[string]any)["level"] != "error" {
			t.Errorf("level=error returned %v", e)
		}
	}
}

// TestMetricsOnTheirOwnPort: with metricsPort, /metrics is served there
// (behind metricsIps) and no longer on the main port.
func TestMetricsOnTheirOwnPort(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	srv := servertest.Start(t, func(o *config.Options) { o.MetricsPort = port })
	if res := srv.Do(t, "POST", "/classes/Item", map[string]any{"n": 1}, servertest.App()); res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	if res := rawDo(t, rootURL(srv)+"/metrics", "GET", nil, nil); res.Status != 404 {
		t.Errorf("GET /metrics on the main port: %d, want 404", res.Status)
	}
	own := "http://" + srv.MetricsAddr().String()
	res := rawDo(t, own+"/metrics", "GET", nil, nil)
	if res.Status != 200 || !strings.Contains(string(res.Body), `quarry_http_requests_total{family="classes",method="POST",status="201"} 1`) {
		t.Fatalf("GET /metrics on metricsPort: %d %.300s", res.Status, res.Body)
	}
	if res := rawDo(t, own+"/parse/classes/Item", "GET", nil, nil); res.Status != 404 {
		t.Errorf("the metrics port answered a data path: %d", res.Status)
	}
}
