package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// The shape both benchmarks share: 10,000 subscriptions, each a distinct
// query, 10 of which match any one write.
const (
	totalSubs   = 10_000
	matchPerHit = 10
	rooms       = totalSubs / matchPerHit
)

// roomWhere is subscription i's query: its room (the equality the index
// files it under) and a range unique to it, so no two share a matcher.
func roomWhere(i int) map[string]any {
	return map[string]any{"room": fmt.Sprintf("r%d", i%rooms), "v": map[string]any{"$lt": float64(1e9 + i)}}
}

// geoWhere is subscription i's query around one of 1,000 places.
func geoWhere(i int, places []map[string]any) map[string]any {
	return map[string]any{"loc": map[string]any{"$nearSphere": places[i%rooms], "$maxDistanceInKilometers": 5 + float64(i)/1e4}}
}

func places() []map[string]any {
	r := rand.New(rand.NewSource(1))
	out := make([]map[string]any, rooms)
	for i := range out {
		out[i] = map[string]any{"__type": "GeoPoint", "latitude": r.Float64()*140 - 70, "longitude": r.Float64()*360 - 180}
	}
	return out
}

// BenchmarkLiveMatch_10000Subs_10Match is the matching cost of one write
// (an update: original and new object) against 10,000 subscriptions of
// which 10 match: through the index, and testing all of them.
func BenchmarkLiveMatch_10000Subs_10Match(b *testing.B) {
	pl := places()
	for _, shape := range []struct {
		name     string
		where    func(int) map[string]any
		original schema.Object
		object   schema.Object
	}{
		{"equality", roomWhere,
			schema.Object{"objectId": "o1", "room": "r7", "v": float64(1)},
			schema.Object{"objectId": "o1", "room": "r7", "v": float64(2), "text": "hello"}},
		{"geo", func(i int) map[string]any { return geoWhere(i, pl) },
			schema.Object{"objectId": "o1", "loc": pl[7], "v": float64(1)},
			schema.Object{"objectId": "o1", "loc": pl[7], "v": float64(2)}},
	} {
		ix := match.NewIndex[int]()
		for i := 0; i < totalSubs; i++ {
			q, err := match.Compile("Room", shape.where(i), match.Options{})
			if err != nil {
				b.Fatal(err)
			}
			ix.Add(q, i)
		}
		for _, mode := range []string{"indexed", "all"} {
			b.Run(shape.name+"/"+mode, func(b *testing.B) {
				var buf []*match.Group[int]
				tested, matched := 0, 0
				b.ReportAllocs()
				for n := 0; n < b.N; n++ {
					if mode == "indexed" {
						buf = ix.Candidates("Room", shape.original, shape.object, buf[:0])
					} else {
						buf = ix.All("Room", buf[:0])
					}
					for _, g := range buf {
						q := g.Query()
						if q.Match(shape.original) || q.Match(shape.object) {
							matched++
						}
					}
					tested += len(buf)
				}
				if matched/b.N != matchPerHit {
					b.Fatalf("%d subscriptions matched per write, want %d", matched/b.N, matchPerHit)
				}
				b.ReportMetric(float64(tested)/float64(b.N), "queries/op")
			})
		}
	}
}

// Fan-out: the server (this process) holds 10,000 subscriptions on 1,000
// WebSocket connections opened by a client process (this test binary run
// again as TestFanoutClientProcess), and creates objects at a steady rate
// through the service (durable commit included). Each write matches 10
// subscriptions. The client process timestamps each event on arrival;
// the server's CPU is this process's user+system time.
const (
	fanoutConns = 1_000
	subsPerConn = totalSubs / fanoutConns
)

