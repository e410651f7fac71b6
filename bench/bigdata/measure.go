package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quarrydata/quarry/bench/cluster"
)

const (
	appID     = "bigdata"
	masterKey = "bigdata-master"
)

// server is one quarry process started on the data file.
type server struct {
	cmd       *exec.Cmd
	base      string // REST base, mount path included
	pprofAddr string
	log       *os.File
}

func startServer(o *options) (*server, time.Duration, error) {
	port, err := cluster.FreePort()
	if err != nil {
		return nil, 0, err
	}
	pport, err := cluster.FreePort()
	if err != nil {
		return nil, 0, err
	}
	logf, err := os.CreateTemp("", "bigdata-quarry-*.log")
	if err != nil {
		return nil, 0, err
	}
	args := []string{"--appId", appID, "--masterKey", masterKey, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--databaseURI", o.file, "--indexes", "Item.n,Item.tag,Item.cat", "--logLevel", "error",
		"--pprofAddress", "127.0.0.1:" + strconv.Itoa(pport)}
	args = append(args, strings.Fields(o.extra)...)
	cmd := exec.Command(o.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	start := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, 0, err
	}
	s := &server{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d/parse", port), pprofAddr: "127.0.0.1:" + strconv.Itoa(pport), log: logf}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	for {
		resp, err := http.Get(s.base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, time.Since(start), nil
			}
		}
		select {
		case <-exited:
			return nil, 0, fmt.Errorf("quarry exited: see %s", logf.Name())
		case <-time.After(20 * time.Millisecond): // nothing tells us when the load ends but polling
		}
		if time.Since(start) > 10*time.Minute {
			s.stop()
			return nil, 0, fmt.Errorf("not healthy within 10 minutes: see %s", logf.Name())
		}
	}
}

// stop ends the process by its PID: SIGTERM, then SIGKILL after 20 s.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if s.cmd.ProcessState != nil {
			break
		}
		if err := s.cmd.Process.Signal(syscall.Signal(0)); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.cmd.Process.Kill()
	s.log.Close()
	os.Remove(s.log.Name())
}

// cpu is the process's user+system CPU time so far.
func (s *server) cpu() time.Duration { return cluster.ProcessCPU(s.cmd.Process.Pid) }

// rss is the process's resident size in bytes.
func (s *server) rss() int64 { return cluster.ProcessRSS(s.cmd.Process.Pid) }

// settledRSS is the least resident size of readings a second apart, taken
// until three in a row are no lower (the runtime returns memory a little
// at a time, and a collection may be running), at most 30 readings.
func (s *server) settledRSS() int64 {
	least, still := s.rss(), 0
	for range 30 {
		time.Sleep(time.Second)
		r := s.rss()
		if float64(r) >= float64(least)*0.995 {
			if still++; still == 3 {
				break
			}
			continue
		}
		least, still = r, 0
	}
	return least
}

func measure(o *options) error {
	fi, err := os.Stat(o.file)
	if err != nil {
		return err
	}
	fmt.Printf("data file %s: %.1f MB, %.1f B/object\n", o.file, float64(fi.Size())/1e6, float64(fi.Size())/float64(o.objects))
	var s *server
	for r := range max(o.restarts, 1) {
		if s != nil {
			s.stop()
		}
		var took time.Duration
		s, took, err = startServer(o)
		if err != nil {
			return err
		}
		cpu := s.cpu()
		fmt.Printf("restart %d: %.2f s to /health 200 (%.1f CPU-s), peak-so-far RSS %.0f MB\n", r+1, took.Seconds(), cpu.Seconds(), float64(s.rss())/1e6)
	}
	defer s.stop()
	rss := s.settledRSS()
	fmt.Printf("settled RSS after load: %.0f MB = %.0f B/object = %.2f× the file\n", float64(rss)/1e6, float64(rss)/float64(o.objects), float64(rss)/float64(fi.Size()))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency, MaxConnsPerHost: o.concurrency}, Timeout: 30 * time.Second}
	fmt.Printf("%-18s %10s %9s %9s %14s %6s\n", "workload", "ops/s", "p50 ms", "p99 ms", "server CPU µs/op", "errors")
	for _, w := range workloads(o.objects) {
		res := runWorkload(client, s, w, o)
		fmt.Printf("%-18s %10.0f %9.2f %9.2f %14.0f %6d\n", w.name, res.opsPerSec, res.p50, res.p99, res.cpuPerOp, res.errors)
		if res.firstErr != nil {
			fmt.Printf("  first error: %v\n", res.firstErr)
		}
	}
	rss = s.settledRSS()
	fmt.Printf("settled RSS after the workloads: %.0f MB = %.0f B/object = %.2f× the file\n", float64(rss)/1e6, float64(rss)/float64(o.objects), float64(rss)/float64(fi.Size()))
	if o.heapProfile != "" {
		if err := fetch(client, "http://"+s.pprofAddr+"/debug/pprof/heap", o.heapProfile); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
		fmt.Println("heap profile:", o.heapProfile)
	}
	return nil
}

