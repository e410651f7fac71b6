package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/valyala/fasthttp"
)

// Shape of the load. Parallel benchmarks run clientsPerCPU goroutines per
// GOMAXPROCS, each one request at a time on its own keep-alive connection.
const (
	clientsPerCPU = 8
	maxConns      = 256
	seedObjects   = 10_000
	batchSize     = 20 // the server's default POST /batch limit
	hotCounters   = 1
	loadCounters  = 100 // the load suite's update workload
	spreadCounts  = 1_000
)

// Benchmark_Create_HTTP_Parallel: POST /classes/{class} from concurrent
// clients; every create is fsynced (in groups) before its 201.
func Benchmark_Create_HTTP_Parallel(b *testing.B) {
	c := start(b)
	c.do(b, "POST", "/classes/Warmup", []byte(`{"n":0,"name":"warm"}`), fasthttp.StatusCreated)
	var seq atomic.Int64
	fsyncs := c.fsyncs(b)
	runParallel(b, func(pb *testing.PB) {
		var body []byte
		for pb.Next() {
			n := seq.Add(1)
			body = fmt.Appendf(body[:0], `{"n":%d,"name":"player-%d","score":%d}`, n, n, n%1000)
			if !c.try(b, "POST", "/classes/GameScore", body, fasthttp.StatusCreated) {
				return
			}
		}
	})
	reportFsyncs(b, c, fsyncs)
}

// Benchmark_Get_HTTP_Parallel: GET /classes/{class}/{id} of random objects
// among seedObjects created beforehand (one server for every b.N).
func Benchmark_Get_HTTP_Parallel(b *testing.B) {
	c := start(b)
	ids := seed(b, c, "GameScore", seedObjects)
	b.Run("objects="+strconv.Itoa(seedObjects), func(b *testing.B) {
		runParallel(b, func(pb *testing.PB) {
			rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
			for pb.Next() {
				if !c.try(b, "GET", "/classes/GameScore/"+ids[rng.IntN(len(ids))], nil, fasthttp.StatusOK) {
					return
				}
			}
		})
	})
}

// Benchmark_Update_Increment_HTTP_Parallel: PUT {"score": Increment 1} on
// one hot object (each write waits for the previous one's fsync: the object
// lock is held across the commit), over the load suite's loadCounters and
// spread over spreadCounts objects (writes to different objects share
// fsyncs).
func Benchmark_Update_Increment_HTTP_Parallel(b *testing.B) {
	for _, objects := range []int{hotCounters, loadCounters, spreadCounts} {
		b.Run("objects="+strconv.Itoa(objects), func(b *testing.B) {
			c := start(b)
			ids := seed(b, c, "Counter", objects)
			body := []byte(`{"score":{"__op":"Increment","amount":1}}`)
			fsyncs := c.fsyncs(b)
			runParallel(b, func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
				for pb.Next() {
					if !c.try(b, "PUT", "/classes/Counter/"+ids[rng.IntN(len(ids))], body, fasthttp.StatusOK) {
						return
					}
				}
			})
			reportFsyncs(b, c, fsyncs)
		})
	}
}

// Benchmark_Batch20_HTTP: one client sending POST /batch with 20 creates
// at a time, as independent commands (each create commits on its own) and
// as a transaction (all 20 commit in one unit).
func Benchmark_Batch20_HTTP(b *testing.B) {
	for _, tx := range []bool{false, true} {
		b.Run("transaction="+strconv.FormatBool(tx), func(b *testing.B) {
			c := start(b)
			var body []byte
			n := 0
			fsyncs := c.fsyncs(b)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cputime.Used()
			for range b.N {
				body = batchBody(body[:0], c.mount, "GameScore", n, batchSize, tx)
				n += batchSize
				c.do(b, "POST", "/batch", body, fasthttp.StatusOK)
			}
			reportCPU(b, cpu)
			reportRate(b, 1)
			reportFsyncs(b, c, fsyncs)
			b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "objects/s")
		})
	}
}

// client speaks to one test server over keep-alive loopback connections.
type client struct {
	hc    *fasthttp.HostClient
	mount string // the server's mount path, e.g. /parse
}