// BenchmarkLiveFanout_1000Conns_10000Subs runs once whatever b.N (use
// -benchtime 1x). LIVE_BENCH_RATE (writes/s, default 1000) and
// LIVE_BENCH_DURATION (default 10s) shape the run.
func BenchmarkLiveFanout_1000Conns_10000Subs(b *testing.B) {
	rate := envInt("LIVE_BENCH_RATE", 1000)
	duration := envDuration("LIVE_BENCH_DURATION", 10*time.Second)
	srv := servertest.Start(b, func(o *config.Options) { o.LiveQuery.ClassNames = []string{"Room"} })

	cmd := exec.Command(os.Args[0], "-test.run=^TestFanoutClientProcess$")
	cmd.Env = append(os.Environ(), "LIVE_BENCH_CLIENT="+"ws"+strings.TrimPrefix(srv.URL, "http"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 256<<20) // ARRIVALS holds every event
	waitLine := func(prefix string) string {
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, prefix) {
				return strings.TrimPrefix(l, prefix)
			}
		}
		b.Fatalf("client process ended before %q: %v", prefix, lines.Err())
		return ""
	}
	waitLine("READY")
	if st := srv.Live.Stats(); st.Subscriptions != totalSubs || st.Clients != fanoutConns {
		b.Fatalf("server holds %+v", st)
	}

	commits := &commitLog{at: map[int64]int64{}}
	write := func(stop time.Time) int { return steadyWrites(b, srv, rate, stop, commits) }
	write(time.Now().Add(time.Second)) // warm-up
	time.Sleep(200 * time.Millisecond)

	before := srv.Live.Stats()
	cpu0 := cputime.Used()
	t0 := time.Now()
	fmt.Fprintf(stdin, "MEASURE %d\n", t0.UnixMicro())
	writes := write(t0.Add(duration))
	// Let the last events arrive before the window closes.
	deadline := time.Now().Add(5 * time.Second)
	for srv.Live.Stats().Delivered-before.Delivered < uint64(writes*matchPerHit) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(t0)
	cpu := cputime.Used() - cpu0
	after := srv.Live.Stats()
	time.Sleep(200 * time.Millisecond)
	fmt.Fprintln(stdin, "STOP")
	var res clientResult
	if err := json.Unmarshal([]byte(waitLine("RESULT ")), &res); err != nil {
		b.Fatal(err)
	}
	var arrivals [][2]int64
	if err := json.Unmarshal([]byte(waitLine("ARRIVALS ")), &arrivals); err != nil {
		b.Fatal(err)
	}
	cmd.Wait()
	fromCommit := commits.latencies(arrivals)

	delivered := after.Delivered - before.Delivered
	b.ReportMetric(float64(writes)/duration.Seconds(), "writes/s")
	b.ReportMetric(float64(delivered)/elapsed.Seconds(), "events/s")
	b.ReportMetric(res.P50, "p50-µs")
	b.ReportMetric(res.P99, "p99-µs")
	b.ReportMetric(res.Max, "max-µs")
	b.ReportMetric(percentile(fromCommit, 0.5), "commit-p50-µs")
	b.ReportMetric(percentile(fromCommit, 0.99), "commit-p99-µs")
	b.ReportMetric(percentile(fromCommit, 1), "commit-max-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(delivered), "cpu-µs/event")
	b.ReportMetric(float64(writes*matchPerHit)-float64(res.Received), "lost")
	b.ReportMetric(float64(after.Dropped-before.Dropped), "dropped")
}

// commitLog is when each write's commit was acknowledged (its Create
// returned), in µs, by the write's seq: the start of the latency "from
// commit to the client's socket". The change reaches the LiveQuery
// dispatch before Create returns, so this is a lower bound of that
// latency, and an event that arrives sooner counts as 0.
type commitLog struct {
	mu  sync.Mutex
	seq int64
	at  map[int64]int64
}

func (l *commitLog) next() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return l.seq
}

func (l *commitLog) done(seq int64) {
	now := time.Now().UnixMicro()
	l.mu.Lock()
	l.at[seq] = now
	l.mu.Unlock()
}

// latencies are the arrivals' (seq, µs) delays after their commits,
// sorted.
func (l *commitLog) latencies(arrivals [][2]int64) []float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]float64, 0, len(arrivals))
	for _, a := range arrivals {
		if at, ok := l.at[a[0]]; ok {
			out = append(out, float64(max(a[1]-at, 0)))
		}
	}
	slices.Sort(out)
	return out
}

// percentile of sorted values; 0 when there are none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(p*float64(len(sorted)-1))]
}