func fetch(client *http.Client, u, path string) error {
	resp, err := client.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// workload makes one request from a random source and checks its reply.
type workload struct {
	name string
	do   func(c *http.Client, base string, r *rand.Rand) error
}

type reply struct {
	Results []struct {
		ObjectID string  `json:"objectId"`
		N        float64 `json:"n"`
		Tag      string  `json:"tag"`
	} `json:"results"`
	Count *int `json:"count"`
}

func workloads(n int) []workload {
	get := func(c *http.Client, base, path string, into any) error {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("X-Parse-Application-Id", appID)
		req.Header.Set("X-Parse-Master-Key", masterKey)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: status %d: %.200s", path, resp.StatusCode, body)
		}
		return json.Unmarshal(body, into)
	}
	q := func(where string, extra string) string {
		return "/classes/Item?where=" + url.QueryEscape(where) + extra
	}
	return []workload{
		{"get", func(c *http.Client, base string, r *rand.Rand) error {
			i := r.IntN(n)
			var o struct {
				ObjectID string  `json:"objectId"`
				N        float64 `json:"n"`
			}
			if err := get(c, base, "/classes/Item/"+objectID(i), &o); err != nil {
				return err
			}
			if o.ObjectID != objectID(i) || int(o.N) != i {
				return fmt.Errorf("get %s: got %s n=%v", objectID(i), o.ObjectID, o.N)
			}
			return nil
		}},
		{"query-equal", func(c *http.Client, base string, r *rand.Rand) error {
			t := r.IntN(min(tags, n))
			var rep reply
			if err := get(c, base, q(fmt.Sprintf(`{"tag":"t%d"}`, t), "&limit=20"), &rep); err != nil {
				return err
			}
			want := min(20, (n-t+tags-1)/tags)
			if len(rep.Results) != want {
				return fmt.Errorf("tag t%d: %d results, want %d", t, len(rep.Results), want)
			}
			for _, x := range rep.Results {
				if x.Tag != fmt.Sprintf("t%d", t) {
					return fmt.Errorf("tag t%d: result has tag %s", t, x.Tag)
				}
			}
			return nil
		}},
		{"query-range-order", func(c *http.Client, base string, r *rand.Rand) error {
			lo := r.IntN(max(n-1000, 1))
			var rep reply
			if err := get(c, base, q(fmt.Sprintf(`{"n":{"$gte":%d,"$lt":%d}}`, lo, lo+1000), "&order=n&limit=20"), &rep); err != nil {
				return err
			}
			want := min(20, n-lo)
			if len(rep.Results) != want || int(rep.Results[0].N) != lo {
				return fmt.Errorf("range from %d: %d results, want %d starting there", lo, len(rep.Results), want)
			}
			return nil
		}},
		{"count", func(c *http.Client, base string, r *rand.Rand) error {
			k := r.IntN(cats)
			var rep reply
			if err := get(c, base, q(fmt.Sprintf(`{"cat":"c%d"}`, k), "&count=1&limit=0"), &rep); err != nil {
				return err
			}
			want := (n - k + cats - 1) / cats
			if rep.Count == nil || *rep.Count != want {
				return fmt.Errorf("count of c%d: got %v, want %d", k, rep.Count, want)
			}
			return nil
		}},
	}
}

type result struct {
	opsPerSec, p50, p99, cpuPerOp float64
	errors                        int
	firstErr                      error
}

// runWorkload runs w in a closed loop of o.concurrency clients: one
// second unmeasured, then o.duration measured.
func runWorkload(client *http.Client, s *server, w workload, o *options) result {
	var (
		mu       sync.Mutex
		lat      []time.Duration
		errs     int
		firstErr error
	)
	warm := time.Now().Add(time.Second)
	end := warm.Add(o.duration)
	var cpuStart time.Duration
	var cpuOnce sync.Once
	var wg sync.WaitGroup
	for g := range o.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			var mine []time.Duration
			for {
				t0 := time.Now()
				if t0.After(end) {
					break
				}
				if !t0.Before(warm) {
					cpuOnce.Do(func() { cpuStart = s.cpu() })
				}
				err := w.do(client, s.base, r)
				d := time.Since(t0)
				if t0.Before(warm) {
					continue
				}
				mu.Lock()
				if err != nil {
					errs++
					if firstErr == nil {
						firstErr = err
					}
				}
				mu.Unlock()
				mine = append(mine, d)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	cpu := s.cpu() - cpuStart
	slices.Sort(lat)
	res := result{errors: errs, firstErr: firstErr}
	if len(lat) == 0 {
		return res
	}
	res.opsPerSec = float64(len(lat)) / o.duration.Seconds()
	res.p50 = ms(lat[len(lat)/2])
	res.p99 = ms(lat[len(lat)*99/100])
	res.cpuPerOp = float64(cpu.Microseconds()) / float64(len(lat))
	return res
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
