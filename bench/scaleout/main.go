// Command scaleout measures Quarry on one PostgreSQL database with 1, 2
// and 3 instances (or any list): for each count it creates a database of
// its own, starts that many quarry processes on it, seeds items, drives a
// mixed load spread over the instances, and prints the throughput and the
// replication delay (a write answered by one instance until another
// serves it, p50 and p99). It stops the processes it started by their PID
// and drops the database afterwards.
//
// -workloads names single-operation loads to run one after the other
// instead of the mix (get, query-equal, create, update-inc, same-object:
// see workloads.go); -rate R adds, with two instances or more, a paced
// load of R creates per second during which the probe measures the follow
// lag; -parse DIR runs the same on Parse Server (the npm project in DIR,
// e.g. bench/compare/parse-server after `npm ci` there) on the same
// PostgreSQL server, N Parse Server processes on one database.
//
//	go run ./bench/scaleout -instances 1,2,3 -duration 10s
//	go run ./bench/scaleout -workloads get,query-equal,create,update-inc,same-object -rate 500 -duration 5s
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	appID     = "scaleout"
	masterKey = "scaleout-master"
)

func main() {
	var (
		counts   = flag.String("instances", "1,2,3", "instance counts to measure, comma-separated")
		duration = flag.Duration("duration", 10*time.Second, "measured load per instance count")
		workers  = flag.Int("concurrency", 16, "closed-loop clients, spread round-robin over the instances")
		items    = flag.Int("items", 1000, "seeded items")
		admin    = flag.String("pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL admin URI: each run's database is made and dropped on its server")
		redisURL = flag.String("redis", "", "a Redis URL: the instances publish LiveQuery changes of class Item there (liveQuery.redisURL), as a scaled-out deployment does")
		bin      = flag.String("bin", "", "a quarry binary (default: built from this tree)")
		loads    = flag.String("workloads", "mix", "mix, or single-operation workloads run one after the other: "+strings.Join(workloadOrder, ","))
		rate     = flag.Int("rate", 0, "with 2 instances or more: also a paced load of this many creates per second, measuring the follow lag")
		parse    = flag.String("parse", "", "a Parse Server npm project (node_modules installed): measure it too, on the same PostgreSQL server")
		onlyPS   = flag.Bool("parse-only", false, "with -parse: measure Parse Server alone")
		gets     = flag.Bool("gets", false, "only gets by id (the cost of a read by id catching up with the others' commits)")
	)
	flag.Parse()
	getsOnly = *gets
	var names []string
	if *loads != "mix" {
		for _, w := range strings.Split(*loads, ",") {
			if workloads[strings.TrimSpace(w)] == nil {
				fmt.Fprintf(os.Stderr, "scaleout: -workloads: %q is none of mix, %s\n", w, strings.Join(workloadOrder, ", "))
				os.Exit(2)
			}
			names = append(names, strings.TrimSpace(w))
		}
	}
	if *parse != "" && names == nil {
		fmt.Fprintln(os.Stderr, "scaleout: -parse needs -workloads (the mix's table has no server column)")
		os.Exit(2)
	}
	p := plan{counts: *counts, d: *duration, workers: *workers, items: *items, admin: *admin, bin: *bin, workloads: names, rate: *rate, parse: *parse, parseOnly: *onlyPS}
	if err := p.measure(*redisURL); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}

// plan is one invocation's settings.
type plan struct {
	counts         string
	d              time.Duration
	workers, items int
	admin, bin     string
	workloads      []string // nil: the mix
	rate           int
	parse          string
	parseOnly      bool
	dir            string
	extra          []string // quarry's extra flags
}

