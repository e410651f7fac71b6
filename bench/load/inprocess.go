package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
)

// serverArgs are the Quarry options that give a server the dataset's
// indexes and LiveQuery class: the same setup Parse Server gets.
func serverArgs(d *dataset) []string {
	var idx []string
	for _, s := range d.indexes() {
		idx = append(idx, s.Class+"."+s.Field)
	}
	return []string{
		"--indexes", strings.Join(idx, ","),
		"--liveQuery", fmt.Sprintf(`{"classNames":[%q]}`, d.liveClass()),
	}
}

// startInProcess runs Quarry inside this process with its data in dir and
// returns its REST URL and a stop function. Every goroutine it starts
// (store, listener, request workers) carries the profile label side=server.
func startInProcess(d *dataset, dir, appID, masterKey string) (string, func() error, error) {
	args := append([]string{"--appId", appID, "--masterKey", masterKey, "--host", "127.0.0.1", "--port", "0",
		"--databaseURI", filepath.Join(dir, "quarry.db"), "--logLevel", "error"}, serverArgs(d)...)
	opts, _, err := config.Load(args, nil)
	if err != nil {
		return "", nil, err
	}
	var (
		srv  *server.Server
		addr net.Addr
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	pprof.Do(context.Background(), pprof.Labels("side", "server"), func(context.Context) {
		if srv, err = server.Open(opts, nil); err != nil {
			return
		}
		if addr, err = srv.Listen(); err != nil {
			srv.Close()
			return
		}
		go func() { done <- srv.Serve(ctx) }()
	})
	if err != nil {
		cancel()
		return "", nil, err
	}
	stop := func() error {
		cancel()
		return <-done
	}
	return "http://" + addr.String() + opts.MountPath, stop, nil
}

// profiler writes, for each workload's measured phase, a CPU profile and
// two allocation snapshots (start and end; read the difference with
// `go tool pprof -base`). See bench/README.md, "Profiles".
type profiler struct {
	dir  string
	logf func(string, ...any)
}

func (p *profiler) measure(workload string) func() {
	base := filepath.Join(p.dir, workload)
	p.snapshot(base + ".allocs-start.prof")
	f, err := os.Create(base + ".cpu.prof")
	if err != nil {
		p.logf("profile: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		p.logf("profile: %v", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		p.snapshot(base + ".allocs.prof")
	}
}

// snapshot writes the allocation profile as of a fresh GC.
func (p *profiler) snapshot(path string) {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		p.logf("profile: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		p.logf("profile: %v", err)
	}
}
