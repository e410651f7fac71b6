package fuzz

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// sqlPair is one data set in one PostgreSQL database seen by two
// services: mem loads it into memory, sql keeps some of its classes out
// of memory and answers their queries in SQL.
type sqlPair struct {
	mem, sql *service.Service
	world    *World
}

func openSQLPair(t *testing.T, seed int64, items int, sqlClasses []string) *sqlPair {
	t.Helper()
	uri := pgtest.NewDatabase(t)
	open := func(opts service.Options) *service.Service {
		a, err := postgres.Open(uri, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		svc, err := service.Open(a, opts)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	p := &sqlPair{mem: open(service.Options{})}
	r := rand.New(rand.NewSource(seed))
	var err error
	if p.world, err = Populate(r, serviceWriter{p.mem}, items); err != nil {
		t.Fatal(err)
	}
	if err := Mutate(r, serviceWriter{p.mem}, p.world); err != nil {
		t.Fatal(err)
	}
	if err := addAreas(r, serviceWriter{p.mem}, p.world); err != nil {
		t.Fatal(err)
	}
	p.sql = open(service.Options{SQLClasses: sqlClasses})
	return p
}

// sqlTally counts how the differential queries went.
type sqlTally struct {
	compared, partial, untranslated, bothFailed int
	// loose counts the compared queries holding a construct SQL leaves
	// to Go (looseQuery); text those holding a $text.
	loose, text     int
	untranslatedWhy map[string]int
}

// errUntranslated tells a query the SQL path refuses (102, kept out of
// memory) from a real difference.
func untranslated(err error) bool {
	pe, ok := schema.AsError(err)
	return ok && pe.Code == schema.CodeInvalidQuery && strings.Contains(pe.Message, "kept out of memory")
}

// compare runs q on both services: the same objects, in the same order
// when q orders them, and the same count.
func (p *sqlPair) compare(q Query, tally *sqlTally) error {
	if len(q.Order) == 0 {
		q.Skip, q.Limit = 0, 1000 // without an order only the set is defined
	}
	params := func() service.FindParams {
		f := service.FindParams{Where: roundTrip(q.Where), Limit: q.Limit, Skip: q.Skip, Count: true}
		for _, k := range q.Order {
			f.Order = append(f.Order, service.SortKey{Path: k.Path, Desc: k.Desc})
		}
		return f
	}
	want, werr := p.mem.Find(authOf(q.Caller), q.Class, params())
	got, gerr := p.sql.Find(authOf(q.Caller), q.Class, params())
	switch {
	case gerr != nil && untranslated(gerr):
		tally.untranslated++
		msg := gerr.Error()
		if i := strings.Index(msg, "cannot run "); i >= 0 {
			msg = msg[i+len("cannot run "):]
		}
		if i := strings.Index(msg, " on "); i >= 0 {
			msg = msg[:i]
		}
		tally.untranslatedWhy[msg]++
		return nil
	case werr != nil && gerr != nil:
		tally.bothFailed++
		return nil
	case werr != nil || gerr != nil:
		return fmt.Errorf("memory error %v, SQL error %v", werr, gerr)
	}
	ids := func(res service.FindResult) []string {
		out := make([]string, len(res.Results))
		for i, o := range res.Results {
			out[i] = o["objectId"].(string)
		}
		return out
	}
	w, g := ids(want), ids(got)
	if len(q.Order) == 0 {
		slices.Sort(w)
		slices.Sort(g)
	}
	if !slices.Equal(w, g) {
		return fmt.Errorf("memory %v\nSQL    %v", w, g)
	}
	if want.Count != got.Count {
		return fmt.Errorf("count: memory %d, SQL %d", want.Count, got.Count)
	}
	if len(q.Order) > 0 {
		// Without a count, a page in SQL's order may stop its stream
		// early: the same page still.
		f := params()
		f.Count = false
		page, err := p.sql.Find(authOf(q.Caller), q.Class, f)
		if err != nil || !slices.Equal(ids(page), w) {
			return fmt.Errorf("without a count: memory %v\nSQL    %v (%v)", w, ids(page), err)
		}
	}
	tally.compared++
	if want.Count > 0 && want.Count < len(p.world.Objects[q.Class]) {
		tally.partial++
	}
	return nil
}

// TestSQLVersusMemory is the differential property test of classes kept
// out of memory: random wheres (the fuzz generator's), orders, pages and
// callers over one data set give the same objects, order and count from
// the in-memory planner and from the SQL translation.
func TestSQLVersusMemory(t *testing.T) {
	tally := &sqlTally{untranslatedWhy: map[string]int{}}
	for seed := int64(1); seed <= 3; seed++ {
		// The last data set keeps Owner in memory: subqueries and
		// relations cross between the two engines.
		kept := []string{ItemClass, OwnerClass}
		if seed == 3 {
			kept = kept[:1]
		}
		p := openSQLPair(t, seed, 60, kept)
		g := &QueryGen{R: rand.New(rand.NewSource(seed * 104729)), World: p.world}
		for i := 0; i < 300; i++ {
			q, loose := looseQuery(g)
			before := tally.compared
			if err := p.compare(q, tally); err != nil {
				w, _ := jsonText(q.Where)
				t.Fatalf("data set %d query %d: class %s where %s order %v skip %d limit %d caller %+v:\n%v",
					seed, i, q.Class, w, q.Order, q.Skip, q.Limit, q.Caller, err)
			}
			if tally.compared > before {
				w, _ := jsonText(q.Where)
				if loose {
					tally.loose++
				}
				if strings.Contains(w, `"$text"`) {
					tally.text++
				}
			}
		}
	}
	t.Logf("compared %d of %d (partial %d; with a construct left to Go %d, with $text %d), both refused %d, not translatable %d: %v",
		tally.compared, tally.compared+tally.bothFailed+tally.untranslated, tally.partial, tally.loose, tally.text,
		tally.bothFailed, tally.untranslated, tally.untranslatedWhy)
	if tally.compared < 800 || tally.partial < tally.compared/4 || tally.loose < 100 || tally.text < 30 {
		t.Errorf("too few informative comparisons: %+v", *tally)
	}
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", errors.Join(err)
	}
	return string(b), nil
}
