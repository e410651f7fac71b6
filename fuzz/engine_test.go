package fuzz

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// master is the caller of every engine call: the reference knows no ACLs.
var master = service.Auth{Master: true}

// serviceWriter writes a data set through a real Service.
type serviceWriter struct{ s *service.Service }

func (w serviceWriter) Create(class string, body map[string]any) (string, string, error) {
	res, err := w.s.Create(master, class, roundTrip(body))
	return res.ObjectID, res.CreatedAt, err
}

func (w serviceWriter) Update(class, id string, body map[string]any) (string, error) {
	res, err := w.s.Update(master, class, id, roundTrip(body))
	if err != nil {
		return "", err
	}
	return res.UpdatedAt, nil
}

func (w serviceWriter) Delete(class, id string) error { return w.s.Delete(master, class, id) }

// roundTrip is v as the transport would hand it over: decoded from JSON,
// and a copy, so the engine and the reference never share a map.
func roundTrip(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// indexable are the fields a data set may declare indexes on.
var indexable = []string{"n", "s", "d", "b", "p", "ps", "arr", "o.x", "txt", "createdAt"}

// engineCase is one data set loaded into a service on an on-disk store,
// with its reference copy.
type engineCase struct {
	svc     *service.Service
	world   *World
	indexes []string
	cover   *coverage // what the checked queries exercised, when set
}

// coverage counts what the checked queries exercised, so that the test
// fails when a change of the generator stops reaching part of the engine.
type coverage struct {
	plans    map[string]int // the planner's access kinds
	partial  int            // answers neither empty nor the whole class
	refused  int            // 154s
	compared int
}

// openCase builds data set seed in dir: about items objects (30-70 when
// items is 0).
func openCase(tb testing.TB, dir string, seed int64, items int) *engineCase {
	tb.Helper()
	a, err := store.Open(filepath.Join(dir, fmt.Sprintf("q%d.db", seed)))
	if err != nil {
		tb.Fatal(err)
	}
	return openCaseOn(tb, a, seed, items)
}

// caseOptions are data set seed's service options.
func caseOptions(seed int64) service.Options {
	opts := service.Options{}
	if seed%5 == 0 {
		// A scan budget for everyone: some plans are refused (154, a
		// skip), and a budget must never change an answer.
		opts.MaxScan, opts.ScanBudgetForMaster = 25, true
	}
	return opts
}

// openCaseOn is openCase on the store a.
func openCaseOn(tb testing.TB, a store.Adapter, seed int64, items int) *engineCase {
	tb.Helper()
	svc, err := service.Open(a, caseOptions(seed))
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewSource(seed))
	c := &engineCase{svc: svc}
	declare := func() {
		for _, f := range indexable {
			if r.Intn(2) == 0 {
				if err := svc.EnsureIndex(ItemClass, f); err != nil {
					tb.Fatalf("index %s: %v", f, err)
				}
				c.indexes = append(c.indexes, f)
			}
		}
	}
	early := r.Intn(2) == 0 // indexes before the data, or built over it
	if early {
		declare()
	}
	if items == 0 {
		items = 30 + r.Intn(40)
	}
	if c.world, err = Populate(r, serviceWriter{svc}, items); err != nil {
		tb.Fatal(err)
	}
	if err := Mutate(r, serviceWriter{svc}, c.world); err != nil {
		tb.Fatal(err)
	}
	if !early {
		declare()
	}
	return c
}

// check runs q on the engine and the reference and reports a difference.
func (c *engineCase) check(q Query) error {
	want := c.world.Find(q)
	if want.Ambiguous {
		return nil
	}
	p := service.FindParams{Where: roundTrip(q.Where), Limit: q.Limit, Skip: q.Skip, Count: true}
	for _, k := range q.Order {
		p.Order = append(p.Order, service.SortKey{Path: k.Path, Desc: k.Desc})
	}
	res, err := c.svc.Find(authOf(q.Caller), q.Class, p)
	if err != nil {
		if pe, ok := schema.AsError(err); ok && pe.Code == schema.CodeInefficientQuery {
			if c.cover != nil {
				c.cover.refused++
			}
			return nil
		}
		return c.report(q, want, nil, fmt.Sprintf("engine error: %v", err))
	}
	rank := map[string]int{}
	for i, id := range want.IDs {
		rank[id] = want.Ranks[i]
	}
	var got []int
	for _, o := range res.Results {
		r, ok := rank[o["objectId"].(string)]
		if !ok {
			return c.report(q, want, res.Results, fmt.Sprintf("unexpected result %v", o["objectId"]))
		}
		got = append(got, r)
	}
	if fmt.Sprint(got) != fmt.Sprint(want.Page(q.Skip, q.Limit)) {
		return c.report(q, want, res.Results, fmt.Sprintf("page ranks %v, want %v", got, want.Page(q.Skip, q.Limit)))
	}
	if res.Count != len(want.IDs) {
		return c.report(q, want, res.Results, fmt.Sprintf("count %d, want %d", res.Count, len(want.IDs)))
	}
	if c.cover != nil {
		c.cover.compared++
		c.cover.plans[res.Plan]++
		if len(want.IDs) > 0 && len(want.IDs) < len(c.world.Objects[q.Class]) {
			c.cover.partial++
		}
	}
	return nil
}

