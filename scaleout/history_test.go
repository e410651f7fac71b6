package scaleout

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/live/redistest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// unmetGuarantees are subtests that fail on today's code, each with the
// guarantee of issue #29 it waits for. They skip, loudly, so that CI stays
// green until a fix is merged; whoever merges a fix deletes its line here.
// QUARRY_HISTORY_STRICT=1 runs them all regardless. Every guarantee the
// subtests check holds now: the list is empty.
var unmetGuarantees = map[string]string{}

// strictEnv names the variable that ignores unmetGuarantees.
const strictEnv = "QUARRY_HISTORY_STRICT"

// Workload shape: small enough for a shared 2-core machine (the whole
// test well under a minute), large enough that the clients of different
// instances overlap on every object.
const (
	clientsPerInstance = 3 // of three instances
	opsPerClient       = 30
)

// cluster is the three instances every subtest drives.
type cluster struct {
	uri       string
	instances []*instance
}

// at is the instance client c uses for its k-th operation: each client
// moves round-robin over the instances, as behind a balancer.
func (cl *cluster) at(c, k int) *instance { return cl.instances[(c+k)%len(cl.instances)] }

// clients is the number of concurrent clients, the same whatever the
// number of instances.
func (cl *cluster) clients() int { return clientsPerInstance * 3 }

// parallel runs work for every client at once and waits for all; each
// of started runs once every client's goroutine exists (a start signal
// for races).
func (cl *cluster) parallel(work func(c int), started ...func()) {
	var wg sync.WaitGroup
	for c := range cl.clients() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(c)
		}()
	}
	for _, f := range started {
		f()
	}
	wg.Wait()
}

// createEverywhere creates an object through the first instance and waits
// until every instance serves it by id, so that a subtest's concurrent
// phase starts from an object all of them know (set-up, not a check).
func (cl *cluster) createEverywhere(t *testing.T, class string, fields map[string]any) string {
	t.Helper()
	return cl.createOn(t, cl.instances[0], class, fields)
}

// createOn is createEverywhere through instance from.
func (cl *cluster) createOn(t *testing.T, from *instance, class string, fields map[string]any) string {
	t.Helper()
	id := mustCall(t, 201, "POST", from.url()+"/classes/"+class, fields)["objectId"].(string)
	deadline := time.Now().Add(eventTimeout)
	for _, in := range cl.instances {
		for call("GET", in.url()+"/classes/"+class+"/"+id, nil).status != 200 {
			if time.Now().After(deadline) {
				t.Fatalf("set-up: %s/%s not on instance %s within %s", class, id, in.name, eventTimeout)
			}
			time.Sleep(5 * time.Millisecond) // polling another process during set-up
		}
	}
	return id
}

// guarantees are the subtests, one per guarantee; kill_9 runs last since
// it kills an instance.
var guarantees = []struct {
	name string
	run  func(*testing.T, *cluster)
}{
	{"counter", func(t *testing.T, cl *cluster) { testCounter(t, cl, "Counter") }},
	{"counter_sql", func(t *testing.T, cl *cluster) { testCounter(t, cl, sqlCounterClass) }},
	{"disjoint_fields", testDisjointFields},
	{"add_unique_set", testAddUniqueSet},
	{"signup_race", testSignUpRace},
	{"authdata_race", testAuthDataRace},
	{"device_token_race", testDeviceTokenRace},
	{"read_by_id", testReadByID},
	{"livequery_order", func(t *testing.T, cl *cluster) { testLiveQueryOrder(t, cl, false) }},
	{"livequery_concurrent", func(t *testing.T, cl *cluster) { testLiveQueryOrder(t, cl, true) }},
	{"schema_race", testSchemaRace},
	{"kill_9", testKill9},
}

// startCluster starts n instances on a fresh database, one after the
// other: the first creates the tables (two first starts at once are #29
// guarantee 5, not this test's subject).
func startCluster(t *testing.T, n int, extra ...string) *cluster {
	t.Helper()
	cl := &cluster{uri: pgtest.NewDatabase(t)}
	for _, name := range []string{"A", "B", "C"}[:n] {
		cl.instances = append(cl.instances, startInstance(t, name, cl.uri, extra...))
	}
	return cl
}

// The guarantees of several instances on one PostgreSQL database (issue
// #29, docs/scaling.md), each its own subtest over one cluster of three
// quarry processes.
func TestThreeInstancesHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three quarry processes")
	}
	cl := startCluster(t, 3)
	strict := os.Getenv(strictEnv) == "1"
	for _, g := range guarantees {
		t.Run(g.name, func(t *testing.T) {
			if gap, unmet := unmetGuarantees[g.name]; unmet && !strict {
				t.Skipf("\n\n*** SKIPPED, KNOWN GAP: %s fails on this code: %s ***\n*** run with %s=1 to see it fail; delete its line in unmetGuarantees once fixed ***\n",
					g.name, gap, strictEnv)
			}
			g.run(t, cl)
		})
	}
}

// LiveQuery order and completeness again with liveQuery.redisURL set on
// every instance (Redis then carries the changes to LiveQuery): the
// guarantee holds with or without Redis.
func TestThreeInstancesLiveQueryRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three quarry processes")
	}
	redistest.Require(t, "the scale-out LiveQuery test with Redis")
	cl := startCluster(t, 3, "--liveQuery.redisURL", redistest.URL)
	t.Cleanup(func() { redistest.DropKeys(t, appID) })
	for _, concurrent := range []bool{false, true} {
		name := map[bool]string{false: "livequery_order_redis", true: "livequery_concurrent_redis"}[concurrent]
		t.Run(name, func(t *testing.T) {
			if gap, unmet := unmetGuarantees[name]; unmet && os.Getenv(strictEnv) != "1" {
				t.Skipf("\n\n*** SKIPPED, KNOWN GAP: %s fails on this code: %s ***\n*** run with %s=1 to see it fail; delete its line in unmetGuarantees once fixed ***\n",
					name, gap, strictEnv)
			}
			testLiveQueryOrder(t, cl, concurrent)
		})
	}
}

