package server_test

import (
	"net"
	"net/http"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestPprofOnlyWhenAsked: the profiler answers on pprofAddress, and
// nowhere on the API's port.
func TestPprofOnlyWhenAsked(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := servertest.Start(t, func(o *config.Options) { o.PprofAddress = addr })
	res, err := http.Get("http://" + addr + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("pprof: %d", res.StatusCode)
	}
	if r := srv.Do(t, "GET", "/../debug/pprof/", nil, nil); r.Status == 200 {
		t.Errorf("the API port serves the profiler")
	}
}
