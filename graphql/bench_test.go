package graphql_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/graphql"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// benchData fills a server with authors, books pointing to them and
// reviews pointing to books, through the service (no HTTP), and returns
// a GraphQL handler over the same service, run in process.
func benchData(b *testing.B, reviews int) *graphql.Handler {
	srv := servertest.Start(b, nil)
	svc := srv.Service
	master := service.Auth{Master: true}
	var authors, books []string
	for i := range 10 {
		r, err := svc.Create(master, "Author", map[string]any{"name": fmt.Sprintf("author %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		authors = append(authors, r.ObjectID)
	}
	for i := range 50 {
		r, err := svc.Create(master, "Book", map[string]any{"title": fmt.Sprintf("book %d", i), "pages": float64(100 + i),
			"author": map[string]any{"__type": "Pointer", "className": "Author", "objectId": authors[i%len(authors)]}})
		if err != nil {
			b.Fatal(err)
		}
		books = append(books, r.ObjectID)
	}
	for i := range reviews {
		if _, err := svc.Create(master, "Review", map[string]any{"stars": float64(i % 5), "text": "fine",
			"book": map[string]any{"__type": "Pointer", "className": "Book", "objectId": books[i%len(books)]}}); err != nil {
			b.Fatal(err)
		}
	}
	return graphql.New(svc, graphql.Options{})
}

func benchQuery(b *testing.B, h *graphql.Handler, query string, wantEdges int) {
	out := h.Execute(service.Auth{}, query, "", nil)
	if bytes.Contains(out, []byte(`"errors"`)) || bytes.Count(out, []byte(`"node"`)) != wantEdges {
		b.Fatalf("%s", out)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.Execute(service.Auth{}, query, "", nil)
	}
}

// Benchmark_Query_Class_20of1000: one class, a where, an order and a page
// of 20 out of 1000 objects, three fields each.
func Benchmark_Query_Class_20of1000(b *testing.B) {
	h := benchData(b, 1000)
	benchQuery(b, h, `{ reviews(where: {stars: {greaterThanOrEqualTo: 2}}, order: [createdAt_DESC], first: 20) {
		edges { node { id stars text } } } }`, 20)
}

// Benchmark_Query_Nested3_20of1000: the same page with each review's book
// and each book's author (three levels of objects, two pointer hops).
func Benchmark_Query_Nested3_20of1000(b *testing.B) {
	h := benchData(b, 1000)
	benchQuery(b, h, `{ reviews(where: {stars: {greaterThanOrEqualTo: 2}}, order: [createdAt_DESC], first: 20) {
		edges { node { id stars book { title pages author { name } } } } } }`, 20)
}

// Benchmark_Introspection: the schema part of GraphiQL's introspection
// query over a small schema (master key).
func Benchmark_Introspection(b *testing.B) {
	h := benchData(b, 0)
	const q = `{ __schema { types { name kind fields { name args { name type { name kind ofType { name kind ofType { name kind } } } }
		type { name kind ofType { name kind ofType { name kind } } } } inputFields { name type { name kind ofType { name } } } } } }`
	if out := h.Execute(service.Auth{Master: true}, q, "", nil); bytes.Contains(out, []byte(`"errors"`)) {
		b.Fatalf("%s", out)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.Execute(service.Auth{Master: true}, q, "", nil)
	}
}

// Benchmark_Find_Service_20of1000 is the class query's service call alone,
// the floor under the GraphQL numbers above.
func Benchmark_Find_Service_20of1000(b *testing.B) {
	srv := servertest.Start(b, nil)
	svc := srv.Service
	benchData(b, 0)
	for i := range 1000 {
		if _, err := svc.Create(service.Auth{Master: true}, "Review", map[string]any{"stars": float64(i % 5), "text": "fine"}); err != nil {
			b.Fatal(err)
		}
	}
	p := service.FindParams{Where: map[string]any{"stars": map[string]any{"$gte": 2.0}}, Order: []service.SortKey{{Path: "createdAt", Desc: true}}, Limit: 21}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := svc.Find(service.Auth{}, "Review", p); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSubscription measures one event's way from a committed create
// (service.Create, in process) to subscribers sockets: LiveQuery's
// dispatch, the subscription's selection run per subscriber, and the
// WebSocket write and read. One op is one create received by every one of
// subscribers sockets.
func benchSubscription(b *testing.B, subscribers int) {
	srv := startLive(b, "Tick")
	svc := srv.Service
	master := service.Auth{Master: true}
	if _, err := svc.Create(master, "Tick", map[string]any{"n": 0.0}); err != nil {
		b.Fatal(err)
	}
	sockets := make([]*gqlSocket, subscribers)
	for i := range sockets {
		s := connect(b, srv, servertest.Master())
		s.subscribe("1", `subscription { tickCreated(where: {n: {greaterThan: 0}}) { objectId n } }`, nil)
		s.subscribe("ready", `{ health }`, nil)
		s.next()
		s.next()
		sockets[i] = s
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		n++
		if _, err := svc.Create(master, "Tick", map[string]any{"n": float64(n)}); err != nil {
			b.Fatal(err)
		}
		for _, s := range sockets {
			if m := s.next(); m.Get("payload.data.tickCreated.n").Int() != int64(n) {
				b.Fatalf("event %d: %s", n, m.Raw)
			}
		}
	}
}

// Benchmark_Subscription_Event_1Sub: a create to one subscriber's socket.
func Benchmark_Subscription_Event_1Sub(b *testing.B) { benchSubscription(b, 1) }

// Benchmark_Subscription_Event_50Subs: a create to 50 sockets subscribed
// to the same query (LiveQuery matches it once).
func Benchmark_Subscription_Event_50Subs(b *testing.B) { benchSubscription(b, 50) }

// Benchmark_Request_Health_StoredConfig is the smallest request with a
// stored /graphql-config (three classes configured): what reading the
// configuration costs every request.
func Benchmark_Request_Health_StoredConfig(b *testing.B) {
	srv := servertest.Start(b, nil)
	svc := srv.Service
	master := service.Auth{Master: true}
	var configs []any
	for _, class := range []string{"Author", "Book", "Review"} {
		if _, err := svc.Create(master, class, map[string]any{"name": "x"}); err != nil {
			b.Fatal(err)
		}
		configs = append(configs, map[string]any{"className": class,
			"type":  map[string]any{"outputFields": []any{"name"}, "sortFields": []any{map[string]any{"field": "name", "asc": true, "desc": true}}},
			"query": map[string]any{"get": true, "find": true}})
	}
	if err := svc.SetGraphQLConfig(master, map[string]any{"disabledForClasses": []any{"Review"}, "classConfigs": configs}); err != nil {
		b.Fatal(err)
	}
	h := graphql.New(svc, graphql.Options{})
	if out := h.Execute(service.Auth{}, `{ health }`, "", nil); !bytes.Contains(out, []byte(`"health":true`)) {
		b.Fatalf("%s", out)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.Execute(service.Auth{}, `{ health }`, "", nil)
	}
}