func (p plan) measure(redisURL string) error {
	dir, err := os.MkdirTemp("", "quarry-scaleout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p.dir = dir
	if p.bin == "" {
		p.bin = filepath.Join(dir, "quarry")
		build := exec.Command("go", "build", "-o", p.bin, "./cmd/quarry")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building quarry (run from the repository root): %w", err)
		}
	}
	if redisURL != "" {
		p.extra = []string{"--liveQuery.classNames", "Item", "--liveQuery.redisURL", redisURL}
	}
	var counts []int
	for _, s := range strings.Split(p.counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-instances: %q is not a count", s)
		}
		counts = append(counts, n)
	}
	if p.workloads == nil {
		fmt.Printf("%d closed-loop clients, %s per run, %d seeded items; mix: 70%% get by id, 10%% equality query, 10%% create, 10%% Increment\n",
			p.workers, p.d, p.items)
		fmt.Printf("%-9s %8s %8s %8s %8s %9s %9s %6s %12s %12s %6s  %s\n", "instances", "ops/s", "writes/s", "p50 ms", "p99 ms",
			"write p50", "write p99", "errors", "delay p50 ms", "delay p99 ms", "probes", "load average before -> after")
	} else {
		fmt.Printf("%d closed-loop clients spread round-robin over the instances, %s per workload, %d seeded items\n", p.workers, p.d, p.items)
		fmt.Printf("%-13s %-9s %-12s %8s %8s %8s %6s %9s %9s  %s\n", "server", "instances", "workload", "ops/s", "p50 ms", "p99 ms", "errors", "srv µs/op", "pg µs/op", "load average before -> after")
	}
	servers := []string{"quarry"}
	if p.parse != "" && p.parseOnly {
		servers = []string{"parse-server"}
	} else if p.parse != "" {
		servers = append(servers, "parse-server")
	}
	for _, server := range servers {
		for _, n := range counts {
			if err := p.once(server, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadAverage is the one-minute load average (Linux), or "?": on a
// shared machine it says how much else was running.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// once measures n instances of server on a fresh database.
func (p plan) once(server string, n int) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	db, err := createDatabase(ctx, p.admin)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		if dropErr := db.Drop(); dropErr != nil && err == nil {
			err = fmt.Errorf("dropping %s: %w", db.Name, dropErr)
		}
	}()
	var instances []*instance
	defer func() {
		for _, in := range instances {
			in.Stop()
		}
	}()
	c := newClient(p.workers)
	for i := range n {
		var in *instance
		if server == "quarry" {
			in, err = startInstance(p.bin, p.dir, i, db, p.extra)
		} else {
			in, err = startParse(p.parse, p.dir, i, db)
		}
		if err != nil {
			return err
		}
		instances = append(instances, in)
		// One at a time: the first creates the tables.
		if err := in.WaitHealthy(c.http, 120*time.Second); err != nil {
			return err
		}
	}
	ids, err := seed(c, instances, p.items)
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	if p.workloads == nil {
		p.mix(c, instances, ids)
	}
	probe := cpuProbe{admin: p.admin, db: db.Name, servers: instances}
	for _, name := range p.workloads {
		loadBefore := loadAverage()
		cpuBefore := probe.sample()
		res := runOne(c, instances, ids, p.workers, p.d, workloads[name])
		srvCPU, pgCPU := probe.sample().since(cpuBefore)
		if res.errors > 0 {
			fmt.Fprintf(os.Stderr, "%s, %d instances, %s: %d errors, the first: %v\n", server, n, name, res.errors, res.firstErr)
		}
		p50, p99 := summary(res.latencies)
		fmt.Printf("%-13s %-9d %-12s %8.0f %8.2f %8.2f %6d %9.0f %9.0f  %s -> %s\n", server, n, name, float64(res.ops)/res.elapsed.Seconds(), p50, p99, res.errors,
			perOp(srvCPU, res.ops), perOp(pgCPU, res.ops), loadBefore, loadAverage())
	}
	if p.rate > 0 && n > 1 {
		loadBefore := loadAverage()
		res := paced(c, instances, p.rate, p.d)
		d50, d99 := summary(res.delays)
		l50, l99 := summary(res.delaysAtLeast)
		fmt.Printf("%-13s %-9d paced %d creates/s: %.0f writes/s answered, %d errors; follow lag p50 %.2f ms, p99 %.2f ms (at least %.2f, %.2f) over %d probes (%d not seen in %s)  %s -> %s\n",
			server, n, p.rate, float64(res.writes)/res.elapsed.Seconds(), res.errors, d50, d99, l50, l99, len(res.delays), res.probeMisses, probeTimeout, loadBefore, loadAverage())
	}
	return nil
}

// mix runs the mixed load and prints its row.
func (p plan) mix(c *client, instances []*instance, ids []string) {
	n := len(instances)
	loadBefore := loadAverage()
	res := run(c, instances, ids, p.workers, p.d)
	if res.errors > 0 {
		fmt.Fprintf(os.Stderr, "%d instances: %d errors, the first: %v\n", n, res.errors, res.firstErr)
	}
	p50, p99 := summary(res.latencies)
	w50, w99 := summary(res.writeLatencies)
	secs := res.elapsed.Seconds()
	delay := fmt.Sprintf("%12s %12s %6s", "-", "-", "-")
	if n > 1 {
		d50, d99 := summary(res.delays)
		probes := strconv.Itoa(len(res.delays))
		if res.probeMisses > 0 {
			probes += fmt.Sprintf(" (%d not seen in %s)", res.probeMisses, probeTimeout)
		}
		delay = fmt.Sprintf("%12.2f %12.2f %6s", d50, d99, probes)
	}
	fmt.Printf("%-9d %8.0f %8.0f %8.2f %8.2f %9.2f %9.2f %6d %s  %s -> %s\n", n, float64(res.ops)/secs, float64(res.writes)/secs,
		p50, p99, w50, w99, res.errors, delay, loadBefore, loadAverage())
}
