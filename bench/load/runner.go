package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result statuses.
const (
	statusOK           = "ok"
	statusErrors       = "errors"
	statusNotSupported = "not supported"
)

// maxErrorSamples is how many distinct error messages a result keeps.
const maxErrorSamples = 3

// runOpts shapes one workload run.
type runOpts struct {
	concurrency int
	warmup      time.Duration
	duration    time.Duration
	maxOps      int64 // measured operations at most
	// measure, if set, is called when the measured phase starts; the
	// function it returns is called when it ends (profiles hook in here).
	measure func(workload string) func()
}

// phase of a run, read by every worker before each operation.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// tally is one worker's count, merged at the end.
type tally struct {
	lat     latencies
	ok      int64 // correct operations, every phase
	failed  int64 // wrong or failed operations, every phase
	samples []string
	lastEnd time.Time // end of the last measured operation
}

func (t *tally) fail(err error) {
	t.failed++
	t.addSample(clip(err.Error(), 300))
}

// runWorkload prepares and runs one workload. Setup or a first operation
// that the server refuses (4xx, 501, no LiveQuery socket) makes the result
// "not supported"; anything else wrong counts as errors.
func (e *env) runWorkload(wl *workload, index int, o runOpts) result {
	res := result{Workload: wl.name, About: wl.about}
	p, err := wl.setup(e)
	if err != nil {
		return failedResult(res, err)
	}
	newWorker := func(id int) *worker {
		return &worker{id: id, c: newClient(e.t, e.hc), rng: rand.New(rand.NewPCG(e.d.seed, uint64(index)<<32|uint64(id)))}
	}

	// The probe: one worker, one operation.
	probe := newWorker(0)
	if p.initWorker != nil {
		if err := p.initWorker(probe); err != nil {
			return failedResult(res, err)
		}
	}
	var probeTally tally
	if _, err := p.op(probe); err != nil {
		var se *statusError
		if errors.Is(err, errUnsupported) || errors.As(err, &se) && se.refusal() {
			if p.closeWorker != nil {
				p.closeWorker(probe)
			}
			return notSupported(res, err)
		}
		probeTally.fail(err)
	} else {
		probeTally.ok++
	}

	var phase atomic.Int32
	var measured atomic.Int64
	tallies := make([]tally, o.concurrency)
	var wg sync.WaitGroup
	for id := range o.concurrency {
		w := probe
		if id > 0 {
			w = newWorker(id)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Label the generator's goroutines so that a CPU profile of an
			// in-process server can be cut to the server's side.
			pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("side", "load")))
			t := &tallies[id]
			if id > 0 && p.initWorker != nil {
				if err := p.initWorker(w); err != nil {
					t.fail(err)
					return
				}
			}
			if p.closeWorker != nil {
				defer p.closeWorker(w)
			}
			for {
				ph := phase.Load()
				if ph == phaseStop {
					return
				}
				if ph == phaseMeasure && measured.Add(1) > o.maxOps {
					return
				}
				lat, err := p.op(w)
				if err != nil {
					t.fail(err)
				} else {
					t.ok++
					if ph == phaseMeasure {
						t.lat = append(t.lat, lat)
					}
				}
				if ph == phaseMeasure {
					t.lastEnd = time.Now()
				}
			}
		}()
	}

	time.Sleep(o.warmup)
	start := time.Now()
	var stopMeasure func()
	if o.measure != nil {
		stopMeasure = o.measure(wl.name)
	}
	phase.Store(phaseMeasure)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-time.After(o.duration):
	case <-done: // every worker stopped: maxOps reached, or none could start
	}
	phase.Store(phaseStop)
	<-done
	if stopMeasure != nil {
		stopMeasure()
	}
	all := probeTally
	end := start
	for i := range tallies {
		t := &tallies[i]
		if t.lastEnd.After(end) {
			end = t.lastEnd
		}
		all.lat = append(all.lat, t.lat...)
		all.ok += t.ok
		all.failed += t.failed
		for _, s := range t.samples {
			all.addSample(s)
		}
	}
	if p.after != nil {
		if err := p.after(e, all.ok, all.failed); err != nil {
			all.fail(err)
		}
	}
	return finish(res, &all, end.Sub(start))
}

func (t *tally) addSample(s string) {
	for _, have := range t.samples {
		if have == s {
			return
		}
	}
	if len(t.samples) < maxErrorSamples {
		t.samples = append(t.samples, s)
	}
}

// finish turns a merged tally into a result.
func finish(res result, t *tally, elapsed time.Duration) result {
	s := summarize(t.lat)
	res.Ops = int64(s.Count)
	res.Errors = t.failed
	res.ErrorSamples = t.samples
	res.Seconds = elapsed.Seconds()
	if elapsed > 0 {
		res.OpsPerSec = float64(s.Count) / elapsed.Seconds()
	}
	res.LatencyMs = latencyMs{Mean: ms(s.Mean), P50: ms(s.P50), P90: ms(s.P90), P99: ms(s.P99), Max: ms(s.Max)}
	res.Status = statusOK
	if t.failed > 0 {
		res.Status = statusErrors
	}
	return res
}

func notSupported(res result, err error) result {
	res.Status = statusNotSupported
	res.Reason = clip(strings.TrimPrefix(err.Error(), errUnsupported.Error()+": "), 300)
	return res
}

// failedResult is a workload that could not even start: not supported if
// the server refused, otherwise one error.
func failedResult(res result, err error) result {
	var se *statusError
	if errors.Is(err, errUnsupported) || errors.As(err, &se) && se.refusal() {
		return notSupported(res, err)
	}
	res.Status = statusErrors
	res.Errors = 1
	res.ErrorSamples = []string{clip(err.Error(), 300)}
	return res
}
