package main

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/quarrydata/quarry/bench/cluster"
)

type database = cluster.Database

// instance is one quarry process with its profiler's address (the heap
// after a collection and CPU profiles are read there).
type instance struct {
	*cluster.Instance
	pprof string
}

func createDatabase(ctx context.Context, admin string) (*database, error) {
	return cluster.CreateDatabase(ctx, admin, "quarry_livescale")
}

func startInstance(bin, dir string, i int, db *database, extra []string) (*instance, error) {
	port, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	pprof := "127.0.0.1:" + strconv.Itoa(port)
	in, err := cluster.Start(bin, dir, i, append([]string{"--appId", appID, "--masterKey", masterKey,
		"--databaseURI", db.URI, "--logLevel", "error", "--pprofAddress", pprof}, extra...))
	if err != nil {
		return nil, err
	}
	return &instance{Instance: in, pprof: pprof}, nil
}

func (in *instance) waitHealthy(within time.Duration) error {
	return in.WaitHealthy(http.DefaultClient, within)
}
