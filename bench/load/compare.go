package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, "; ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// comparison is the input of the side-by-side table.
type comparison struct {
	subject, baseline *report
	ceiling           *result
	ceilingReport     *report
	commit            string   // what was measured
	elapsed           string   // how long the whole comparison took
	info              []string // versions and setup, one line each
}

func compareCmd(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	out := fs.String("out", "bench/RESULTS.md", "markdown file to write")
	ceiling := fs.String("ceiling", "", "JSON report of a run of the ceiling workload")
	commit := fs.String("commit", "", "the commit measured, as it should be shown")
	since := fs.Int64("since", 0, "Unix time the whole comparison started (reports how long it took)")
	var info stringList
	fs.Var(&info, "info", "a line on versions or setup (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: load compare [flags] SUBJECT.json BASELINE.json (ratios are subject ÷ baseline)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return fmt.Errorf("compare takes two JSON reports")
	}
	c := &comparison{commit: *commit, info: info}
	if *since > 0 {
		c.elapsed = formatElapsed(time.Since(time.Unix(*since, 0)))
	}
	var err error
	if c.subject, err = readReport(fs.Arg(0)); err != nil {
		return err
	}
	if c.baseline, err = readReport(fs.Arg(1)); err != nil {
		return err
	}
	if *ceiling != "" {
		r, err := readReport(*ceiling)
		if err != nil {
			return err
		}
		for _, x := range r.Results {
			if x.Workload == ceilingWorkload.name {
				c.ceiling = &x
			}
		}
		c.ceilingReport = r
		if c.ceiling == nil {
			return fmt.Errorf("%s holds no ceiling result", *ceiling)
		}
		c.subject.applyCeiling(*c.ceiling)
		c.baseline.applyCeiling(*c.ceiling)
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	c.writeMarkdown(f)
	if err := f.Close(); err != nil {
		return err
	}
	c.writeMarkdown(os.Stdout)
	return nil
}

// writeMarkdown writes the comparison: where and what was measured, one
// row per workload, then what was not supported and what went wrong.
func (c *comparison) writeMarkdown(w io.Writer) {
	a, b := c.subject, c.baseline
	an, bn := shortLabel(a.Label), shortLabel(b.Label)
	fmt.Fprintf(w, "# Load comparison: %s and %s\n\n", an, bn)
	fmt.Fprintf(w, "Written by `make bench-compare` (bench/compare/run.sh); each run replaces this file. How to read it: bench/README.md, \"Load suite\".\n\n")
	if c.commit != "" {
		fmt.Fprintf(w, "- Commit measured: %s\n", c.commit)
	}
	when := a.Started.UTC().Format("2006-01-02 15:04 UTC")
	if c.elapsed != "" {
		when += "; the whole `make bench-compare` took " + c.elapsed
	}
	fmt.Fprintf(w, "- Run: %s\n", when)
	m := a.Machine
	fmt.Fprintf(w, "- Machine: %s, %d cores, %.1f GiB, %s, %s; servers, database and load generator share it\n", m.CPU, m.Cores, m.MemoryGiB, m.Kernel, m.Go)
	for _, line := range c.info {
		fmt.Fprintf(w, "- %s\n", line)
	}
	s := a.Settings
	fmt.Fprintf(w, "- Load: %d closed-loop clients on 127.0.0.1, %gs warm-up then %gs measured per workload (at most %d operations), %d seeded items (seed %d); every reply is checked against the seeded model\n",
		s.Concurrency, s.WarmupSec, s.DurationSec, s.MaxOps, s.Size, s.Seed)
	if c.ceiling != nil {
		x := c.ceiling
		fmt.Fprintf(w, "- Ceiling: a trivial fasthttp server returning %d bytes of fixed JSON answers %.0f ops/s (p50 %.2f ms, p99 %.2f ms) with the same generator: what this machine can serve at all\n",
			len(ceilingBody), x.OpsPerSec, x.LatencyMs.P50, x.LatencyMs.P99)
	}
	var loads []string
	for _, r := range []*report{c.ceilingReport, a, b} {
		if r != nil && len(r.LoadAvg) == 2 {
			loads = append(loads, fmt.Sprintf("%s %.1f → %.1f", shortLabel(r.Label), r.LoadAvg[0], r.LoadAvg[1]))
		}
	}
	if len(loads) > 0 {
		fmt.Fprintf(w, "- One-minute load average at the start and end of each run (%d cores; more than that means other work shared the machine and skews the numbers): %s\n", m.Cores, strings.Join(loads, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| workload | %s ops/s | %s ops/s | %s ÷ %s | %s p50 / p90 / p99 ms | %s p50 / p90 / p99 ms | %s of ceiling | %s of ceiling | errors %s / %s |\n",
		an, bn, an, bn, an, bn, an, bn, an, bn)
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, x := range a.Results {
		y, ok := find(b, x.Workload)
		if !ok {
			y = result{Workload: x.Workload, Status: statusNotSupported, Reason: "not run"}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |\n", x.Workload,
			opsCell(x), opsCell(y), ratioCell(x, y), latCell(x), latCell(y),
			ceilCell(x), ceilCell(y), errCell(x), errCell(y))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "A ratio is shown only when both servers answered every operation correctly. *Not supported* means the server refused the capability (a 4xx or 501 reply, or no LiveQuery socket); it is not counted as an error.")
	var notes []string
	for _, r := range []*report{a, b} {
		name := shortLabel(r.Label)
		for _, n := range r.Notes {
			notes = append(notes, name+": "+n)
		}
		for _, x := range r.Results {
			if x.Status == statusNotSupported {
				notes = append(notes, fmt.Sprintf("%s, %s not supported: %s", name, x.Workload, oneLine(x.Reason)))
			}
			for _, e := range x.ErrorSamples {
				notes = append(notes, fmt.Sprintf("%s, %s error: %s", name, x.Workload, oneLine(e)))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
	fmt.Fprintln(w, "\nWorkloads:")
	for _, x := range a.Results {
		if x.About != "" {
			fmt.Fprintf(w, "- `%s`: %s\n", x.Workload, x.About)
		}
	}
}

func find(r *report, name string) (result, bool) {
	for _, x := range r.Results {
		if x.Workload == name {
			return x, true
		}
	}
	return result{}, false
}

// shortLabel keeps the name of a label ("Parse Server 8.6.94" stays,
// "Quarry abc123 (dirty)" becomes "Quarry") for table headers.
func shortLabel(label string) string {
	if strings.HasPrefix(label, "Parse Server") {
		return "Parse Server"
	}
	if name, _, ok := strings.Cut(label, " "); ok {
		return name
	}
	return label
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

func opsCell(x result) string {
	if x.Status == statusNotSupported {
		return "not supported"
	}
	return fmt.Sprintf("%.0f", x.OpsPerSec)
}

func latCell(x result) string {
	if x.Status == statusNotSupported || x.Ops == 0 {
		return "—"
	}
	l := x.LatencyMs
	return fmt.Sprintf("%s / %s / %s", msCell(l.P50), msCell(l.P90), msCell(l.P99))
}

func msCell(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func ratioCell(x, y result) string {
	if x.Status != statusOK || y.Status != statusOK || y.OpsPerSec == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", x.OpsPerSec/y.OpsPerSec)
}

func ceilCell(x result) string {
	if x.Status == statusNotSupported || x.OfCeiling == 0 {
		return "—"
	}
	return percent(x.OfCeiling)
}

func errCell(x result) string {
	switch {
	case x.Status == statusNotSupported:
		return "—"
	case x.Errors > 0:
		return fmt.Sprintf("**%d**", x.Errors)
	}
	return "0"
}

// formatElapsed prints a duration as minutes and seconds.
func formatElapsed(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
