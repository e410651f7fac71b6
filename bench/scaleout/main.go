// Command scaleout measures Quarry on one PostgreSQL database with 1, 2
// and 3 instances (or any list): for each count it creates a database of
// its own, starts that many quarry processes on it, seeds items, drives a
// mixed load spread over the instances, and prints the throughput and the
// replication delay (a write answered by one instance until another
// serves it, p50 and p99). It stops the processes it started by their PID
// and drops the database afterwards.
//
//	go run ./bench/scaleout -instances 1,2,3 -duration 10s
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
		gets     = flag.Bool("gets", false, "only gets by id (the cost of a read by id catching up with the others' commits)")
	)
	flag.Parse()
	getsOnly = *gets
	if err := measure(*counts, *duration, *workers, *items, *admin, *redisURL, *bin); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}

func measure(counts string, d time.Duration, workers, items int, admin, redisURL, bin string) error {
	dir, err := os.MkdirTemp("", "quarry-scaleout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		bin = filepath.Join(dir, "quarry")
		build := exec.Command("go", "build", "-o", bin, "./cmd/quarry")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building quarry (run from the repository root): %w", err)
		}
	}
	var extra []string
	if redisURL != "" {
		extra = []string{"--liveQuery.classNames", "Item", "--liveQuery.redisURL", redisURL}
	}
	fmt.Printf("%d closed-loop clients, %s per run, %d seeded items; mix: 70%% get by id, 10%% equality query, 10%% create, 10%% Increment\n",
		workers, d, items)
	fmt.Printf("%-9s %8s %8s %8s %8s %9s %9s %6s %12s %12s %6s  %s\n", "instances", "ops/s", "writes/s", "p50 ms", "p99 ms",
		"write p50", "write p99", "errors", "delay p50 ms", "delay p99 ms", "probes", "load average before -> after")
	for _, s := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-instances: %q is not a count", s)
		}
		if err := once(n, d, workers, items, admin, bin, dir, extra); err != nil {
			return err
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

// once measures n instances on a fresh database.
func once(n int, d time.Duration, workers, items int, admin, bin, dir string, extra []string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	db, err := createDatabase(ctx, admin)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		if dropErr := db.drop(); dropErr != nil && err == nil {
			err = fmt.Errorf("dropping %s: %w", db.name, dropErr)
		}
	}()
	var instances []*instance
	defer func() {
		for _, in := range instances {
			in.stop()
		}
	}()
	c := newClient(workers)
	for i := range n {
		in, err := startInstance(bin, dir, i, db, extra)
		if err != nil {
			return err
		}
		instances = append(instances, in)
		// One at a time: the first creates the tables.
		if err := in.waitHealthy(c.http, 60*time.Second); err != nil {
			return err
		}
	}
	ids, err := seed(c, instances, items)
	if err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	loadBefore := loadAverage()
	res := run(c, instances, ids, workers, d)
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
	return nil
}
