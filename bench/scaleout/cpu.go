package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// On a machine shared with other work, ops/s mostly measures the wait for
// a core; the CPU time the servers and their database sessions used per
// op measures what an op costs. Read from /proc (Linux); elsewhere the
// columns read 0.

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on
// every Linux the tool runs on).
const clockTick = 10 * time.Millisecond

// processCPU is the user and system CPU time process pid has used so far
// (0 when it cannot be read: gone, or not Linux).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from its ")".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	// utime and stime are fields 14 and 15 of the line, 12 and 13 after ")".
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+st) * clockTick
}

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
		s.servers += processCPU(in.cmd.Process.Pid)
	}
	for _, pid := range p.backendPIDs() {
		s.backends[pid] = processCPU(pid)
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
