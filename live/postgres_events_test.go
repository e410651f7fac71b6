package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// Event-stream test sizes: writers spread over every instance update a
// few objects, so that writes of one object from several instances
// interleave closely.
const (
	eventObjects = 4
	eventWriters = 6
	eventWrites  = 40 // per writer
)

// Every LiveQuery subscriber on every instance gets exactly one event per
// change, in each object's commit order (read back from _changes), while
// writers write through all instances; with Redis configured too. A last
// write of each object (the sentinel) tells a subscriber its events are in.
func TestPostgresOneOrderedEventStream(t *testing.T) {
	cases := []struct{ name, redis string }{{"without Redis", ""}, {"with Redis", redisURL}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.redis != "" {
				requireRedis(t)
			}
			uri := pgtest.NewDatabase(t)
			app := testAppID()
			instances := []*servertest.Server{startOn(t, uri, app, tc.redis), startOn(t, uri, app, tc.redis), startOn(t, uri, app, tc.redis)}
			h := appHeaders(app, servertest.MasterKey)
			var subs []*wsClient
			for _, s := range instances {
				c := dial(t, wsURL(s))
				c.send(map[string]any{"op": "connect", "applicationId": app})
				c.expect("connected")
				c.subscribe(1, "Message", map[string]any{}, nil)
				subs = append(subs, c)
			}
			ids := make([]string, eventObjects)
			for i := range ids {
				r := instances[i%3].Do(t, "POST", "/classes/Message", map[string]any{"token": "create"}, h)
				if r.Status != 201 {
					t.Fatalf("create: %d %s", r.Status, r.Body)
				}
				ids[i] = r.Map()["objectId"].(string)
			}
			errs := make(chan error, eventWriters)
			var wg sync.WaitGroup
			for w := range eventWriters {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range eventWrites {
						s := instances[(w+n)%3]
						id := ids[(w*7+n)%eventObjects]
						token := fmt.Sprintf("w%d-%d", w, n)
						if err := put(s.URL+"/classes/Message/"+id, map[string]any{"token": token}, h); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			for i, id := range ids {
				r := instances[i%3].Do(t, "PUT", "/classes/Message/"+id, map[string]any{"token": "end"}, h)
				if r.Status != 200 {
					t.Fatalf("sentinel: %d %s", r.Status, r.Body)
				}
			}
			want := commitOrder(t, uri, "Message")
			for i, c := range subs {
				got := received(t, c, len(ids))
				for _, id := range ids {
					if fmt.Sprint(got[id]) != fmt.Sprint(want[id]) {
						t.Errorf("instance %d, object %s: events\n%v\nwant (commit order)\n%v", i, id, got[id], want[id])
					}
				}
			}
		})
	}
}

// put sends one update and checks it was answered 200.
func put(url string, body map[string]any, headers map[string]string) error {
	enc, _ := json.Marshal(body)
	req, err := http.NewRequest("PUT", url, bytes.NewReader(enc))
	if err != nil {
		return err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("PUT %s: %d %s", url, resp.StatusCode, data)
	}
	return nil
}

// commitOrder is, per object of class, "op:token" for each of its commits
// in _changes order: what every subscriber must receive.
func commitOrder(t *testing.T, uri, class string) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT "records" FROM "_changes" ORDER BY "id"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var records []struct {
			Kind, Class, Key string
			Value            []byte
		}
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &records); err != nil {
			t.Fatal(err)
		}
		for _, r := range records {
			if r.Kind != "o" || r.Class != class {
				continue
			}
			var obj map[string]any
			json.Unmarshal(r.Value, &obj)
			op := "update"
			if len(out[r.Key]) == 0 {
				op = "create"
			}
			out[r.Key] = append(out[r.Key], fmt.Sprint(op, ":", obj["token"]))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// received reads c's events until each of objects objects has had its
// sentinel ("end"), as "op:token" per object.
func received(t *testing.T, c *wsClient, objects int) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	for ended := 0; ended < objects; {
		m := c.next()
		obj, _ := m["object"].(map[string]any)
		id, _ := obj["objectId"].(string)
		if obj == nil || id == "" {
			t.Fatalf("not an event: %v", m)
		}
		got[id] = append(got[id], fmt.Sprint(m["op"], ":", obj["token"]))
		if obj["token"] == "end" {
			ended++
		}
	}
	return got
}
