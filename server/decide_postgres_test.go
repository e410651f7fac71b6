package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// Several instances on one PostgreSQL database decide every write on a
// current copy (docs/scaling.md): each test sends concurrent requests
// through two instances, records every answer, and checks the answers and
// what PostgreSQL holds against what some serial order of the answered
// requests gives.

// reply is one recorded answer.
type reply struct {
	status int
	body   map[string]any
	list   []any // a batch's answer
}

// send is a request any goroutine may make (servertest.Do is the test's).
func send(url, method string, body any, headers map[string]string) (reply, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{}, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{status: resp.StatusCode}
	if bytes.HasPrefix(data, []byte("[")) {
		err = json.Unmarshal(data, &r.list)
	} else {
		err = json.Unmarshal(data, &r.body)
	}
	if err != nil {
		return r, fmt.Errorf("reply %d %q: %w", resp.StatusCode, data, err)
	}
	return r, nil
}

// instances starts n instances on one new database; sqlClasses keeps those
// classes out of memory.
func instances(t *testing.T, n int, sqlClasses ...string) (string, []*servertest.Server) {
	t.Helper()
	uri := pgtest.NewDatabase(t)
	var out []*servertest.Server
	for i := 0; i < n; i++ {
		out = append(out, servertest.Start(t, func(o *config.Options) {
			o.DatabaseURI = uri
			o.SQLClasses = sqlClasses
		}))
	}
	return uri, out
}

// concurrently sends n requests, request i through servers[i%len], from
// workers goroutines, and returns the answers in request order.
func concurrently(t *testing.T, servers []*servertest.Server, n, workers int, req func(i int) (method, path string, body any, headers map[string]string)) []reply {
	t.Helper()
	out := make([]reply, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				method, path, body, headers := req(i)
				out[i], errs[i] = send(servers[i%len(servers)].URL+path, method, body, headers)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return out
}

// visibleOn waits until server s has object class/id (set-up: following
// the other instance's create is not what these tests check).
func visibleOn(t *testing.T, s *servertest.Server, class, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s.Do(t, "GET", "/classes/"+class+"/"+id, nil, servertest.Master()).Status == 200 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s/%s never reached %s", class, id, s.URL)
}

// stored reads one column of one object as PostgreSQL holds it.
func stored[T any](t *testing.T, uri, table, column, id string) T {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v T
	if err := conn.QueryRow(ctx, "SELECT "+pgx.Identifier{column}.Sanitize()+" FROM "+pgx.Identifier{table}.Sanitize()+
		` WHERE "objectId" = $1`, id).Scan(&v); err != nil {
		t.Fatalf("reading %s.%s of %s: %v", table, column, id, err)
	}
	return v
}

// countStored counts the rows of table whose column equals value
// (lower-cased on both sides when fold).
func countStored(t *testing.T, uri, table, column, value string, fold bool) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	col := pgx.Identifier{column}.Sanitize()
	cond := col + " = $1"
	if fold {
		cond = "lower(" + col + ") = lower($1)"
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()+" WHERE "+cond, value).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// createOn creates an object through s and waits until every server has it.
func createOn(t *testing.T, servers []*servertest.Server, class string, body map[string]any) string {
	t.Helper()
	r := servers[0].Do(t, "POST", "/classes/"+class, body, servertest.Master())
	if r.Status != 201 {
		t.Fatalf("create %s: %d %s", class, r.Status, r.Body)
	}
	id := r.Map()["objectId"].(string)
	for _, s := range servers[1:] {
		visibleOn(t, s, class, id)
	}
	return id
}

// checkSerialIncrements checks that increments by 1 of a counter from 0
// were applied in some serial order: every answered one 200, and the
// values they answered are exactly 1..n, each once.
func checkSerialIncrements(t *testing.T, replies []reply, field string) {
	t.Helper()
	var seen []int
	for i, r := range replies {
		if r.status != 200 {
			t.Fatalf("increment %d: %d %v", i, r.status, r.body)
		}
		v, ok := r.body[field].(float64)
		if !ok {
			t.Fatalf("increment %d answered no %s: %v", i, field, r.body)
		}
		seen = append(seen, int(v))
	}
	sort.Ints(seen)
	for i, v := range seen {
		if v != i+1 {
			t.Fatalf("answered values are not 1..%d, one each: position %d holds %d (two increments decided on one copy)", len(replies), i, v)
		}
	}
}

// Concurrent increments of one counter through two instances: each answer
// is a distinct value, the values are 1..n, and PostgreSQL holds n.
func TestPostgresIncrementsAcrossInstances(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sqlClasses []string
	}{
		{"in memory", nil},
		{"sqlClasses", []string{"Counter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uri, servers := instances(t, 2, tc.sqlClasses...)
			id := createOn(t, servers, "Counter", map[string]any{"n": 0})
			const n = 200
			replies := concurrently(t, servers, n, 16, func(int) (string, string, any, map[string]string) {
				return "PUT", "/classes/Counter/" + id, map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1}}, servertest.Master()
			})
			checkSerialIncrements(t, replies, "n")
			if got := stored[float64](t, uri, "Counter", "n", id); got != n {
				t.Fatalf("PostgreSQL holds %v after %d answered increments", got, n)
			}
		})
	}
}

