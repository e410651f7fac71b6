package cloud_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// testMaxMemory is the bound the memory tests run with: small, so that a
// runaway script costs the test machine little.
const testMaxMemory = 64 << 20

// startMemory serves testdata/memory with cloudCodeMaxMemory 64mb and a
// timeout long enough that only the memory bound can stop a script.
func startMemory(t *testing.T) *servertest.Server {
	t.Helper()
	return servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join("testdata", "memory", "main.js")
		o.CloudCodeTimeout = 120_000
		o.CloudCodeMaxMemory = testMaxMemory
	})
}

// TestJavaScriptMemoryBound: a function or a beforeSave that keeps
// allocating is stopped with 141 and writes nothing; the server and the
// pool keep answering; calls that keep little, or allocate a lot of
// garbage, are untouched; endless recursion fails cleanly.
func TestJavaScriptMemoryBound(t *testing.T) {
	srv := startMemory(t)
	runtime.GC()
	before := liveHeap()
	const limitError = "Script exceeded its memory limit of 64mb"
	run(t, srv, []scenario{
		{name: "moderate", method: "POST", path: "/functions/moderate", status: 200, has: []string{`{"result":8}`}},
		{name: "garbage is not counted", method: "POST", path: "/functions/churn", status: 200, has: []string{`{"result":1048576}`}},
		{name: "unbounded function", method: "POST", path: "/functions/hog", status: 400,
			has: []string{`"code":141`, limitError}},
		{name: "next call", method: "POST", path: "/functions/hello", status: 200, has: []string{`{"result":"hello"}`}},
		{name: "unbounded again", method: "POST", path: "/functions/hog", status: 400, has: []string{`"code":141`, limitError}},
		{name: "moderate after", method: "POST", path: "/functions/moderate", status: 200, has: []string{`{"result":8}`}},
		{name: "unbounded beforeSave", method: "POST", path: "/classes/Hog", body: map[string]any{"n": 1}, status: 400,
			has: []string{`"code":141`, limitError}},
		{name: "beforeSave wrote nothing", method: "GET", path: "/classes/Hog?count=1&limit=0", headers: servertest.Master(),
			status: 200, has: []string{`"count":0`}},
		{name: "recursion", method: "POST", path: "/functions/recurse", status: 400,
			has: []string{`"code":141`, "Maximum call stack size exceeded"}, hasNot: []string{"quarry-prelude", "main.js"}},
		{name: "after recursion", method: "POST", path: "/functions/hello", status: 200, has: []string{`{"result":"hello"}`}},
	})
	if got := metric(t, srv, "quarry_cloud_memory_stops_total"); got != "3" {
		t.Errorf("quarry_cloud_memory_stops_total %s, want 3", got)
	}
	// The stopped runtimes were discarded: what their scripts kept is
	// garbage now (a runtime still being terminated may hold it for a
	// few more collections).
	var live uint64
	for range 20 {
		runtime.GC()
		if live = liveHeap(); live < before+testMaxMemory/2 {
			return
		}
		runtime.Gosched()
	}
	t.Errorf("live heap %d MB after the stopped scripts, want under %d MB", live>>20, (before+testMaxMemory/2)>>20)
}

// TestJavaScriptMemoryConcurrent: calls running at once that each keep
// well under the bound all succeed, though the heap grows by their sum.
func TestJavaScriptMemoryConcurrent(t *testing.T) {
	srv := startMemory(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := srv.Do(t, "POST", "/functions/moderate", nil, servertest.App())
			if res.Status != 200 || !strings.Contains(string(res.Body), `{"result":8}`) {
				errs <- fmt.Sprintf("call %d: %d %s", i, res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// metric is a series' value in /metrics ("" when it is missing).
func metric(t *testing.T, srv *servertest.Server, name string) string {
	t.Helper()
	res, err := http.Get(strings.TrimSuffix(srv.URL, srv.Opts.MountPath) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// TestJavaScriptMemoryJob: jobs have no time limit but the same memory
// bound; the stopped job ends failed with the error's message.
func TestJavaScriptMemoryJob(t *testing.T) {
	srv := startMemory(t)
	res := srv.Do(t, "POST", "/jobs/hogJob", nil, servertest.Master())
	id := res.Header.Get("X-Parse-Job-Status-Id")
	if res.Status != 200 || id == "" {
		t.Fatalf("start: %d %s", res.Status, res.Body)
	}
	srv.Service.WaitJobs()
	st := srv.Do(t, "GET", "/classes/_JobStatus/"+id, nil, servertest.Master()).Map()
	if st["status"] != service.JobFailed || !strings.Contains(fmt.Sprint(st["message"]), "memory limit of 64mb") {
		t.Errorf("job status %v", st)
	}
	if res := srv.Do(t, "POST", "/functions/hello", nil, servertest.App()); res.Status != 200 {
		t.Errorf("after the job: %d %s", res.Status, res.Body)
	}
}
