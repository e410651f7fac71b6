package fuzz

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// liveCase is a data set with its objects as the engine stores them (what
// LiveQuery tests), and the field types subscriptions compile against.
type liveCase struct {
	*engineCase
	stored    []schema.Object
	fieldType func(string) (schema.Type, bool)
}

func openLiveCase(tb testing.TB, c *engineCase) *liveCase {
	tb.Helper()
	res, err := c.svc.Find(master, ItemClass, service.FindParams{Where: map[string]any{}, Limit: 10000})
	if err != nil {
		tb.Fatal(err)
	}
	cls := c.svc.Class(ItemClass)
	return &liveCase{engineCase: c, stored: res.Results, fieldType: func(f string) (schema.Type, bool) {
		if field, ok := cls.Fields[f]; ok {
			return field.Type, true
		}
		return "", false
	}}
}

// checkLive compiles wheres as LiveQuery subscriptions, indexes them, and
// tests every stored object: Match must agree with the reference, and the
// subscription index must offer every subscription an object matches.
func (lc *liveCase) checkLive(wheres []map[string]any) (compiled int, err error) {
	ix := match.NewIndex[int]()
	var queries []*match.Query
	var groups []*match.Group[int] // equal wheres share one group
	var wants []map[string]bool
	for i, w := range wheres {
		q, err := match.Compile(ItemClass, roundTrip(w), match.Options{FieldType: lc.fieldType})
		if err != nil {
			if pe, ok := schema.AsError(err); ok && pe.Code != schema.CodeInternalServerError {
				continue // refused (subqueries, relations), as REST would or as LiveQuery documents
			}
			return 0, fmt.Errorf("compile %v: %v", w, err)
		}
		if len(q.Joins()) > 0 {
			// A live join's answer needs package live's inner set; Match
			// alone tests the rest of the where. live's
			// TestLiveJoinAgreesWithFind holds joins against find.
			continue
		}
		ans := lc.world.Find(Query{Class: ItemClass, Where: w, Limit: 1 << 30})
		if ans.Ambiguous {
			continue
		}
		want := map[string]bool{}
		for _, id := range ans.IDs {
			want[id] = true
		}
		queries, groups, wants = append(queries, q), append(groups, ix.Add(q, i)), append(wants, want)
	}
	for _, obj := range lc.stored {
		id := obj["objectId"].(string)
		offered := map[*match.Group[int]]bool{}
		for _, g := range ix.Candidates(ItemClass, nil, obj, nil) {
			offered[g] = true
		}
		for i, q := range queries {
			if got := q.Match(obj); got != wants[i][id] {
				return 0, fmt.Errorf("live match of %s: %v, reference %v\nwhere %s\nobject %v", id, got, wants[i][id], js(q.Where()), obj)
			}
			if wants[i][id] && !offered[groups[i]] {
				return 0, fmt.Errorf("the subscription index does not offer %s to where %s\nobject %v", id, js(q.Where()), obj)
			}
		}
	}
	return len(queries), lc.checkUpdates(ix, queries, groups)
}

// checkUpdates tests the index on updates: each stored object is changed
// into the next one (same objectId), and every subscription that matches
// the original or the new version must be offered, or its leave or enter
// event would be lost.
func (lc *liveCase) checkUpdates(ix *match.Index[int], queries []*match.Query, groups []*match.Group[int]) error {
	for k := 1; k < len(lc.stored); k++ {
		obj := lc.stored[k]
		original := schema.Object{}
		for key, v := range lc.stored[k-1] {
			original[key] = v
		}
		original["objectId"] = obj["objectId"]
		offered := map[*match.Group[int]]bool{}
		for _, g := range ix.Candidates(ItemClass, original, obj, nil) {
			offered[g] = true
		}
		for i, q := range queries {
			if (q.Match(original) || q.Match(obj)) && !offered[groups[i]] {
				return fmt.Errorf("the subscription index does not offer the update of %v to where %s\noriginal %v\nobject %v",
					obj["objectId"], js(q.Where()), original, obj)
			}
		}
	}
	return nil
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestLiveMatchVersusReference: LiveQuery's matcher and subscription
// index against the reference, over the stored objects of a few data sets.
func TestLiveMatchVersusReference(t *testing.T) {
	dir := t.TempDir()
	compiled := 0
	for seed := int64(1); seed <= 3; seed++ {
		lc := openLiveCase(t, openCase(t, dir, seed, 0))
		g := &QueryGen{R: rand.New(rand.NewSource(seed * 104729)), World: lc.world}
		for i := 0; i < 20; i++ {
			n, err := lc.checkLive(liveWheres(g, 20))
			if err != nil {
				t.Fatalf("data set %d round %d: %v", seed, i, err)
			}
			compiled += n
		}
	}
	// Subqueries and relations are refused; most wheres must still run.
	t.Logf("%d of %d subscriptions compiled", compiled, 3*20*20)
	if compiled < 3*20*20/3 {
		t.Errorf("only %d subscriptions compiled", compiled)
	}
}

// liveWheres draws n subscription wheres on Item.
func liveWheres(g *QueryGen, n int) []map[string]any {
	var out []map[string]any
	for len(out) < n {
		if q := g.Query(); q.Class == ItemClass {
			out = append(out, q.Where)
		}
	}
	return out
}

// FuzzLiveMatchVersusReference: the input seeds a round of subscriptions
// over one of a few data sets (built once per process).
func FuzzLiveMatchVersusReference(f *testing.F) {
	for _, seed := range []string{"", "live", "subscribe"} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	var mu sync.Mutex
	cases := map[int64]*liveCase{}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := fnv.New64a()
		h.Write(data)
		sum := int64(h.Sum64() >> 1)
		seed := 1 + sum%3
		mu.Lock()
		lc := cases[seed]
		if lc == nil {
			sub, err := os.MkdirTemp(dir, "live")
			if err != nil {
				t.Fatal(err)
			}
			lc = openLiveCase(t, openCase(t, sub, seed, 0))
			cases[seed] = lc
		}
		mu.Unlock()
		g := &QueryGen{R: rand.New(rand.NewSource(sum)), World: lc.world}
		if _, err := lc.checkLive(liveWheres(g, 8)); err != nil {
			t.Fatal(err)
		}
	})
}