// start runs an in-process server (on-disk buntdb in b.TempDir()) and a
// client for it.
func start(b *testing.B) *client {
	b.Helper()
	srv := servertest.Start(b, nil)
	u, err := url.Parse(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	hc := &fasthttp.HostClient{
		Addr:         u.Host,
		MaxConns:     maxConns,
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 30 * time.Second,
	}
	b.Cleanup(hc.CloseIdleConnections)
	return &client{hc: hc, mount: u.Path}
}

// try sends one request and reports whether the reply had status want; a
// wrong reply fails the benchmark (safe from RunParallel goroutines).
func (c *client) try(b *testing.B, method, path string, body []byte, want int) bool {
	_, ok := c.send(b, method, path, body, want, false)
	return ok
}

// do is try that returns the reply body and stops the benchmark on failure;
// only for the benchmark goroutine.
func (c *client) do(b *testing.B, method, path string, body []byte, want int) []byte {
	b.Helper()
	reply, ok := c.send(b, method, path, body, want, true)
	if !ok {
		b.FailNow()
	}
	return reply
}

func (c *client) send(b *testing.B, method, path string, body []byte, want int, keep bool) ([]byte, bool) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + c.hc.Addr + c.mount + path)
	req.Header.Set("X-Parse-Application-Id", servertest.AppID)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}
	if err := c.hc.Do(req, resp); err != nil {
		b.Errorf("%s %s: %v", method, path, err)
		return nil, false
	}
	if resp.StatusCode() != want {
		b.Errorf("%s %s: status %d, want %d: %.300s", method, path, resp.StatusCode(), want, resp.Body())
		return nil, false
	}
	if !keep {
		return nil, true
	}
	return append([]byte(nil), resp.Body()...), true
}

// runParallel runs body from clientsPerCPU goroutines per CPU and reports
// allocations (server and client: they share the process) and req/s.
func runParallel(b *testing.B, body func(*testing.PB)) {
	b.ReportAllocs()
	b.SetParallelism(clientsPerCPU)
	b.ResetTimer()
	cpu := cputime.Used()
	b.RunParallel(body)
	reportCPU(b, cpu)
	reportRate(b, 1)
}

// reportCPU adds the custom metric cpu-µs/op: the process's CPU time
// (server and client, garbage collection included) per operation since
// start. On a shared machine it moves far less than ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cputime.Used()-start)/1e3/float64(b.N), "cpu-µs/op")
	}
}

// reportRate adds the custom metric req/s: HTTP requests per wall second.
func reportRate(b *testing.B, requestsPerOp int) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N*requestsPerOp)/s, "req/s")
	}
}

// fsyncs reads the server's count of data file fsyncs from /metrics
// (quarry_store_fsyncs_total).
func (c *client) fsyncs(b *testing.B) float64 {
	b.Helper()
	const series = "quarry_store_fsyncs_total "
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + c.hc.Addr + "/metrics")
	if err := c.hc.Do(req, resp); err != nil || resp.StatusCode() != fasthttp.StatusOK {
		b.Fatalf("GET /metrics: %v %d", err, resp.StatusCode())
	}
	for line := range strings.Lines(string(resp.Body())) {
		if v, ok := strings.CutPrefix(line, series); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				b.Fatalf("metrics: %q: %v", line, err)
			}
			return n
		}
	}
	b.Fatalf("metrics: no %s series", strings.TrimSpace(series))
	return 0
}

// reportFsyncs adds the custom metric fsyncs/op: how many requests share
// one fsync under group commit (1/fsyncs/op of them do).
func reportFsyncs(b *testing.B, c *client, before float64) {
	b.Helper()
	b.StopTimer()
	if b.N > 0 {
		b.ReportMetric((c.fsyncs(b)-before)/float64(b.N), "fsyncs/op")
	}
}

// seed creates n objects {n, name, score} of class in batches of batchSize
// from a few concurrent clients and returns their objectIds.
func seed(b *testing.B, c *client, class string, n int) []string {
	b.Helper()
	ids := make([]string, n)
	batches := (n + batchSize - 1) / batchSize
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range 8 {
		wg.Go(func() {
			var body []byte
			for {
				i := int(next.Add(1)) - 1
				if i >= batches || failed.Load() {
					return
				}
				first := i * batchSize
				size := min(batchSize, n-first)
				body = batchBody(body[:0], c.mount, class, first, size, false)
				reply, ok := c.send(b, "POST", "/batch", body, fasthttp.StatusOK, true)
				if !ok {
					failed.Store(true)
					return
				}
				var results []struct {
					Success struct{ ObjectID string }
				}
				if err := json.Unmarshal(reply, &results); err != nil || len(results) != size {
					b.Errorf("seeding %s: batch reply %.300s (%v)", class, reply, err)
					failed.Store(true)
					return
				}
				for j, r := range results {
					if r.Success.ObjectID == "" {
						b.Errorf("seeding %s: batch item %d failed: %.300s", class, j, reply)
						failed.Store(true)
						return
					}
					ids[first+j] = r.Success.ObjectID
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		b.FailNow()
	}
	return ids
}

// batchBody appends a POST /batch body of size creates numbered from first;
// mount is the server's mount path, which batch paths carry.
func batchBody(dst []byte, mount, class string, first, size int, transaction bool) []byte {
	dst = append(dst, `{"requests":[`...)
	for i := range size {
		if i > 0 {
			dst = append(dst, ',')
		}
		n := first + i
		dst = fmt.Appendf(dst, `{"method":"POST","path":"%s/classes/%s","body":{"n":%d,"name":"player-%d","score":%d}}`,
			mount, class, n, n, n%1000)
	}
	dst = append(dst, ']')
	if transaction {
		dst = append(dst, `,"transaction":true`...)
	}
	return append(dst, '}')
}
