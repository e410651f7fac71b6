// Command bigdata measures Quarry on a large embedded data file: it seeds
// N small objects straight through the store (no HTTP, large commits),
// then starts a quarry binary on the file and reports the restart time
// (start to /health 200), the server's settled resident size against the
// file's size, and ops/s, p50/p99 latency and server CPU per operation of
// four read workloads (get, equality, range+order, count), each reply
// checked. It talks to 127.0.0.1 only. See bench/README.md, "Large data
// files (bench/bigdata)".
//
//	bigdata -objects 1000000 -file /tmp/big.db -bin /tmp/quarry
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

type options struct {
	objects     int
	file, bin   string
	duration    time.Duration
	concurrency int
	restarts    int
	keep        bool
	heapProfile string
	seedOnly    bool
	extra       string
}

func main() {
	o := &options{}
	fs := flag.NewFlagSet("bigdata", flag.ContinueOnError)
	fs.IntVar(&o.objects, "objects", 1_000_000, "objects in the class Item (seeded when -file is missing)")
	fs.StringVar(&o.file, "file", "", "data file: seeded when missing, reused when present (required)")
	fs.StringVar(&o.bin, "bin", "", "quarry binary to start on the file (required unless -seed-only)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time per read workload")
	fs.IntVar(&o.concurrency, "concurrency", 16, "closed-loop clients, one request in flight each")
	fs.IntVar(&o.restarts, "restarts", 2, "times the server is started on the file (restart time each; workloads on the last)")
	fs.BoolVar(&o.keep, "keep", false, "keep the data file afterwards (default: delete it, and its files directory)")
	fs.StringVar(&o.heapProfile, "heap-profile", "", "write the server's heap profile (after the workloads) to this file")
	fs.BoolVar(&o.seedOnly, "seed-only", false, "seed the file and exit")
	fs.StringVar(&o.extra, "server-args", "", "extra arguments for the server, space-separated (e.g. --gcHeadroomPercent 10)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: bigdata -objects N -file F -bin QUARRY [flags]

Seeds N objects {n, tag (1,000 values), cat (50 values), loc GeoPoint,
distinct timestamps} of about 300 bytes each into F through the store,
starts QUARRY on F with indexes on Item.n, Item.tag and Item.cat (and the
geo index), and prints: restart seconds, settled RSS and RSS / file size,
then for get, query-equal (tag, limit 20), query-range-order (1,000 n
values, order n, limit 20) and count (cat): ops/s, p50/p99 ms and server
CPU microseconds per operation. F is deleted afterwards unless -keep.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bigdata:", err)
		os.Exit(1)
	}
}

func run(o *options) error {
	if o.file == "" || (o.bin == "" && !o.seedOnly) {
		return errors.New("-file and -bin are required (see -help)")
	}
	if _, err := os.Stat(o.file); err != nil {
		start := time.Now()
		if err := seed(o.file, o.objects); err != nil {
			return fmt.Errorf("seeding: %w", err)
		}
		fmt.Printf("seeded %d objects in %.1f s\n", o.objects, time.Since(start).Seconds())
	}
	if !o.keep && !o.seedOnly {
		defer func() {
			os.Remove(o.file)
			os.RemoveAll(o.file + ".files")
			os.Remove(o.file + ".lock")
		}()
	}
	if o.seedOnly {
		return nil
	}
	return measure(o)
}
