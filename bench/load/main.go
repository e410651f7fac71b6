// Command load is Quarry's load generator. It seeds deterministic data
// through the REST API of any Parse-compatible server, runs named workloads
// against it in a closed loop and reports ops/s, latency percentiles and
// errors as a table and as JSON. Every reply is checked against a model of
// the seeded data: a wrong status or a wrong answer is an error, never a
// fast success. It sends traffic to loopback addresses only unless told
// otherwise. See bench/README.md, "Load suite".
//
//	load [flags]                     run workloads against -url (or -inprocess)
//	load ceiling-server -listen A    serve the fixed reply the ceiling measures
//	load setup                       print the options a server needs (indexes, LiveQuery)
//	load wait -url U                 wait until U/health answers
//	load compare -out F A.json B.json [-ceiling C.json]
//	                                 write the side-by-side table (bench/RESULTS.md)
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"
)

func main() {
	args := os.Args[1:]
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "run":
		err = runCmd(args)
	case "ceiling-server":
		err = ceilingCmd(args)
	case "setup":
		err = setupCmd(args)
	case "wait":
		err = waitCmd(args)
	case "compare":
		err = compareCmd(args)
	default:
		err = fmt.Errorf("unknown command %q (run, ceiling-server, setup, wait, compare)", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if errors.Is(err, errWorkloadErrors) {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(3)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// errWorkloadErrors: the run finished but some reply was wrong.
var errWorkloadErrors = errors.New("some workloads had errors")

// Bounds on what one run may ask for.
const (
	maxSize        = 1_000_000
	maxConcurrency = 1024
	maxDuration    = 10 * time.Minute
)

type runFlags struct {
	url, appID, masterKey, prefix, liveURL string
	concurrency                            int
	duration, warmup, timeout              time.Duration
	maxOps                                 int64
	size                                   int
	seed                                   uint64
	workloads, jsonOut, label, classPrefix string
	ceiling, inprocess, allowRemote, list  bool
	profile                                string
}

func parseRunFlags(args []string) (*runFlags, error) {
	f := &runFlags{}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.StringVar(&f.url, "url", "http://127.0.0.1:1337/parse", "REST URL of the server, mount path included")
	fs.StringVar(&f.appID, "app-id", "quarry-bench", "application id")
	fs.StringVar(&f.masterKey, "master-key", "quarry-bench-master", "master key (every request sends it)")
	fs.StringVar(&f.prefix, "header-prefix", "X-Parse-", "prefix of the credential headers (Quarry also takes X-Svc-)")
	fs.StringVar(&f.liveURL, "livequery-url", "", "LiveQuery WebSocket URL (default: -url with ws://)")
	fs.IntVar(&f.concurrency, "concurrency", 16, "closed-loop clients, one request in flight each")
	fs.DurationVar(&f.duration, "duration", 5*time.Second, "measured time per workload")
	fs.DurationVar(&f.warmup, "warmup", time.Second, "unmeasured (but checked) time before each workload's measure")
	fs.Int64Var(&f.maxOps, "max-ops", 200_000, "measured operations per workload at most")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.IntVar(&f.size, "size", 10_000, "seeded items (owners, categories and geo radii scale with it)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the dataset and of every worker's choices")
	fs.StringVar(&f.workloads, "workloads", "all", "comma-separated workloads to run (see -list), or all")
	fs.StringVar(&f.jsonOut, "json", "", "write the JSON report to this file")
	fs.StringVar(&f.label, "label", "", "name of the server in reports (default: what /serverInfo says, or the URL)")
	fs.StringVar(&f.classPrefix, "class-prefix", "Bench", "prefix of the seeded classes")
	fs.BoolVar(&f.ceiling, "ceiling", false, "also measure a trivial fasthttp server (a child process) and report each workload as a fraction of it")
	fs.BoolVar(&f.inprocess, "inprocess", false, "start Quarry inside this process (temporary data) instead of using -url")
	fs.StringVar(&f.profile, "profile", "", "with -inprocess: write CPU and allocation profiles of each workload into this directory")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a -url that is not a loopback address")
	fs.BoolVar(&f.list, "list", false, "list the workloads and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case f.size < 1 || f.size > maxSize:
		return nil, fmt.Errorf("-size must be in [1, %d]", maxSize)
	case f.concurrency < 1 || f.concurrency > maxConcurrency:
		return nil, fmt.Errorf("-concurrency must be in [1, %d]", maxConcurrency)
	case f.duration <= 0 || f.duration > maxDuration || f.warmup < 0 || f.warmup > maxDuration:
		return nil, fmt.Errorf("-duration must be in (0, %s] and -warmup in [0, %s]", maxDuration, maxDuration)
	case f.maxOps < 1:
		return nil, fmt.Errorf("-max-ops must be positive")
	case f.profile != "" && !f.inprocess:
		return nil, fmt.Errorf("-profile needs -inprocess (profiles are of the server in this process)")
	}
	return f, nil
}

// selectWorkloads resolves -workloads.
func selectWorkloads(spec string) ([]*workload, error) {
	all := workloads()
	if spec == "all" || spec == "" {
		return all, nil
	}
	var out []*workload
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == ceilingWorkload.name {
			out = append(out, ceilingWorkload)
			continue
		}
		i := slices.IndexFunc(all, func(w *workload) bool { return w.name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown workload %q (see -list)", name)
		}
		out = append(out, all[i])
	}
	return out, nil
}

func runCmd(args []string) error {
	f, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	if f.list {
		for _, w := range append(workloads(), ceilingWorkload) {
			fmt.Printf("%-18s %s\n", w.name, w.about)
		}
		return nil
	}
	chosen, err := selectWorkloads(f.workloads)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
	d := newDataset(f.classPrefix, f.size, f.seed)

	if f.inprocess {
		dir, err := os.MkdirTemp("", "quarry-load-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		u, stop, err := startInProcess(d, dir, f.appID, f.masterKey)
		if err != nil {
			return err
		}
		defer stop()
		f.url = u
		if f.label == "" {
			f.label = "Quarry (in-process)"
		}
		if f.profile != "" {
			if err := os.MkdirAll(f.profile, 0o755); err != nil {
				return err
			}
		}
	}
	t, err := newTarget(f, f.url)
	if err != nil {
		return err
	}
	rep := &report{Label: f.label, URL: f.url, Started: time.Now().UTC(), Machine: thisMachine(), LoadAvg: []float64{loadAvg1()},
		Settings: settings{Concurrency: f.concurrency, WarmupSec: f.warmup.Seconds(), DurationSec: f.duration.Seconds(),
			MaxOps: f.maxOps, Size: f.size, Seed: f.seed}}
	e := &env{t: t, hc: newHostClient(t, f.concurrency+4), d: d, conc: f.concurrency, liveURL: f.liveURL, logf: logf}
	rep.Server = serverInfo(e)
	if rep.Label == "" {
		rep.Label = rep.Server
		if rep.Label == "" {
			rep.Label = f.url
		}
	}
	opts := runOpts{concurrency: f.concurrency, warmup: f.warmup, duration: f.duration, maxOps: f.maxOps}
	if f.profile != "" {
		opts.measure = (&profiler{dir: f.profile, logf: logf}).measure
	}

	if f.ceiling {
		c, err := runCeiling(f, d, opts, logf)
		if err != nil {
			return err
		}
		rep.Ceiling = &c
	}
	needsData := slices.ContainsFunc(chosen, func(w *workload) bool { return w != ceilingWorkload })
	if needsData {
		logf("seeding %s at %s …", d.itemClass(), f.url)
		if err := e.seed(); err != nil {
			return fmt.Errorf("seeding: %w", err)
		}
	}
	rep.Notes = e.notes
	for i, w := range chosen {
		logf("%-18s …", w.name)
		res := e.runWorkload(w, i, opts)
		if res.Status == statusNotSupported {
			logf("%-18s not supported: %s", w.name, res.Reason)
		} else {
			logf("%-18s %8.0f ops/s  p50 %.2f ms  p99 %.2f ms  %d errors", w.name, res.OpsPerSec, res.LatencyMs.P50, res.LatencyMs.P99, res.Errors)
		}
		rep.Results = append(rep.Results, res)
	}
	if rep.Ceiling != nil {
		rep.applyCeiling(*rep.Ceiling)
	}
	rep.LoadAvg = append(rep.LoadAvg, loadAvg1())
	rep.writeTable(os.Stdout)
	if f.jsonOut != "" {
		if err := rep.writeJSON(f.jsonOut); err != nil {
			return err
		}
	}
	for _, r := range rep.Results {
		if r.Errors > 0 {
			return errWorkloadErrors
		}
	}
	return nil
}

func newTarget(f *runFlags, rawURL string) (*target, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bad -url %q: want http://host:port/mount", rawURL)
	}
	if !f.allowRemote {
		if err := checkLoopback(u); err != nil {
			return nil, err
		}
	}
	return &target{base: u, appID: f.appID, masterKey: f.masterKey, prefix: f.prefix, timeout: f.timeout}, nil
}

// runCeiling measures the ceiling server (a child process) with the same
// generator settings.
func runCeiling(f *runFlags, d *dataset, opts runOpts, logf func(string, ...any)) (result, error) {
	u, stop, err := startCeiling()
	if err != nil {
		return result{}, err
	}
	defer stop()
	t, err := newTarget(f, u)
	if err != nil {
		return result{}, err
	}
	e := &env{t: t, hc: newHostClient(t, f.concurrency+4), d: d, conc: f.concurrency, logf: logf}
	opts.measure = nil
	logf("%-18s …", ceilingWorkload.name)
	res := e.runWorkload(ceilingWorkload, 0, opts)
	logf("%-18s %8.0f ops/s  p50 %.2f ms  p99 %.2f ms  %d errors", res.Workload, res.OpsPerSec, res.LatencyMs.P50, res.LatencyMs.P99, res.Errors)
	return res, nil
}

// serverInfo asks GET /serverInfo (Parse Server's, master key) for a
// version; empty when the server has none.
func serverInfo(e *env) string {
	c := newClient(e.t, e.hc)
	status, out, err := c.do("GET", e.t.uri("/serverInfo", nil), nil)
	if err != nil || status != fasthttp.StatusOK {
		return ""
	}
	if v := gjson.GetBytes(out, "parseServerVersion").String(); v != "" {
		return "Parse Server " + v
	}
	return ""
}

func ceilingCmd(args []string) error {
	fs := flag.NewFlagSet("ceiling-server", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return serveCeiling(*listen)
}

func setupCmd(args []string) error {
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	prefix := fs.String("class-prefix", "Bench", "prefix of the seeded classes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d := newDataset(*prefix, 1, 1)
	a := serverArgs(d)
	fmt.Printf("indexes=%s\nliveQuery=%s\nliveClass=%s\n", a[1], a[3], d.liveClass())
	return nil
}

func waitCmd(args []string) error {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	u := fs.String("url", "http://127.0.0.1:1337/parse", "REST URL of the server")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	allowRemote := fs.Bool("allow-remote", false, "allow a -url that is not a loopback address")
	pid := fs.Int("pid", 0, "give up as soon as this process (the server) has exited")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t, err := newTarget(&runFlags{allowRemote: *allowRemote}, *u)
	if err != nil {
		return err
	}
	t.timeout = 2 * time.Second
	c := newClient(t, newHostClient(t, 1))
	deadline := time.Now().Add(*timeout)
	for {
		status, _, err := c.do("GET", t.uri("/health", nil), nil)
		if err == nil && status == fasthttp.StatusOK {
			return nil
		}
		if *pid > 0 && exited(*pid) {
			return fmt.Errorf("the server (pid %d) exited before %s/health answered", *pid, *u)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s/health did not answer 200 within %s (last: %d %v)", *u, *timeout, status, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// exited reports whether process pid is gone or a zombie waiting for its
// parent to reap it.
func exited(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return errors.Is(err, syscall.ESRCH)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && strings.HasPrefix(rest, "Z")
}
