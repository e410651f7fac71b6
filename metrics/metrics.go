// Package metrics owns Quarry's Prometheus metrics: one registry per server
// holding the HTTP, query, LiveQuery, store and Go runtime series, and the
// handler that serves them in the text format. It only counts: no package
// decides anything from a metric. A nil *Metrics counts nothing, so the
// layers that report to it work without one (tests, embedded use).
package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Metrics is a server's set of series.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	queries      *prometheus.CounterVec
	queryTime    *prometheus.HistogramVec
	refused      prometheus.Counter
	examined     prometheus.Histogram
	panics       prometheus.Counter
	fsync        prometheus.Histogram
	groupSize    prometheus.Histogram

	// requestSeries caches, by requestKey, the two series Request adds
	// to, so that a request costs one map lookup instead of the vectors'
	// label hashing and a status formatted as text. It grows only as the
	// vectors themselves do.
	requestSeries sync.Map
}

// requestKey names the series of one kind of request.
type requestKey struct {
	family, method string
	status         int
}

// requestPair is what Request adds to for one requestKey.
type requestPair struct {
	count prometheus.Counter
	took  prometheus.Observer
}

// New builds a registry with Quarry's series and the Go runtime's.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quarry_http_requests_total",
		Help: "HTTP requests answered, by route family (the first path segment below the mount path), method and status.",
	}, []string{"family", "method", "status"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "quarry_http_request_duration_seconds",
		Help:    "Time from reading a request to writing its reply, by route family.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"family"})
	m.queries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quarry_queries_total",
		Help: "Queries run, by the planner's access: id_lookup, index_range, index_union, geo_cover, full_scan or empty.",
	}, []string{"plan"})
	m.queryTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "quarry_query_duration_seconds",
		Help:    "Time to answer a request that ran a query, by the planner's access (the plan label of quarry_queries_total).",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"plan"})
	m.refused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quarry_query_refused_total",
		Help: "Queries refused with error 154 because they would examine too many objects without an index.",
	})
	m.examined = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "quarry_query_rows_examined",
		Help:    "Objects a query examined.",
		Buckets: []float64{0, 1, 10, 100, 1000, 10000, 100000, 1000000},
	})
	m.panics = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "quarry_panics_total",
		Help: "Requests and LiveQuery connections that panicked (answered 500 or closed; the server went on).",
	})
	m.fsync = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "quarry_store_fsync_seconds",
		Help:    "Time to write and fsync one commit group of the data file.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
	})
	m.groupSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "quarry_store_group_commits",
		Help:    "Commits sharing one fsync (group commit).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.queries, m.queryTime, m.refused, m.examined, m.panics, m.fsync, m.groupSize,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Request counts one answered HTTP request.
func (m *Metrics) Request(family, method string, status int, took time.Duration) {
	if m == nil {
		return
	}
	key := requestKey{family: family, method: method, status: status}
	p, ok := m.requestSeries.Load(key)
	if !ok {
		p, _ = m.requestSeries.LoadOrStore(key, &requestPair{
			count: m.httpRequests.WithLabelValues(family, method, strconv.Itoa(status)),
			took:  m.httpDuration.WithLabelValues(family),
		})
	}
	pair := p.(*requestPair)
	pair.count.Inc()
	pair.took.Observe(took.Seconds())
}

// Query counts one query the planner ran, the objects it examined and the
// time its request took.
func (m *Metrics) Query(plan string, examined int, took time.Duration) {
	if m == nil || plan == "" {
		return
	}
	m.queries.WithLabelValues(plan).Inc()
	m.queryTime.WithLabelValues(plan).Observe(took.Seconds())
	m.examined.Observe(float64(examined))
}

// Refused counts a query refused with error 154.
func (m *Metrics) Refused() {
	if m != nil {
		m.refused.Inc()
	}
}

// Panic counts a recovered panic.
func (m *Metrics) Panic() {
	if m != nil {
		m.panics.Inc()
	}
}

// Commit records one commit group of the store: how long its write and
// fsync took and how many commits shared it.
func (m *Metrics) Commit(took time.Duration, commits int) {
	if m == nil {
		return
	}
	m.fsync.Observe(took.Seconds())
	m.groupSize.Observe(float64(commits))
}

// GaugeFunc adds a series whose value is read at each scrape.
func (m *Metrics) GaugeFunc(name, help string, value func() float64) {
	if m != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, value))
	}
}

// CounterFunc adds a counter whose value is read at each scrape.
func (m *Metrics) CounterFunc(name, help string, value func() float64) {
	if m != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, value))
	}
}

// GaugeFuncWith is GaugeFunc for one series of several that the
// constant labels tell apart (one per consumer, say).
func (m *Metrics) GaugeFuncWith(name, help string, labels map[string]string, value func() float64) {
	if m != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, value))
	}
}

// CounterFuncWith is CounterFunc for one series of several that the
// constant labels tell apart.
func (m *Metrics) CounterFuncWith(name, help string, labels map[string]string, value func() float64) {
	if m != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, value))
	}
}

// Handler serves the registry in Prometheus's text format.
func (m *Metrics) Handler() fasthttp.RequestHandler {
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
}
