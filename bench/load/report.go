package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// result is one workload's outcome.
type result struct {
	Workload string `json:"workload"`
	About    string `json:"about,omitempty"`
	// Status is "ok", "errors" (at least one wrong or failed operation) or
	// "not supported" (the server refused the capability; Reason says how).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Ops counts the correct operations of the measured phase; OpsPerSec
	// and the latencies are theirs alone.
	Ops       int64     `json:"ops"`
	Seconds   float64   `json:"seconds"`
	OpsPerSec float64   `json:"opsPerSec"`
	LatencyMs latencyMs `json:"latencyMs"`
	// Errors counts wrong or failed operations in every phase (warm-up,
	// measure and the checks after the run).
	Errors       int64    `json:"errors"`
	ErrorSamples []string `json:"errorSamples,omitempty"`
	// OfCeiling is OpsPerSec over the ceiling's, when a ceiling was run.
	OfCeiling float64 `json:"ofCeiling,omitempty"`
}

type latencyMs struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// report is the JSON document of one run against one server.
type report struct {
	Label    string    `json:"label"`
	URL      string    `json:"url"`
	Server   string    `json:"server,omitempty"` // what /serverInfo says, if anything
	Started  time.Time `json:"started"`
	Settings settings  `json:"settings"`
	Machine  machine   `json:"machine"`
	Notes    []string  `json:"notes,omitempty"`
	// LoadAvg is the machine's one-minute load average when the run started
	// and when it ended: other work on the machine skews every number.
	LoadAvg []float64 `json:"loadAvg,omitempty"`
	Ceiling *result   `json:"ceiling,omitempty"`
	Results []result  `json:"results"`
}

type settings struct {
	Concurrency int     `json:"concurrency"`
	WarmupSec   float64 `json:"warmupSeconds"`
	DurationSec float64 `json:"durationSeconds"`
	MaxOps      int64   `json:"maxOps"`
	Size        int     `json:"size"`
	Seed        uint64  `json:"seed"`
}

type machine struct {
	CPU       string  `json:"cpu"`
	Cores     int     `json:"cores"`
	MemoryGiB float64 `json:"memoryGiB"`
	Kernel    string  `json:"kernel,omitempty"`
	Go        string  `json:"go"`
}

// thisMachine reads what Linux says about the machine; elsewhere the
// fields it cannot read stay empty.
func thisMachine() machine {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		for _, line := range strings.Split(string(b), "\n") {
			if _, err := fmt.Sscanf(line, "MemTotal: %f kB", &kb); err == nil {
				m.MemoryGiB = float64(int(kb/(1<<20)*10+0.5)) / 10
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return m
}

// loadAvg1 is the one-minute load average (0 where Linux does not say).
func loadAvg1() float64 {
	var v float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscanf(string(b), "%f", &v)
	}
	return v
}

func (r *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readReport(path string) (*report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// applyCeiling sets every result's fraction of the ceiling.
func (r *report) applyCeiling(c result) {
	r.Ceiling = &c
	for i := range r.Results {
		if c.OpsPerSec > 0 && r.Results[i].Status != statusNotSupported {
			r.Results[i].OfCeiling = r.Results[i].OpsPerSec / c.OpsPerSec
		}
	}
}

// writeTable prints the results for a terminal.
func (r *report) writeTable(out io.Writer) {
	name := r.Label
	if name != r.URL {
		name += "  " + r.URL
	}
	fmt.Fprintf(out, "\n%s  (concurrency %d, %gs per workload after %gs warm-up, %d objects)\n",
		name, r.Settings.Concurrency, r.Settings.DurationSec, r.Settings.WarmupSec, r.Settings.Size)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tops/s\tp50 ms\tp90 ms\tp99 ms\terrors\tof ceiling\t")
	rows := r.Results
	if r.Ceiling != nil {
		rows = append([]result{*r.Ceiling}, rows...)
	}
	var notes []string
	for _, x := range rows {
		if x.Status == statusNotSupported {
			fmt.Fprintf(tw, "%s\tnot supported\t\t\t\t\t\t\n", x.Workload)
			notes = append(notes, x.Workload+": "+x.Reason)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t%d\t%s\t\n", x.Workload, x.OpsPerSec,
			x.LatencyMs.P50, x.LatencyMs.P90, x.LatencyMs.P99, x.Errors, percent(x.OfCeiling))
		for _, s := range x.ErrorSamples {
			notes = append(notes, x.Workload+" error: "+s)
		}
	}
	tw.Flush()
	for _, n := range append(r.Notes, notes...) {
		fmt.Fprintln(out, "  "+n)
	}
}

func percent(f float64) string {
	if f == 0 {
		return ""
	}
	if f < 0.01 {
		return fmt.Sprintf("%.2f%%", f*100)
	}
	return fmt.Sprintf("%.1f%%", f*100)
}