// authOf is the engine's caller for the reference's.
func authOf(c *Caller) service.Auth {
	if c == nil {
		return master
	}
	return service.Auth{UserID: c.UserID, Roles: c.Roles}
}

func (c *engineCase) report(q Query, want Answer, got []schema.Object, why string) error {
	w, _ := json.Marshal(q.Where)
	var ids []string
	for _, o := range got {
		ids = append(ids, fmt.Sprint(o["objectId"]))
	}
	plan := ""
	p := service.FindParams{Where: roundTrip(q.Where), Limit: q.Limit, Skip: q.Skip, Explain: true}
	if res, err := c.svc.Find(master, q.Class, p); err == nil {
		b, _ := json.Marshal(res.Explain)
		plan = string(b)
	}
	// The objects in one answer and not the other.
	diff := ""
	for _, o := range c.world.Objects[q.Class] {
		id := o["objectId"].(string)
		if contains(ids, id) != contains(want.IDs, id) {
			b, _ := json.Marshal(o)
			diff += fmt.Sprintf("\n  %s", b)
		}
	}
	return fmt.Errorf("%s\nclass %s where %s\norder %v skip %d limit %d caller %+v indexes %v\ngot  %v\nwant %v ranks %v\nplan %s\ndiffering objects:%s",
		why, q.Class, w, q.Order, q.Skip, q.Limit, q.Caller, c.indexes, ids, want.IDs, want.Ranks, plan, diff)
}

// TestEngineVersusReference runs a few hundred random queries over a few
// random data sets, each through the whole engine and the reference.
func TestEngineVersusReference(t *testing.T) {
	dir := t.TempDir()
	cover := &coverage{plans: map[string]int{}}
	for seed := int64(1); seed <= 6; seed++ {
		// The last data set is large enough for the planner's choices
		// between indexes and scans, and early stops, to matter.
		c := openCase(t, dir, seed, map[bool]int{true: 400}[seed == 6])
		c.cover = cover
		g := &QueryGen{R: rand.New(rand.NewSource(seed * 7919)), World: c.world}
		for i := 0; i < 120; i++ {
			if err := c.check(g.Query()); err != nil {
				t.Fatalf("data set %d query %d: %v", seed, i, err)
			}
		}
	}
	t.Logf("compared %d, partial answers %d, refused %d, plans %v", cover.compared, cover.partial, cover.refused, cover.plans)
	for _, kind := range []string{"empty", "full_scan", "index_range", "id_lookup", "index_union", "geo_cover"} {
		if cover.plans[kind] == 0 {
			t.Errorf("no query ran a %s plan: the generator no longer reaches it", kind)
		}
	}
	if cover.partial < cover.compared/4 {
		t.Errorf("only %d of %d answers were neither empty nor everything", cover.partial, cover.compared)
	}
}

// FuzzEngineVersusReference: the input picks one of a few data sets
// (built once per process) and seeds the queries run over it.
//
//	go test ./fuzz -run '^$' -fuzz FuzzEngineVersusReference -fuzztime 10m -parallel 1
func FuzzEngineVersusReference(f *testing.F) {
	for _, seed := range []string{"", "a", "quarry", "\x00\x01\x02\x03", "geo", "$or"} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	var mu sync.Mutex
	cases := map[int64]*engineCase{}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := fnv.New64a()
		h.Write(data)
		sum := int64(h.Sum64() >> 1)
		seed := 1 + sum%6
		mu.Lock()
		c := cases[seed]
		if c == nil {
			sub, err := os.MkdirTemp(dir, "set")
			if err != nil {
				t.Fatal(err)
			}
			c = openCase(t, sub, seed, map[bool]int{true: 400}[seed == 6])
			cases[seed] = c
		}
		mu.Unlock()
		g := &QueryGen{R: rand.New(rand.NewSource(sum)), World: c.world}
		for i := 0; i < 4; i++ {
			if err := c.check(g.Query()); err != nil {
				t.Fatal(err)
			}
		}
	})
}
