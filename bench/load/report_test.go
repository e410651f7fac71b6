package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sampleReport(label string, opsScale float64) *report {
	return &report{
		Label:    label,
		URL:      "http://127.0.0.1:1337/parse",
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Settings: settings{Concurrency: 16, WarmupSec: 1, DurationSec: 5, MaxOps: 1000, Size: 10000, Seed: 1},
		Machine:  machine{CPU: "Test CPU", Cores: 2, MemoryGiB: 24, Go: "go1.x"},
		Notes:    []string{"indexes: created through the schema API"},
		LoadAvg:  []float64{0.5, 1.25},
		Results: []result{
			{Workload: "get", About: "GET one", Status: statusOK, Ops: 5000, Seconds: 5, OpsPerSec: 1000 * opsScale,
				LatencyMs: latencyMs{Mean: 1, P50: 0.9, P90: 1.5, P99: 4.25, Max: 9}},
			{Workload: "login", Status: statusNotSupported, Reason: "sign-up: POST /parse/users: status 404"},
			{Workload: "count", Status: statusErrors, Ops: 10, Seconds: 5, OpsPerSec: 2 * opsScale, Errors: 3,
				ErrorSamples: []string{"count 4, want 5"}},
		},
	}
}

func TestReport_JSONRoundTripAndFieldNames(t *testing.T) {
	r := sampleReport("Quarry abc", 1)
	r.applyCeiling(result{Workload: "ceiling", Status: statusOK, OpsPerSec: 4000})
	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.writeJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Results[0].OpsPerSec != 1000 || back.Results[0].LatencyMs.P99 != 4.25 || back.Results[0].OfCeiling != 0.25 {
		t.Errorf("round trip lost numbers: %+v", back.Results[0])
	}
	if back.Results[1].OfCeiling != 0 {
		t.Errorf("a workload that is not supported has no fraction of the ceiling: %+v", back.Results[1])
	}
	if back.Ceiling == nil || back.Ceiling.OpsPerSec != 4000 {
		t.Errorf("ceiling lost: %+v", back.Ceiling)
	}

	// The field names are the interface other tools read.
	var generic map[string]any
	b, _ := json.Marshal(r)
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	first := generic["results"].([]any)[0].(map[string]any)
	for _, k := range []string{"workload", "status", "ops", "opsPerSec", "latencyMs", "errors", "ofCeiling"} {
		if _, ok := first[k]; !ok {
			t.Errorf("result JSON lacks %q: %v", k, first)
		}
	}
	for _, k := range []string{"p50", "p90", "p99", "mean", "max"} {
		if _, ok := first["latencyMs"].(map[string]any)[k]; !ok {
			t.Errorf("latencyMs lacks %q", k)
		}
	}
	if s := generic["results"].([]any)[1].(map[string]any)["status"]; s != "not supported" {
		t.Errorf("status of a refused capability = %v", s)
	}
}

func TestReport_TableSaysNotSupportedAndShowsErrors(t *testing.T) {
	var buf bytes.Buffer
	sampleReport("Quarry abc", 1).writeTable(&buf)
	out := buf.String()
	for _, want := range []string{"not supported", "login: sign-up", "count error: count 4, want 5", "p99 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestCompare_RatiosOnlyWhenBothCorrect(t *testing.T) {
	c := &comparison{subject: sampleReport("Quarry abc123", 3), baseline: sampleReport("Parse Server 8.6.94", 1),
		commit: "`abc123` (subject)", elapsed: "7m30s", info: []string{"Parse Server 8.6.94 on Node"}}
	// The baseline cannot log in either, but answered count right.
	c.baseline.Results[2] = result{Workload: "count", Status: statusOK, OpsPerSec: 50, Ops: 250,
		LatencyMs: latencyMs{P50: 1, P90: 2, P99: 150}}
	ceiling := result{Workload: "ceiling", Status: statusOK, OpsPerSec: 10000, LatencyMs: latencyMs{P50: 0.2, P99: 1}}
	c.ceiling = &ceiling
	c.subject.applyCeiling(ceiling)
	c.baseline.applyCeiling(ceiling)
	var buf bytes.Buffer
	c.writeMarkdown(&buf)
	out := buf.String()
	for _, want := range []string{
		"| get | 3000 | 1000 | 3.00× | 0.90 / 1.50 / 4.25 | 0.90 / 1.50 / 4.25 | 30.0% | 10.0% | 0 / 0 |",
		"| login | not supported | not supported | — |",
		"| count | 6 | 50 | — |", // the subject had errors: no ratio
		"**3** / 0 |",
		"1.00 / 2.00 / 150 |",
		"Commit measured: `abc123` (subject)",
		"took 7m30s",
		"Quarry, count error: count 4, want 5",
		"Parse Server, login not supported: sign-up",
		"answers 10000 ops/s",
		"Quarry 0.5 → 1.2, Parse Server 0.5 → 1.2",
		"| workload | Quarry ops/s | Parse Server ops/s | Quarry ÷ Parse Server |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}
