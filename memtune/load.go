package memtune

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// LoadGCPercent is the collector's target (GOGC) while a store loads:
// from the store's read of its file to the last index build. Nearly all a
// load allocates stays live, so at the default of 100 the collections
// during a load mostly mark the growing data again and again (a third of
// a start's CPU on 1M objects); at 400 they run about a quarter as often.
const LoadGCPercent = 400

// loadMemoryShare is the share of the machine's memory (1/loadMemoryShare)
// the heap may reach during a load before the collector runs regardless
// of LoadGCPercent: GOGC 400 alone lets a load of several gigabytes peak
// at several times its live data.
const loadMemoryShare = 2

// load counts the loads in progress: the first raises the target (and
// caps the heap), the last puts back what it found.
var load struct {
	sync.Mutex
	n       int
	prev    int
	prevLim int64
	capped  bool
	release func()
}

// RaiseForLoad raises the collector's target to LoadGCPercent unless it
// is off or higher already, caps the heap at half the machine's memory
// while no GOMEMLIMIT is set, and stands the headroom policy aside (Hold);
// the returned function, called once the load and its index builds are
// done, puts back what it found. Loads nest: the last one restores.
func RaiseForLoad() (restore func()) {
	release, tuned := Hold()
	load.Lock()
	defer load.Unlock()
	if load.n == 0 {
		load.prev = debug.SetGCPercent(LoadGCPercent)
		if !tuned && (load.prev < 0 || load.prev > LoadGCPercent) {
			debug.SetGCPercent(load.prev)
		}
		load.capped = false
		if total := totalMemory(); total > 0 && os.Getenv("GOMEMLIMIT") == "" {
			if lim := debug.SetMemoryLimit(-1); lim == math.MaxInt64 {
				load.prevLim = debug.SetMemoryLimit(int64(total / loadMemoryShare))
				load.capped = true
			}
		}
	}
	load.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			load.Lock()
			defer load.Unlock()
			if load.n--; load.n == 0 {
				debug.SetGCPercent(load.prev)
				if load.capped {
					debug.SetMemoryLimit(load.prevLim)
				}
			}
			release()
		})
	}
}

// totalMemory is the machine's memory in bytes (Linux /proc/meminfo), 0
// when unknown.
func totalMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
