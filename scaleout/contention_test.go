package scaleout

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Heavy contention on one object: many more clients than
// TestThreeInstancesHistories, every one of them incrementing the same
// counter through instance after instance, so that the instances' writes
// of it keep overlapping. An instance whose write lost a race decides it
// again under a lock that serialises the deciders of that object across
// instances (docs/scaling.md), so none may be refused for contention.
const (
	contendedClients = 64
	contendedOps     = 30
)

// TestThreeInstancesContendedCounter: every Increment is answered 200
// (none refused as "changed by other servers … try again"), the history
// of Increments and GETs has a serial order, and the stored value is the
// number of Increments answered.
func TestThreeInstancesContendedCounter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three quarry processes")
	}
	cl := startCluster(t, 3)
	for _, class := range []string{"Contended", sqlCounterClass} {
		t.Run(class, func(t *testing.T) { testContendedCounter(t, cl, class) })
	}
}

func testContendedCounter(t *testing.T, cl *cluster, class string) {
	id := cl.createEverywhere(t, class, map[string]any{"n": 0})
	h := newHistory()
	var mu sync.Mutex
	refusals := map[string]int{}
	increments := 0
	var wg sync.WaitGroup
	for c := range contendedClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newRand(c)
			for k := range contendedOps {
				url := cl.instances[(c+k)%len(cl.instances)].url() + "/classes/" + class + "/" + id
				inc := r.IntN(10) < 9
				out := h.record(c, counterIn{key: id, inc: inc}, func() (any, bool) {
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
				}).(counterOut)
				mu.Lock()
				switch {
				case out.outcome == refused:
					refusals[out.detail]++
				case inc && out.outcome == answered:
					increments++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for detail, n := range refusals {
		t.Errorf("%d operations refused: %s", n, detail)
	}
	h.check(t, counterModel, class+" contended counter")
	// A GET by id sees every write answered before it (read-your-writes);
	// for the sqlClasses class, PostgreSQL's row is read too.
	body := mustCall(t, 200, "GET", cl.instances[0].url()+"/classes/"+class+"/"+id, nil)
	stored, _ := body["n"].(float64)
	if class == sqlCounterClass {
		var row float64
		if err := cl.sql(t).QueryRow(context.Background(), `SELECT "n" FROM "`+class+`" WHERE "objectId" = $1`, id).Scan(&row); err != nil {
			t.Fatal(err)
		}
		if row != stored {
			t.Errorf("PostgreSQL holds %v, the GET answered %v", row, stored)
		}
	}
	if stored != float64(increments) {
		t.Errorf("the counter holds %v after %d Increments were answered", stored, increments)
	}
	t.Logf("%s: %d Increments answered", class, increments)
}