// AddUnique of distinct values through two instances keeps every one.
func TestPostgresAddUniqueAcrossInstances(t *testing.T) {
	uri, servers := instances(t, 2)
	id := createOn(t, servers, "Bag", map[string]any{"tags": []any{}})
	const n = 120
	replies := concurrently(t, servers, n, 16, func(i int) (string, string, any, map[string]string) {
		return "PUT", "/classes/Bag/" + id, map[string]any{"tags": map[string]any{"__op": "AddUnique", "objects": []any{fmt.Sprint("t", i)}}}, servertest.Master()
	})
	for i, r := range replies {
		if r.status != 200 {
			t.Fatalf("AddUnique %d: %d %v", i, r.status, r.body)
		}
	}
	var tags []string
	if err := json.Unmarshal(stored[[]byte](t, uri, "Bag", "tags", id), &tags); err != nil {
		t.Fatal(err)
	}
	if len(tags) != n {
		t.Fatalf("PostgreSQL holds %d of %d answered AddUnique values", len(tags), n)
	}
}

// Updates of different fields of one object, one after the other on A
// then B with no gap, both survive: B decides on a copy holding A's.
func TestPostgresDisjointFieldsAcrossInstances(t *testing.T) {
	uri, servers := instances(t, 2)
	a, b := servers[0], servers[1]
	id := createOn(t, servers, "Thing", map[string]any{"x": 0, "y": 0})
	for i := 1; i <= 20; i++ {
		if r := a.Do(t, "PUT", "/classes/Thing/"+id, map[string]any{"x": i}, servertest.Master()); r.Status != 200 {
			t.Fatalf("x=%d on A: %d %s", i, r.Status, r.Body)
		}
		if r := b.Do(t, "PUT", "/classes/Thing/"+id, map[string]any{"y": i}, servertest.Master()); r.Status != 200 {
			t.Fatalf("y=%d on B: %d %s", i, r.Status, r.Body)
		}
		x, y := stored[float64](t, uri, "Thing", "x", id), stored[float64](t, uri, "Thing", "y", id)
		if x != float64(i) || y != float64(i) {
			t.Fatalf("round %d: PostgreSQL holds x=%v y=%v (an answered update was lost)", i, x, y)
		}
	}
}

// An update or delete sent to B right after A answered the create finds
// the object: B decides on a copy that holds every commit made before.
func TestPostgresWriteRightAfterCreateElsewhere(t *testing.T) {
	_, servers := instances(t, 2)
	a, b := servers[0], servers[1]
	for i := 0; i < 20; i++ {
		r := a.Do(t, "POST", "/classes/Thing", map[string]any{"n": 1}, servertest.Master())
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		id := r.Map()["objectId"].(string)
		if r := b.Do(t, "PUT", "/classes/Thing/"+id, map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1}}, servertest.Master()); r.Status != 200 || r.Map()["n"] != 2.0 {
			t.Fatalf("object %d: increment on B right after the create on A: %d %s", i, r.Status, r.Body)
		}
		if r := a.Do(t, "DELETE", "/classes/Thing/"+id, nil, servertest.Master()); r.Status != 200 {
			t.Fatalf("object %d: delete on A right after the update on B: %d %s", i, r.Status, r.Body)
		}
	}
}

