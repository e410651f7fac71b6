package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// ceilingBody is the one reply of the ceiling server: about the size of a
// small Parse object.
var ceilingBody = []byte(`{"results":[{"objectId":"ceiling01","n":1,"createdAt":"2026-01-01T00:00:00.000Z"}]}`)

// ceilingHandler answers every request with ceilingBody: the least any
// HTTP server can do, so it shows what the machine and this generator can
// reach at all.
func ceilingHandler(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json")
	ctx.SetBody(ceilingBody)
}

// serveCeiling listens on addr and serves until the process is stopped.
// It prints its URL on the first line of stdout.
func serveCeiling(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/parse\n", ln.Addr())
	return (&fasthttp.Server{Handler: ceilingHandler, Name: "ceiling"}).Serve(ln)
}

// ceilingWorkload is GET of the fixed reply, checked byte for byte.
var ceilingWorkload = &workload{
	name:  "ceiling",
	about: "GET of a fixed small JSON from a trivial fasthttp server",
	setup: func(e *env) (*plan, error) {
		uri := e.t.uri("/ceiling", nil)
		return &plan{op: func(w *worker) (time.Duration, error) {
			out, lat, err := w.call(fasthttp.StatusOK, "GET", uri, nil)
			if err == nil && !bytes.Equal(out, ceilingBody) {
				err = fmt.Errorf("ceiling replied %s", clip(string(out), 80))
			}
			return lat, err
		}}, nil
	},
}

// startCeiling runs this program's ceiling-server in a child process, so
// that it competes for the CPU the way a real server does, and returns its
// URL and a function stopping it by its PID.
func startCeiling() (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe, "ceiling-server", "-listen", "127.0.0.1:0")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("ceiling server: %v", err)
	}
	return strings.TrimSpace(line), stop, nil
}
