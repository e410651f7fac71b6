// Command livescale measures LiveQuery fan-out at scale across instances:
// it starts N quarry processes on one fresh PostgreSQL database (all
// following its change log), holds many WebSocket connections to them from
// this process, spreads many subscriptions over those connections (a mix
// of equality, range, geo-circle and live-join shapes, each sized so a
// write matches about two of each), then creates objects at a steady rate
// through the instances and reports events/s, p50/p99 from commit to
// delivery, server CPU per event, heap per subscription and per
// connection, and lost events (every write's expected deliveries are
// known, so a missing event is counted). It talks to 127.0.0.1 only, and
// drops its database and stops its processes (by PID) at the end. See
// bench/README.md, "LiveQuery at scale (bench/livescale)".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// cleanups run once, at the end or on SIGINT/SIGTERM: the instances are
// stopped by PID and the database dropped even when the run is cut short.
var cleanups struct {
	sync.Mutex
	fns []func()
}

func atExit(fn func()) {
	cleanups.Lock()
	cleanups.fns = append(cleanups.fns, fn)
	cleanups.Unlock()
}

func runCleanups() {
	cleanups.Lock()
	fns := cleanups.fns
	cleanups.fns = nil
	cleanups.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

const (
	appID     = "livescale"
	masterKey = "livescale-master"
)

type options struct {
	bin, pg     string
	instances   int
	conns, subs int
	rate        int
	duration    time.Duration
	joinShare   float64
	writers     int
	keepLogs    bool
	profile     string
}

func main() {
	o := &options{}
	fs := flag.NewFlagSet("livescale", flag.ContinueOnError)
	fs.StringVar(&o.bin, "bin", "", "quarry binary (required)")
	fs.StringVar(&o.pg, "pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "PostgreSQL admin URI (a database is created and dropped on its server)")
	fs.IntVar(&o.instances, "instances", 3, "quarry processes sharing the database")
	fs.IntVar(&o.conns, "conns", 5000, "WebSocket connections held by this process, spread evenly over the instances")
	fs.IntVar(&o.subs, "subs", 100_000, "subscriptions in all, spread evenly over the connections")
	fs.Float64Var(&o.joinShare, "join", 0.1, "share of the subscriptions that are live joins ($inQuery on Owner); the rest split evenly into equality, range and geo-circle")
	fs.IntVar(&o.rate, "rate", 1000, "creates per second, spread over the instances")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "measured time of the paced writes")
	fs.IntVar(&o.writers, "writers", 64, "concurrent HTTP writers (the pace is set by -rate)")
	fs.BoolVar(&o.keepLogs, "keep-logs", false, "keep the instances' log directory")
	fs.StringVar(&o.profile, "profile", "", "write the first instance's CPU profile of the write phase to this file")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: livescale -bin QUARRY [flags]

Starts -instances quarry processes on a new PostgreSQL database, opens
-conns WebSocket connections to them from this process (raising its
file-descriptor limit, which the instances inherit), subscribes -subs
queries (equality on k, a range of v, a geo circle around loc, and
live joins owner $inQuery Owner.tier), then creates Items at -rate per
second for -duration and prints: events/s, p50/p99/max from commit
(the event's createdAt, ms resolution) and from the write's send to
delivery, server CPU per event, heap bytes per connection and per
subscription (from each instance's heap after a collection), and lost
or duplicated events. Nonzero exit when an event was lost.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if o.bin == "" || o.instances < 1 || o.conns < o.instances || o.subs < o.conns || o.rate < 1 {
		fmt.Fprintln(os.Stderr, "livescale: -bin is required; need instances ≥ 1, conns ≥ instances, subs ≥ conns, rate ≥ 1 (see -help)")
		os.Exit(2)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "livescale: interrupted: stopping the instances and dropping the database")
		runCleanups()
		os.Exit(1)
	}()
	lost, err := run(o)
	runCleanups()
	if err != nil {
		fmt.Fprintln(os.Stderr, "livescale:", err)
		os.Exit(1)
	}
	if lost > 0 {
		os.Exit(3)
	}
}

// raiseFileLimit lifts RLIMIT_NOFILE to at least n (the hard limit too,
// which needs privilege); the instances started afterwards inherit it.
func raiseFileLimit(n uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	if l.Cur >= n {
		return nil
	}
	want := syscall.Rlimit{Cur: n, Max: max(n, l.Max)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		return fmt.Errorf("raising the open-file limit to %d (hard limit %d): %w", n, l.Max, err)
	}
	return nil
}

func run(o *options) (lost int64, err error) {
	if err := raiseFileLimit(uint64(o.conns) + 1024); err != nil {
		return 0, err
	}
	ctx := context.Background()
	db, err := createDatabase(ctx, o.pg)
	if err != nil {
		return 0, err
	}
	atExit(func() {
		if derr := db.Drop(); derr != nil {
			fmt.Fprintln(os.Stderr, "livescale: dropping", db.Name, ":", derr)
		}
	})
	dir, err := os.MkdirTemp("", "livescale-")
	if err != nil {
		return 0, err
	}
	if !o.keepLogs {
		atExit(func() { os.RemoveAll(dir) })
	} else {
		fmt.Println("logs in", dir)
	}
	perInstance := o.subs/o.instances + 1
	perConn := o.subs/o.conns + 1
	extra := []string{"--liveQuery.classNames", "Item,Owner", "--indexes", "Owner.tier",
		"--liveQueryServerOptions.maxSubscriptions", fmt.Sprint(perInstance + 1000),
		"--liveQueryServerOptions.maxSubscriptionsPerClient", fmt.Sprint(perConn + 10)}
	var ins []*instance
	for i := range o.instances {
		in, err := startInstance(o.bin, dir, i, db, extra)
		if err != nil {
			return 0, err
		}
		atExit(in.Stop)
		ins = append(ins, in)
		// One at a time: the first creates the schema tables.
		if err := in.waitHealthy(2 * time.Minute); err != nil {
			return 0, err
		}
	}
	return measure(o, ins)
}
