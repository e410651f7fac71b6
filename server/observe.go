package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/metrics"
	"github.com/quarrydata/quarry/store"
)

// observeCloud adds cloud code's series, read from its registry.
func observeCloud(m *metrics.Metrics, reg *cloud.Registry) {
	stat := func(f func(cloud.Stats) uint64) func() float64 {
		return func() float64 { return float64(f(reg.Stats())) }
	}
	m.CounterFunc("quarry_cloud_runs_total", "Cloud code runs: functions, jobs and triggers.",
		stat(func(s cloud.Stats) uint64 { return s.Runs }))
	m.CounterFunc("quarry_cloud_failures_total", "Cloud code runs that ended in an error (thrown, refused by a validator, timed out, panicked).",
		stat(func(s cloud.Stats) uint64 { return s.Failures }))
	m.CounterFunc("quarry_cloud_timeouts_total", "Cloud code runs interrupted after cloudCodeTimeout (error 124).",
		stat(func(s cloud.Stats) uint64 { return s.Timeouts }))
	m.CounterFunc("quarry_cloud_memory_stops_total", "Cloud code runs stopped past cloudCodeMaxMemory (error 141); their runtimes are replaced.",
		stat(func(s cloud.Stats) uint64 { return s.MemoryStops }))
}

// observeLive adds the LiveQuery server's and the Redis feed's series,
// read at each scrape from their own counters.
func observeLive(m *metrics.Metrics, srv *live.Server, pub *live.Redis) {
	stat := func(f func(live.Stats) float64) func() float64 {
		return func() float64 { return f(srv.Stats()) }
	}
	m.GaugeFunc("quarry_livequery_clients", "Open LiveQuery WebSocket connections.",
		stat(func(s live.Stats) float64 { return float64(s.Clients) }))
	m.GaugeFunc("quarry_livequery_subscriptions", "LiveQuery subscriptions.",
		stat(func(s live.Stats) float64 { return float64(s.Subscriptions) }))
	m.CounterFunc("quarry_livequery_events_sent_total", "LiveQuery events queued for clients.",
		stat(func(s live.Stats) float64 { return float64(s.Delivered) }))
	m.CounterFunc("quarry_livequery_events_dropped_total", "LiveQuery messages dropped because a client's send queue was full.",
		stat(func(s live.Stats) float64 { return float64(s.Dropped) }))
	m.CounterFunc("quarry_livequery_slow_clients_closed_total", "LiveQuery clients disconnected for being too slow.",
		stat(func(s live.Stats) float64 { return float64(s.SlowClosed) }))
	if pub != nil {
		m.GaugeFunc("quarry_redis_publish_queue", "Changes waiting to be published to Redis.",
			func() float64 { return float64(pub.Queued()) })
		m.CounterFunc("quarry_redis_publish_dropped_total", "Changes never published to Redis (queue overflow or shutdown).",
			func() float64 { return float64(pub.Dropped()) })
	}
}

// observeStore adds the store's series when the adapter reports them.
func observeStore(m *metrics.Metrics, adapter store.Adapter) {
	ins, ok := adapter.(store.Instrumented)
	if !ok {
		return
	}
	ins.ObserveGroups(m.Commit)
	m.CounterFunc("quarry_store_commits_total", "Durable commits (each a write request's records).",
		func() float64 { return float64(ins.Stats().Commits) })
	m.CounterFunc("quarry_store_fsyncs_total", "fsyncs of the data file, each shared by a group of commits.",
		func() float64 { return float64(ins.Stats().Groups) })
	m.CounterFunc("quarry_store_shrinks_total", "Compactions of the data file.",
		func() float64 { return float64(ins.Stats().Shrinks) })
	m.GaugeFunc("quarry_store_file_bytes", "Size of the data file after the last fsync.",
		func() float64 { return float64(ins.Stats().FileBytes) })
}

// listenPprof binds the profiler's address (set by the operator; off by
// default), so that it answers as soon as Listen returns.
func listenPprof(addr string) (net.Listener, error) {
	return net.Listen("tcp", addr)
}

// servePprof serves Go's profiler on ln until ctx is done.
func servePprof(ctx context.Context, ln net.Listener, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("pprof server stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	log.Info("pprof listening", "address", "http://"+ln.Addr().String()+"/debug/pprof/")
}