// A delete on A raced by increments on B: whichever order the commits
// took, an answered delete leaves no object behind (an increment decided
// on B's old copy would bring it back).
func TestPostgresDeleteRacesUpdateAcrossInstances(t *testing.T) {
	uri, servers := instances(t, 2)
	for round := 0; round < 10; round++ {
		id := createOn(t, servers, "Thing", map[string]any{"n": 0})
		replies := concurrently(t, servers, 8, 8, func(i int) (string, string, any, map[string]string) {
			if i == 0 {
				return "DELETE", "/classes/Thing/" + id, nil, servertest.Master()
			}
			return "PUT", "/classes/Thing/" + id, map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1}}, servertest.Master()
		})
		if replies[0].status != 200 {
			t.Fatalf("round %d: delete: %d %v", round, replies[0].status, replies[0].body)
		}
		for i, r := range replies[1:] {
			if r.status != 200 && r.body["code"] != 101.0 {
				t.Fatalf("round %d: increment %d: %d %v", round, i, r.status, r.body)
			}
		}
		if got := countStored(t, uri, "Thing", "objectId", id, false); got != 0 {
			t.Fatalf("round %d: the deleted object is back in PostgreSQL", round)
		}
	}
}

// A batch with transaction: true increments two counters; run through two
// instances at once, every answered batch counts in both.
func TestPostgresTransactionBatchAcrossInstances(t *testing.T) {
	uri, servers := instances(t, 2)
	x := createOn(t, servers, "Counter", map[string]any{"n": 0})
	y := createOn(t, servers, "Counter", map[string]any{"n": 0})
	const n = 100
	inc := map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1}}
	replies := concurrently(t, servers, n, 12, func(int) (string, string, any, map[string]string) {
		return "POST", "/batch", map[string]any{"transaction": true, "requests": []any{
			map[string]any{"method": "PUT", "path": "/parse/classes/Counter/" + x, "body": inc},
			map[string]any{"method": "PUT", "path": "/parse/classes/Counter/" + y, "body": inc},
		}}, servertest.Master()
	})
	for i, r := range replies {
		if r.status != 200 || len(r.list) != 2 {
			t.Fatalf("batch %d: %d %v %v", i, r.status, r.body, r.list)
		}
		for _, item := range r.list {
			if _, ok := item.(map[string]any)["success"]; !ok {
				t.Fatalf("batch %d: %v", i, r.list)
			}
		}
	}
	for _, id := range []string{x, y} {
		if got := stored[float64](t, uri, "Counter", "n", id); got != n {
			t.Fatalf("PostgreSQL holds %v in %s after %d answered transactions", got, id, n)
		}
	}
}

// Batches without a transaction, each a run of creates of a class the
// first batches bring into being, through two instances at once: the
// creates of a batch share one commit, yet each item keeps its own
// outcome (the last one's type never matches) and PostgreSQL holds every
// item that succeeded.
func TestPostgresBatchCreatesAcrossInstances(t *testing.T) {
	uri, servers := instances(t, 2)
	const n, good = 40, 4
	replies := concurrently(t, servers, n, 8, func(i int) (string, string, any, map[string]string) {
		var reqs []any
		for j := range good {
			reqs = append(reqs, map[string]any{"method": "POST", "path": "/parse/classes/Card", "body": map[string]any{"kind": "a", "i": i*10 + j}})
		}
		reqs = append(reqs, map[string]any{"method": "POST", "path": "/parse/classes/Card", "body": map[string]any{"kind": 5}})
		return "POST", "/batch", map[string]any{"requests": reqs}, servertest.Master()
	})
	for i, r := range replies {
		if r.status != 200 || len(r.list) != good+1 {
			t.Fatalf("batch %d: %d %v %v", i, r.status, r.body, r.list)
		}
		for j, item := range r.list {
			m := item.(map[string]any)
			if _, ok := m["success"]; ok != (j < good) {
				t.Fatalf("batch %d item %d: %v", i, j, m)
			}
			if e, _ := m["error"].(map[string]any); j == good && e["code"] != float64(111) {
				t.Fatalf("batch %d: the mistyped item answered %v, want code 111", i, m)
			}
		}
	}
	if got := countStored(t, uri, "Card", "kind", "a", false); got != n*good {
		t.Fatalf("PostgreSQL holds %d Cards, want %d", got, n*good)
	}
}

// raceOutcome checks that of replies exactly one succeeded with created
// and every other failed with code.
func raceOutcome(t *testing.T, what string, replies []reply, created, code int) {
	t.Helper()
	won := 0
	for i, r := range replies {
		switch {
		case r.status == created:
			won++
		case r.body["code"] != float64(code):
			t.Errorf("%s %d: %d %v, want %d or code %d", what, i, r.status, r.body, created, code)
		}
	}
	if won != 1 {
		t.Fatalf("%s: %d winners, want one", what, won)
	}
}

