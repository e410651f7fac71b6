package engine

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// Shape of the data set.
const (
	items      = 100_000
	owners     = 1_000
	categories = 50
	regions    = 20
	members    = 500 // relation members of the one Group
)

type fixture struct {
	svc     *service.Service
	groupID string
	bytes   float64 // heap bytes per Item after loading
}

var (
	once sync.Once
	fx   fixture
)

func load(b *testing.B) *fixture {
	once.Do(func() {
		svc := openIndexed(b, [2]string{"Item", "score"}, [2]string{"Item", "category"}, [2]string{"Item", "owner"}, [2]string{"Owner", "region"})
		master := service.Auth{Master: true}
		ownerIDs := make([]string, 0, owners)
		writeAll := func(ops []service.WriteOp) []service.WriteResult {
			res, err := svc.WriteAll(master, ops)
			if err != nil {
				b.Fatal(err)
			}
			return res
		}
		for i := 0; i < owners; i += 1000 {
			var ops []service.WriteOp
			for j := i; j < i+1000 && j < owners; j++ {
				ops = append(ops, service.WriteOp{Method: service.MethodCreate, Class: "Owner",
					Body: map[string]any{"name": fmt.Sprintf("owner-%d", j), "region": fmt.Sprintf("r%d", j%regions)}})
			}
			for _, r := range writeAll(ops) {
				ownerIDs = append(ownerIDs, r.Create.ObjectID)
			}
		}
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		itemIDs := make([]string, 0, items)
		for i := 0; i < items; i += 1000 {
			var ops []service.WriteOp
			for j := i; j < i+1000; j++ {
				ops = append(ops, service.WriteOp{Method: service.MethodCreate, Class: "Item", Body: map[string]any{
					"score":    float64(j % 1000),
					"category": fmt.Sprintf("c%d", j%categories),
					"name":     fmt.Sprintf("item-%d", j),
					"owner":    schema.Pointer("Owner", ownerIDs[j%owners]),
				}})
			}
			for _, r := range writeAll(ops) {
				itemIDs = append(itemIDs, r.Create.ObjectID)
			}
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		fx.bytes = float64(after.HeapAlloc-before.HeapAlloc) / items
		group, err := svc.Create(master, "Group", map[string]any{"name": "g"})
		if err != nil {
			b.Fatal(err)
		}
		rel := make([]any, members)
		for i := range rel {
			rel[i] = schema.Pointer("Item", itemIDs[i*(items/members)])
		}
		if _, err := svc.Update(master, "Group", group.ObjectID, map[string]any{
			"members": map[string]any{"__op": "AddRelation", "objects": rel}}); err != nil {
			b.Fatal(err)
		}
		fx.svc, fx.groupID = svc, group.ObjectID
	})
	if fx.svc == nil {
		b.Fatal("fixture failed to load")
	}
	return &fx
}

// query runs one Find per iteration and checks the result size, so a
// fast wrong answer cannot pass.
func query(b *testing.B, class string, p service.FindParams, wantResults, wantCount int) {
	f := load(b)
	auth := service.Auth{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := f.svc.Find(auth, class, p)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Results) != wantResults || (p.Count && res.Count != wantCount) {
			b.Fatalf("got %d results (count %d), want %d (count %d)", len(res.Results), res.Count, wantResults, wantCount)
		}
	}
	b.ReportMetric(f.bytes, "heapB/item")
}

func Benchmark_Find_IndexedEquality_100k_Limit20(b *testing.B) {
	query(b, "Item", service.FindParams{Where: map[string]any{"category": "c7"}, Limit: 20}, 20, 0)
}

func Benchmark_Find_RangeOrdered_100k_Limit20(b *testing.B) {
	query(b, "Item", service.FindParams{
		Where: map[string]any{"score": map[string]any{"$gte": 100.0, "$lt": 200.0}},
		Order: []service.SortKey{{Path: "score", Desc: true}}, Limit: 20}, 20, 0)
}

func Benchmark_Find_In5_100k_Limit20(b *testing.B) {
	query(b, "Item", service.FindParams{
		Where: map[string]any{"category": map[string]any{"$in": []any{"c1", "c2", "c3", "c4", "c5"}}}, Limit: 20}, 20, 0)
}

func Benchmark_Find_Or2_100k_Limit20(b *testing.B) {
	query(b, "Item", service.FindParams{Where: map[string]any{"$or": []any{
		map[string]any{"category": "c9"}, map[string]any{"score": 5.0}}}, Limit: 20}, 20, 0)
}

// Benchmark_Find_OrRange_100k_Limit20: an $or of an equality and a range
// (2,000 + 100 matches): the union is not in objectId order, so the first
// 20 by objectId come from a top-k.
func Benchmark_Find_OrRange_100k_Limit20(b *testing.B) {
	query(b, "Item", service.FindParams{Where: map[string]any{"$or": []any{
		map[string]any{"category": "c9"}, map[string]any{"score": map[string]any{"$gte": 5.0, "$lt": 6.0}}}}, Limit: 20}, 20, 0)
}

func Benchmark_Find_InQuery_100k_Limit20(b *testing.B) {
	query(b, "Item", service.FindParams{Where: map[string]any{"owner": map[string]any{
		"$inQuery": map[string]any{"className": "Owner", "where": map[string]any{"region": "r3"}}}}, Limit: 20}, 20, 0)
}

func Benchmark_Find_RelatedTo_100k_Limit20(b *testing.B) {
	f := load(b)
	query(b, "Item", service.FindParams{Where: map[string]any{"$relatedTo": map[string]any{
		"object": schema.Pointer("Group", f.groupID), "key": "members"}}, Limit: 20}, 20, 0)
}

func Benchmark_Find_Include_100k_Limit20(b *testing.B) {
	query(b, "Item", service.FindParams{Where: map[string]any{"category": "c11"}, Limit: 20,
		Read: service.ReadOptions{Include: []string{"owner"}}}, 20, 0)
}

func Benchmark_Find_Count_100k(b *testing.B) {
	query(b, "Item", service.FindParams{Where: map[string]any{"category": "c7"}, Count: true}, 0, items/categories)
}

func Benchmark_Find_CountAll_100k(b *testing.B) {
	query(b, "Item", service.FindParams{Count: true}, 0, items)
}

// openIndexed opens a service on the in-memory store with the given
// indexes ({class, field} pairs) declared, for a fixture to fill.
func openIndexed(b *testing.B, indexes ...[2]string) *service.Service {
	adapter, err := store.Open(store.MemoryURI)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := service.Open(adapter, service.Options{BatchSize: 1000, AllowClientClassCreation: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, ix := range indexes {
		if err := svc.EnsureIndex(ix[0], ix[1]); err != nil {
			b.Fatal(err)
		}
	}
	return svc
}
