package index

import (
	"runtime"
	"sync"
)

// BeginLoad defers index building while a store's data is loaded: until
// FinishLoad, Put only stores objects and declared indexes are only
// registered. Building each index once from all its entries (a sort and a
// bulk load) is much cheaper than inserting object by object, and the
// builds run in parallel. Nothing may query the DB in between.
func (db *DB) BeginLoad() {
	db.mu.Lock()
	db.loading = true
	db.mu.Unlock()
}

// FinishLoad builds every index of every collection, as many at once as
// there are processors, and returns the DB to normal maintenance.
func (db *DB) FinishLoad() {
	db.mu.Lock()
	db.loading = false
	colls := make([]*Collection, 0, len(db.classes))
	for _, c := range db.classes {
		colls = append(colls, c)
	}
	db.mu.Unlock()
	var builds []func()
	for _, c := range colls {
		c.mu.Lock() // held until every build of c is done
		if !c.deferred {
			c.mu.Unlock()
			continue
		}
		recs, byID := c.records()
		for _, ix := range c.list {
			builds = append(builds, func() { ix.build(recs, byID) })
		}
		for _, gx := range c.geoList {
			builds = append(builds, func() { gx.build(recs) })
		}
	}
	runParallel(builds, runtime.GOMAXPROCS(0))
	for _, c := range colls {
		if c.deferred {
			c.deferred = false
			c.loaded, c.loadedMixed = nil, false
			c.mu.Unlock()
		}
	}
}

// runParallel runs every task with at most n at a time.
func runParallel(tasks []func(), n int) {
	var wg sync.WaitGroup
	next := make(chan func())
	for range min(n, len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for task := range next {
				task()
			}
		}()
	}
	for _, t := range tasks {
		next <- t
	}
	close(next)
	wg.Wait()
}