// Sign-ups of one username (any case), of one email (any case), and
// creations of one role name, raced through two instances: one winner,
// the others get Parse's code, and PostgreSQL holds one row.
func TestPostgresUniqueRacesAcrossInstances(t *testing.T) {
	uri, servers := instances(t, 2)
	app, master := servertest.App(), servertest.Master()
	for _, tc := range []struct {
		name          string
		path          string
		body          func(i int) map[string]any
		headers       map[string]string
		code          int
		table, column string
		value         string
		fold          bool
	}{
		{"username", "/users", func(i int) map[string]any {
			return map[string]any{"username": []string{"racer", "Racer"}[i%2], "password": "pw"}
		}, app, 202, "_User", "username", "racer", true},
		{"email", "/users", func(i int) map[string]any {
			return map[string]any{"username": fmt.Sprint("mail", i), "password": "pw", "email": []string{"same@example.com", "Same@Example.com"}[i%2]}
		}, app, 203, "_User", "email", "same@example.com", true},
		{"role name", "/roles", func(int) map[string]any {
			return map[string]any{"name": "Admins", "ACL": map[string]any{"*": map[string]any{"read": true}}}
		}, master, 137, "_Role", "name", "Admins", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 12
			replies := concurrently(t, servers, n, n, func(i int) (string, string, any, map[string]string) {
				return "POST", tc.path, tc.body(i), tc.headers
			})
			raceOutcome(t, tc.name, replies, 201, tc.code)
			if got := countStored(t, uri, tc.table, tc.column, tc.value, tc.fold); got != 1 {
				t.Fatalf("PostgreSQL holds %d rows with %s %q", got, tc.column, tc.value)
			}
		})
	}
}

// Sign-ups with one anonymous authData id raced through two instances
// make one user: the others log in as it or get 208.
func TestPostgresAuthDataRaceAcrossInstances(t *testing.T) {
	uri, servers := instances(t, 2)
	const n = 12
	replies := concurrently(t, servers, n, n, func(int) (string, string, any, map[string]string) {
		return "POST", "/users", map[string]any{"authData": map[string]any{"anonymous": map[string]any{"id": "9f0c1a52-7d3e-4b6a-8c1f-2a4b6c8d0e1f"}}}, servertest.App()
	})
	created := 0
	for i, r := range replies {
		switch {
		case r.status == 201:
			created++
		case r.status == 200 || r.body["code"] == 208.0:
		default:
			t.Fatalf("sign-up %d: %d %v", i, r.status, r.body)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var users int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM "_User"`).Scan(&users); err != nil {
		t.Fatal(err)
	}
	if created != 1 || users != 1 {
		t.Fatalf("%d sign-ups created a user, PostgreSQL holds %d users; want one", created, users)
	}
}

// Saves of one installationId raced through two instances all succeed
// (Parse merges them into one installation) and leave one installation.
func TestPostgresInstallationRaceAcrossInstances(t *testing.T) {
	uri, servers := instances(t, 2)
	const n = 12
	replies := concurrently(t, servers, n, n, func(i int) (string, string, any, map[string]string) {
		return "POST", "/installations", map[string]any{"installationId": "abcdef-0123", "deviceType": "android", "n": i}, servertest.App()
	})
	for i, r := range replies {
		if r.status != 200 && r.status != 201 {
			t.Fatalf("installation save %d: %d %v", i, r.status, r.body)
		}
	}
	if got := countStored(t, uri, "_Installation", "installationId", "abcdef-0123", false); got != 1 {
		t.Fatalf("PostgreSQL holds %d installations of one installationId", got)
	}
}

// Instances started at the same moment on an empty database all start
// (set-up DDL takes turns under an advisory lock).
func TestPostgresConcurrentFirstStart(t *testing.T) {
	for round := 0; round < 3; round++ {
		uri := pgtest.NewDatabase(t)
		const n = 3
		errs := make([]error, n)
		started := make([]*server.Server, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			opts, _, err := config.Load([]string{"--appId", servertest.AppID, "--masterKey", servertest.MasterKey,
				"--host", "127.0.0.1", "--port", "0", "--databaseURI", uri}, nil)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				started[i], errs[i] = server.Open(opts, nil)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: instance %d did not start: %v", round, i, err)
			}
			if started[i] != nil {
				started[i].Close()
			}
		}
		if t.Failed() {
			return
		}
	}
}
