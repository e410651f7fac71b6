package scaleout

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// write is one create or update of the kill test, as its client saw it.
type write struct {
	tag, value string
	outcome    outcome
}

// testKill9: every client creates objects and updates the ones it made,
// moving over the instances for its creates and updating each object
// through the instance that made it (a PUT on another instance right after
// the create is read_by_id's subject, not this one); once a third of the work is answered, the
// last instance is killed with SIGKILL and the clients go on through the
// others. Afterwards PostgreSQL must hold every answered write: each
// object its client's last answered value, or a later value whose write
// got no answer. The surviving instances must answer every write sent to
// them, before and after the kill.
func testKill9(t *testing.T, cl *cluster) {
	const class = "Durable"
	victim := cl.instances[len(cl.instances)-1]
	var (
		answeredWrites atomic.Int64
		killed         atomic.Bool
		afterKill      atomic.Int64 // writes the survivors answered after the kill
		killOnce       sync.Once
		mu             sync.Mutex
		writes         = map[string][]write{} // by tag, in the client's order
	)
	killAt := int64(cl.clients() * opsPerClient / 3)
	cl.parallel(func(c int) {
		r := newRand(c)
		type made struct {
			tag, id string
			home    *instance
		}
		var mine []made // the objects this client created
		for k := range opsPerClient {
			wasKilled := killed.Load()
			var alive []made
			for _, m := range mine {
				if m.home != victim || !wasKilled {
					alive = append(alive, m)
				}
			}
			var tag, value string
			var rep reply
			in := cl.at(c, k)
			if len(alive) == 0 || r.IntN(2) == 0 {
				if in == victim && wasKilled {
					in = cl.at(c, k+1)
				}
				tag, value = fmt.Sprintf("c%dk%d", c, k), "v0"
				rep = call("POST", in.url()+"/classes/"+class, map[string]any{"tag": tag, "v": value})
				if id, _ := rep.body["objectId"].(string); rep.status == 201 && id != "" {
					mine = append(mine, made{tag, id, in})
				}
			} else {
				m := alive[r.IntN(len(alive))]
				in, tag, value = m.home, m.tag, fmt.Sprint("v", k)
				rep = call("PUT", in.url()+"/classes/"+class+"/"+m.id, map[string]any{"v": value})
			}
			w := write{tag: tag, value: value}
			switch {
			case rep.status == 200 || rep.status == 201:
				if answeredWrites.Add(1) == killAt {
					killOnce.Do(func() { victim.kill9(); killed.Store(true) })
				}
				if wasKilled {
					afterKill.Add(1)
				}
			case in == victim && rep.status == 0:
				w.outcome = unknown // the victim died with it
			default:
				w.outcome = refused
				t.Errorf("client %d: write to %s %s: HTTP %d %v %v", c, in.name, tag, rep.status, rep.body, rep.err)
			}
			mu.Lock()
			writes[tag] = append(writes[tag], w)
			mu.Unlock()
		}
	})
	if !killed.Load() || afterKill.Load() == 0 {
		t.Fatalf("the kill was not mid-load: killed %v, %d writes answered after it", killed.Load(), afterKill.Load())
	}
	rows, err := cl.sql(t).Query(context.Background(), `SELECT "tag", "v" FROM "Durable"`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{}
	for rows.Next() {
		var tag, v string
		if err := rows.Scan(&tag, &v); err != nil {
			t.Fatal(err)
		}
		stored[tag] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for tag, ws := range writes {
		// Allowed: the last answered value and any value written after it
		// without an answer; absent only if no write was answered.
		last := -1
		for i, w := range ws {
			if w.outcome == answered {
				last = i
			}
		}
		allowed := map[string]bool{}
		for i, w := range ws {
			if i >= last && w.outcome != refused {
				allowed[w.value] = true
			}
		}
		v, present := stored[tag]
		switch {
		case !present && last < 0:
		case !present:
			lost++
			t.Errorf("object %s: answered writes %v, not in PostgreSQL", tag, ws)
		case !allowed[v]:
			lost++
			t.Errorf("object %s: PostgreSQL holds v=%q, the writes were %v", tag, v, ws)
		}
	}
	t.Logf("%d objects, %d answered writes (%d by the survivors after the kill), %d lost", len(writes), answeredWrites.Load(), afterKill.Load(), lost)
}
