package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/quarrydata/quarry/bench/cluster"
)

// On a machine shared with other work, ops/s mostly measures the wait for
// a core; the CPU time the servers and their database sessions used per
// op measures what an op costs. Read from /proc (Linux); elsewhere the
// columns read 0.

// cpuProbe samples the CPU time of a run's server processes and of the
// PostgreSQL sessions connected to its database.
type cpuProbe struct {
	admin, db string
	servers   []*instance
}

// cpuSample is one probe's reading: per process, what it had used.
type cpuSample struct {
	servers  time.Duration
	backends map[int]time.Duration
}

// backendPIDs are the server processes of the sessions on p.db.
func (p cpuProbe) backendPIDs() []int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.admin)
	if err != nil {
		return nil
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = $1", p.db)
	if err != nil {
		return nil
	}
	pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
	out := make([]int, len(pids))
	for i, pid := range pids {
		out[i] = int(pid)
	}
	return out
}

func (p cpuProbe) sample() cpuSample {
	s := cpuSample{backends: map[int]time.Duration{}}
	for _, in := range p.servers {
		s.servers += cluster.ProcessCPU(in.Cmd.Process.Pid)
	}
	for _, pid := range p.backendPIDs() {
		s.backends[pid] = cluster.ProcessCPU(pid)
	}
	return s
}

// since is the CPU time the servers and the database sessions used from
// before to s: a session that started meanwhile counts from zero, one
// that ended meanwhile is lost (the servers keep their pools' sessions).
func (s cpuSample) since(before cpuSample) (servers, database time.Duration) {
	for pid, t := range s.backends {
		database += t - before.backends[pid]
	}
	return s.servers - before.servers, database
}

// perOp is d per op in microseconds.
func perOp(d time.Duration, ops int64) float64 {
	if ops == 0 {
		return 0
	}
	return float64(d) / float64(time.Microsecond) / float64(ops)
}