// The same workloads and checks with every client on one instance, which
// meets every guarantee: this checks the models and the clients
// themselves (a failure here is a wrong model, not a scale-out gap), so
// that a failure of the three-instance test means what it says. kill_9
// needs another instance to survive and is left out.
func TestOneInstanceHistories(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a quarry process")
	}
	cl := startCluster(t, 1)
	for _, g := range guarantees {
		if g.name == "kill_9" {
			continue
		}
		t.Run(g.name, func(t *testing.T) { g.run(t, cl) })
	}
}

// newRand is client c's random source, the same on every run.
func newRand(c int) *rand.Rand { return rand.New(rand.NewPCG(uint64(c), 29)) }

// testCounter: concurrent Increments of one counter and GETs, every client
// moving over the instances. Each Increment answers the new value, so two
// that answer the same value (a lost update) have no serial order, nor
// has a GET that misses an Increment answered before it started.
func testCounter(t *testing.T, cl *cluster, class string) {
	id := cl.createEverywhere(t, class, map[string]any{"n": 0})
	h := newHistory()
	cl.parallel(func(c int) {
		r := newRand(c)
		for k := range opsPerClient {
			url := cl.at(c, k).url() + "/classes/" + class + "/" + id
			inc := r.IntN(10) < 7
			h.record(c, counterIn{key: id, inc: inc}, func() (any, bool) {
				var rep reply
				if inc {
					rep = call("PUT", url, map[string]any{"n": map[string]any{"__op": "Increment", "amount": 1}})
				} else {
					rep = call("GET", url, nil)
				}
				n, isNumber := rep.body["n"].(float64)
				switch {
				case rep.err != nil && rep.status == 0:
					return counterOut{outcome: unknown}, inc
				case rep.status != 200 || !isNumber:
					return counterOut{outcome: refused, detail: fmt.Sprintf("HTTP %d %v", rep.status, rep.body)}, false
				}
				return counterOut{value: int64(n)}, false
			})
		}
	})
	h.check(t, counterModel, class+" counter")
}

// testDisjointFields: three objects, each with three fields; every field
// has its own writers (clients c with c%3 == field write field c%3 of
// object c/3), so no two writers ever set the same field, and GETs read
// all three. An update from a copy that missed another instance's update
// of another field writes the old value back: no serial order has that.
func testDisjointFields(t *testing.T, cl *cluster) {
	const class = "Fields"
	objects := cl.clients() / registerFields
	ids := make([]string, objects)
	for o := range ids {
		ids[o] = cl.createEverywhere(t, class, map[string]any{})
	}
	h := newHistory()
	cl.parallel(func(c int) {
		r := newRand(c)
		id, field := ids[c/registerFields%objects], c%registerFields
		for k := range opsPerClient {
			url := cl.at(c, k).url() + "/classes/" + class + "/" + id
			in := registerIn{key: id, field: -1}
			if r.IntN(10) < 6 {
				in.field, in.value = field, fmt.Sprintf("c%dk%d", c, k)
			}
			h.record(c, in, func() (any, bool) {
				var rep reply
				if in.field >= 0 {
					rep = call("PUT", url, map[string]any{fmt.Sprint("f", in.field): in.value})
				} else {
					rep = call("GET", url, nil)
				}
				switch {
				case rep.err != nil && rep.status == 0:
					return registerOut{outcome: unknown}, in.field >= 0
				case rep.status != 200:
					return registerOut{outcome: refused, detail: fmt.Sprintf("HTTP %d %v", rep.status, rep.body)}, false
				}
				var out registerOut
				for f := range registerFields {
					out.fields[f], _ = rep.body[fmt.Sprint("f", f)].(string)
				}
				return out, false
			})
		}
	})
	h.check(t, registerModel, "disjoint fields")
}

// testAddUniqueSet: concurrent AddUnique of distinct values to one array
// (each answers the whole array after it) and GETs of the array.
func testAddUniqueSet(t *testing.T, cl *cluster) {
	const class = "Sets"
	id := cl.createEverywhere(t, class, map[string]any{})
	h := newHistory()
	cl.parallel(func(c int) {
		r := newRand(c)
		for k := range opsPerClient {
			url := cl.at(c, k).url() + "/classes/" + class + "/" + id
			in := setIn{key: id}
			if r.IntN(10) < 7 {
				in.value = fmt.Sprintf("c%dk%d", c, k)
			}
			h.record(c, in, func() (any, bool) {
				var rep reply
				if in.value != "" {
					rep = call("PUT", url, map[string]any{"s": map[string]any{"__op": "AddUnique", "objects": []string{in.value}}})
				} else {
					rep = call("GET", url, nil)
				}
				switch {
				case rep.err != nil && rep.status == 0:
					return setOut{outcome: unknown}, in.value != ""
				case rep.status != 200:
					return setOut{outcome: refused, detail: fmt.Sprintf("HTTP %d %v", rep.status, rep.body)}, false
				}
				raw, _ := rep.body["s"].([]any)
				members := make([]string, 0, len(raw))
				for _, m := range raw {
					members = append(members, fmt.Sprint(m))
				}
				return setOut{members: setOf(members)}, false
			})
		}
	})
	h.check(t, setModel, "AddUnique set")
}