// steadyWrites creates Room objects at rate per second until stop, from
// 16 goroutines on a fixed schedule (a slow write does not shift the next
// ones), and returns how many it wrote. Each carries its start time in µs
// and, with commits, a seq whose commit time commits records.
func steadyWrites(b *testing.B, srv *servertest.Server, rate int, stop time.Time, commits *commitLog) int {
	const writers = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	start := time.Now()
	interval := time.Duration(float64(time.Second) * writers / float64(rate))
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			n := 0
			for i := 0; ; i++ {
				at := start.Add(time.Duration(i)*interval + time.Duration(w)*interval/writers)
				if at.After(stop) {
					break
				}
				time.Sleep(time.Until(at))
				body := map[string]any{"room": fmt.Sprintf("r%d", (i*writers+w)%rooms), "v": float64(1),
					"sentAt": float64(time.Now().UnixMicro())}
				var seq int64
				if commits != nil {
					seq = commits.next()
					body["seq"] = float64(seq)
				}
				if _, err := srv.Service.Create(service.Auth{Master: true}, "Room", body); err != nil {
					b.Error(err)
					return
				}
				if commits != nil {
					commits.done(seq)
				}
				n++
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	return total
}

// BenchmarkLiveFanout_Baseline_NoSubscribers is the same steady writes
// with LiveQuery on and nobody subscribed: the write path's own CPU,
// which the fan-out figure includes.
func BenchmarkLiveFanout_Baseline_NoSubscribers(b *testing.B) {
	rate := envInt("LIVE_BENCH_RATE", 1000)
	duration := envDuration("LIVE_BENCH_DURATION", 10*time.Second)
	srv := servertest.Start(b, func(o *config.Options) { o.LiveQuery.ClassNames = []string{"Room"} })
	steadyWrites(b, srv, rate, time.Now().Add(time.Second), nil)
	cpu0 := cputime.Used()
	writes := steadyWrites(b, srv, rate, time.Now().Add(duration), nil)
	cpu := cputime.Used() - cpu0
	b.ReportMetric(float64(writes)/duration.Seconds(), "writes/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(writes), "cpu-µs/write")
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

type clientResult struct {
	Received      int
	P50, P99, Max float64 // µs
}

// TestFanoutClientProcess is the fan-out benchmark's client side; it does
// nothing unless the benchmark started it (LIVE_BENCH_CLIENT is the
// server's WebSocket URL). It opens the connections, subscribes, prints
// READY, records the latency of every event whose write started after
// MEASURE <µs>, and prints RESULT <json> on STOP.
func TestFanoutClientProcess(t *testing.T) {
	url := os.Getenv("LIVE_BENCH_CLIENT")
	if url == "" {
		t.Skip("the fan-out benchmark's client process")
	}
	var (
		mu       sync.Mutex
		lat      []float64
		arrivals [][2]int64 // (seq, µs) of each measured event
		from     = int64(math.MaxInt64)
		fromMu   sync.RWMutex
		readers  sync.WaitGroup
	)
	sentAt, seqKey := []byte(`"sentAt":`), []byte(`"seq":`)
	conns := make([]*websocket.Conn, fanoutConns)
	for i := range conns {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
		c.WriteJSON(map[string]any{"op": "connect", "applicationId": servertest.AppID})
		for j := 0; j < subsPerConn; j++ {
			c.WriteJSON(map[string]any{"op": "subscribe", "requestId": j + 1,
				"query": map[string]any{"className": "Room", "where": roomWhere(i*subsPerConn + j)}})
		}
		for k := 0; k < 1+subsPerConn; k++ { // connected, subscribed × 10
			if _, _, err := c.ReadMessage(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range conns {
		readers.Add(1)
		go func(c *websocket.Conn) {
			defer readers.Done()
			var local []float64
			var localArrivals [][2]int64
			for {
				_, data, err := c.ReadMessage()
				now := time.Now().UnixMicro()
				if err != nil {
					break
				}
				i := bytes.Index(data, sentAt)
				if i < 0 {
					continue
				}
				rest := data[i+len(sentAt):]
				end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
				sent, _ := strconv.ParseInt(string(rest[:end]), 10, 64)
				fromMu.RLock()
				measured := sent >= from
				fromMu.RUnlock()
				if measured {
					local = append(local, float64(now-sent))
					if seq, ok := intAfter(data, seqKey); ok {
						localArrivals = append(localArrivals, [2]int64{seq, now})
					}
				}
			}
			mu.Lock()
			lat = append(lat, local...)
			arrivals = append(arrivals, localArrivals...)
			mu.Unlock()
		}(c)
	}
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if v, ok := strings.CutPrefix(in.Text(), "MEASURE "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			fromMu.Lock()
			from = n
			fromMu.Unlock()
		}
		if in.Text() == "STOP" {
			break
		}
	}
	for _, c := range conns {
		c.Close()
	}
	readers.Wait()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(p*float64(len(lat)-1))]
	}
	out, _ := json.Marshal(clientResult{Received: len(lat), P50: pct(0.5), P99: pct(0.99), Max: pct(1)})
	fmt.Printf("RESULT %s\n", out)
	out, _ = json.Marshal(arrivals)
	fmt.Printf("ARRIVALS %s\n", out)
}

// intAfter reads the integer after key in data.
func intAfter(data, key []byte) (int64, bool) {
	i := bytes.Index(data, key)
	if i < 0 {
		return 0, false
	}
	rest := data[i+len(key):]
	end := bytes.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return n, err == nil
}
