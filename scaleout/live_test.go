package scaleout

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// LiveQuery workload: liveWriters objects, each created and then updated
// liveUpdates times by one writer that moves over the instances, waiting
// for each answer: so the order of one object's commits is the order its
// writer made them (seq 0, 1, ...).
const (
	liveWriters = 6
	liveUpdates = 12
)

// testLiveQueryOrder: a subscriber on every instance must get, for each
// object, exactly create(seq 0), update(seq 1) ... update(seq
// liveUpdates), in that order, whichever instance made each change (each
// update sets seq alone, so a stale copy cannot change what it writes). The
// last update of each object tells a subscriber that object is complete;
// then one sentinel object created through each instance, after every
// writer was answered, tells it that nothing more is on its way (an extra
// event of a test object would come before the sentinels).
//
// With concurrent, each object's updates come at once from one writer per
// instance, each an Increment of seq: the value an event carries is then
// its commit's place in the object's order, so the same list must come
// (and a lost update shows as a value missing or repeated).
func testLiveQueryOrder(t *testing.T, cl *cluster, concurrent bool) {
	subs := make([]*liveClient, len(cl.instances))
	for i, in := range cl.instances {
		subs[i] = subscribe(t, in)
	}
	// Each object is created through the instance of its writer's turn and
	// known to every instance before the updates start: a PUT on another
	// instance right after the create is read_by_id's subject, not this one.
	ids := make([]string, liveWriters)
	for w := range ids {
		ids[w] = cl.createOn(t, cl.at(w, 0), liveClass, map[string]any{"w": w, "seq": 0})
	}
	var wg sync.WaitGroup
	for w := range liveWriters {
		if concurrent {
			// One writer per instance, all at once, each Incrementing seq:
			// the commits' order is the order of the values they made.
			for i, in := range cl.instances {
				wg.Add(1)
				go func() {
					defer wg.Done()
					url := in.url() + "/classes/" + liveClass + "/" + ids[w]
					for k := i; k < liveUpdates; k += len(cl.instances) {
						if rep := call("PUT", url, map[string]any{"seq": map[string]any{"__op": "Increment", "amount": 1}}); rep.status != 200 {
							t.Errorf("object %d: Increment on %s: HTTP %d %v %v", w, in.name, rep.status, rep.body, rep.err)
							return
						}
					}
				}()
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := ids[w]
			for seq := 1; seq <= liveUpdates; seq++ {
				url := cl.at(w, seq).url() + "/classes/" + liveClass + "/" + id
				if rep := call("PUT", url, map[string]any{"seq": seq}); rep.status != 200 {
					// The writer stops: the subscribers then miss its last
					// update, and say so.
					t.Errorf("writer %d: update seq %d: HTTP %d %v %v", w, seq, rep.status, rep.body, rep.err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, in := range cl.instances {
		mustCall(t, 201, "POST", in.url()+"/classes/"+liveClass, map[string]any{"sentinel": in.name})
	}
	want := make([]string, 0, liveUpdates+1)
	want = append(want, "create 0")
	for seq := 1; seq <= liveUpdates; seq++ {
		want = append(want, fmt.Sprint("update ", seq))
	}
	var checks sync.WaitGroup
	for i, sub := range subs {
		checks.Add(1)
		go func() {
			defer checks.Done()
			got, sentinels, err := sub.collect(len(cl.instances), len(want))
			name := cl.instances[i].name
			if err != nil {
				t.Errorf("subscriber on %s: %v (%d of %d sentinels)", name, err, sentinels, len(cl.instances))
			}
			for w := range liveWriters {
				if !slices.Equal(got[w], want) {
					t.Errorf("subscriber on %s, object of writer %d: events %v, want %v", name, w, got[w], want)
				}
			}
		}()
	}
	checks.Wait()
}

// collect reads events until it has seen sentinels sentinel objects and
// perObject events of each of the liveWriters objects, and returns each
// test object's events ("op seq") by writer. The sentinels are later in
// commit order than every test change, but LiveQuery promises order per
// object only (events of different objects may be delivered by different
// goroutines), so a sentinel may overtake another object's last event:
// the count completes the stream, and a missing or extra event shows in
// the comparison. It stops with an error when no event comes for
// eventTimeout or the connection ends (the bound of a failure).
func (c *liveClient) collect(sentinels, perObject int) (map[int][]string, int, error) {
	got := map[int][]string{}
	seen := 0
	complete := func() bool {
		for w := range liveWriters {
			if len(got[w]) < perObject {
				return false
			}
		}
		return true
	}
	for seen < sentinels || !complete() {
		select {
		case m, ok := <-c.events:
			if !ok {
				return got, seen, fmt.Errorf("the connection ended")
			}
			obj, _ := m["object"].(map[string]any)
			if _, ok := obj["sentinel"]; ok {
				seen++
				continue
			}
			w, isWriter := obj["w"].(float64)
			seq, _ := obj["seq"].(float64)
			if !isWriter {
				return got, seen, fmt.Errorf("unexpected message %v", m)
			}
			got[int(w)] = append(got[int(w)], fmt.Sprint(m["op"], " ", seq))
		case <-time.After(eventTimeout):
			return got, seen, fmt.Errorf("no event for %s", eventTimeout)
		}
	}
	return got, seen, nil
}
