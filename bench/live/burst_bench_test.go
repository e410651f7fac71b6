package live

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// BenchmarkLiveBurst_100Conns_Batch20: 100 WebSocket clients subscribed
// to one query (one subscription group) while each op creates 20 objects
// in one batch (one commit): every client receives 20 events at once.
// The clients run in this process (they share its CPU); latency is from
// the batch's commit acknowledged (CreateEach returned, a lower bound) to
// each event read by a client.
func BenchmarkLiveBurst_100Conns_Batch20(b *testing.B) {
	const conns, batch = 100, 20
	srv := servertest.Start(b, func(o *config.Options) { o.LiveQuery.ClassNames = []string{"Room"} })
	url := "ws" + srv.URL[len("http"):]
	var (
		received atomic.Int64
		want     atomic.Int64
		reached  = make(chan struct{}, 1)
		mu       sync.Mutex
		arrivals [][2]int64 // (seq, µs)
		readers  sync.WaitGroup
	)
	seqKey := []byte(`"seq":`)
	clients := make([]*websocket.Conn, conns)
	for i := range clients {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			b.Fatal(err)
		}
		clients[i] = c
		c.WriteJSON(map[string]any{"op": "connect", "applicationId": servertest.AppID})
		c.WriteJSON(map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{"className": "Room", "where": map[string]any{}}})
		for range 2 { // connected, subscribed
			if _, _, err := c.ReadMessage(); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, c := range clients {
		readers.Add(1)
		go func() {
			defer readers.Done()
			var local [][2]int64
			for {
				_, data, err := c.ReadMessage()
				now := time.Now().UnixMicro()
				if err != nil {
					break
				}
				if seq, ok := intAfter(data, seqKey); ok && bytes.Contains(data, []byte(`"op":"create"`)) {
					local = append(local, [2]int64{seq, now})
				}
				if received.Add(1) == want.Load() {
					reached <- struct{}{}
				}
			}
			mu.Lock()
			arrivals = append(arrivals, local...)
			mu.Unlock()
		}()
	}
	commits := &commitLog{at: map[int64]int64{}}
	var seq int64
	round := func(n int) {
		bodies := make([]map[string]any, batch)
		seqs := make([]int64, batch)
		for r := 0; r < n; r++ {
			want.Add(conns * batch)
			for i := range bodies {
				seq++
				seqs[i] = seq
				bodies[i] = map[string]any{"room": "r1", "seq": float64(seq)}
			}
			for _, res := range srv.Service.CreateEach(service.Auth{Master: true}, "Room", bodies) {
				if res.Err != nil {
					b.Fatal(res.Err)
				}
			}
			for _, s := range seqs {
				commits.done(s)
			}
			<-reached
		}
	}
	round(20) // warm-up: its events are not measured
	commits = &commitLog{at: map[int64]int64{}}
	b.ResetTimer()
	cpu := cputime.Used()
	round(b.N)
	b.StopTimer()
	used := cputime.Used() - cpu
	for _, c := range clients {
		c.Close()
	}
	readers.Wait()
	lat := commits.latencies(arrivals)
	events := float64(b.N * conns * batch)
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(used.Microseconds())/events, "cpu-µs/event")
	b.ReportMetric(percentile(lat, 0.5), "commit-p50-µs")
	b.ReportMetric(percentile(lat, 0.99), "commit-p99-µs")
	if len(lat) == 0 {
		b.Errorf("no event measured of %d", len(arrivals))
	}
}
