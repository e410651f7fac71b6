package match

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
)

func whereOf(t testing.TB, s string) map[string]any {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(s), &w); err != nil {
		t.Fatal(err)
	}
	return w
}

func obj(t testing.TB, s string) schema.Object {
	t.Helper()
	var o schema.Object
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestCompileRefusesWhatWouldGoStale(t *testing.T) {
	relation := func(f string) (schema.Type, bool) {
		if f == "members" {
			return schema.TypeRelation, true
		}
		return "", false
	}
	for _, c := range []struct {
		where, msg string
	}{
		// Live joins are top-level subqueries only: not nested, not in an
		// $or, not with redirectClassNameForKey nor $relativeTime.
		{`{"post": {"$inQuery": {"className": "Post", "where": {"a": {"$inQuery": {"className": "X", "where": {}}}}}}}`, "nested"},
		{`{"post": {"$inQuery": {"className": "Post", "where": {"$relatedTo": {"object": {"__type": "Pointer", "className": "Post", "objectId": "x"}, "key": "likes"}}}}}`, "$relatedTo"},
		{`{"post": {"$inQuery": {"className": "Post", "where": {}, "redirectClassNameForKey": "likes"}}}`, "redirectClassNameForKey"},
		{`{"post": {"$inQuery": {"className": "Post", "where": {}}}, "at": {"$lt": {"$relativeTime": "in 1 day"}}}`, "$relativeTime"},
		{`{"$or": [{"a": 1}, {"$relatedTo": {"object": {"__type": "Pointer", "className": "Post", "objectId": "x"}, "key": "likes"}}]}`, "$relatedTo"},
		{`{"$and": [{"$relatedTo": {"object": {"__type": "Pointer", "className": "Post", "objectId": "x"}, "key": "likes"}}, {"$relatedTo": {"object": {"__type": "Pointer", "className": "Post", "objectId": "y"}, "key": "likes"}}]}`, "$relatedTo"},
		{`{"$or": [{"a": 1}, {"post": {"$inQuery": {"className": "Post", "where": {}}}}]}`, "$inQuery"},
		{`{"members": {"__type": "Pointer", "className": "_User", "objectId": "u1"}}`, "relation membership"},
	} {
		_, err := Compile("Thing", whereOf(t, c.where), Options{FieldType: relation})
		var pe *schema.Error
		if !errors.As(err, &pe) || pe.Code != schema.CodeInvalidQuery {
			t.Errorf("%s: err %v, want code 102", c.where, err)
			continue
		}
		if !contains(pe.Message, c.msg) {
			t.Errorf("%s: message %q lacks %q", c.where, pe.Message, c.msg)
		}
	}
	// Top-level subqueries compile to joins; Match tests the rest.
	q, err := Compile("Thing", whereOf(t, `{"a": 1, "post": {"$inQuery": {"className": "Post", "where": {"b": 2}}}, "n": {"$dontSelect": {"key": "k", "query": {"className": "Other", "where": {}}}}}`), Options{})
	if err != nil || len(q.Joins()) != 2 || !q.Match(schema.Object{"a": 1.0}) || q.Match(schema.Object{"a": 2.0}) {
		t.Fatalf("joins: %v %v", q, err)
	}
	// A top-level $relatedTo is a relation join on its owner.
	q, err = Compile("Thing", whereOf(t, `{"a": 1, "$relatedTo": {"object": {"__type": "Pointer", "className": "Post", "objectId": "x"}, "key": "likes"}}`), Options{})
	if err != nil || len(q.Joins()) != 1 || !q.Joins()[0].IsRelation() || q.Joins()[0].Key != "likes" ||
		q.Joins()[0].Inner.Class() != "Post" || !q.Joins()[0].Inner.Match(schema.Object{"objectId": "x"}) || q.Joins()[0].Inner.Match(schema.Object{"objectId": "y"}) {
		t.Fatalf("relation join: %v %v", q, err)
	}
	// What REST refuses is refused the same way.
	for w, code := range map[string]int{
		`{"a": {"$foo": 1}}`:   schema.CodeInvalidJSON,
		`{"ACL": 1}`:           schema.CodeInvalidQuery,
		`{"$bad key": 1}`:      schema.CodeInvalidKeyName,
		`{"a": {"$regex": 5}}`: schema.CodeInvalidJSON,
	} {
		_, err := Compile("Thing", whereOf(t, w), Options{})
		var pe *schema.Error
		if !errors.As(err, &pe) || pe.Code != code {
			t.Errorf("%s: err %v, want code %d", w, err, code)
		}
	}
	if _, err := Compile("bad-name", nil, Options{}); err == nil {
		t.Error("an invalid class name compiled")
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

func TestQueryBasics(t *testing.T) {
	q, err := Compile("Msg", whereOf(t, `{"room": "a", "n": {"$gt": 2}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !q.Match(obj(t, `{"room": "a", "n": 3}`)) || q.Match(obj(t, `{"room": "a", "n": 2}`)) || q.Match(nil) {
		t.Error("match results wrong")
	}
	if got := fmt.Sprint(q.Fields()); got != "[n room]" {
		t.Errorf("fields %s", got)
	}
	q2, _ := Compile("Msg", whereOf(t, `{"n": {"$gt": 2}, "room": "a"}`), Options{})
	if q.Key() != q2.Key() {
		t.Error("equal wheres have different keys")
	}
	if q.IsGet() {
		t.Error("IsGet on a find")
	}
	if g, _ := Compile("Msg", whereOf(t, `{"objectId": "abc"}`), Options{}); !g.IsGet() {
		t.Error("IsGet false for {objectId}")
	}
	// $relativeTime moves with the clock.
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	rq, err := Compile("Msg", whereOf(t, `{"at": {"$gt": {"$relativeTime": "1 hour ago"}}}`), Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	o := obj(t, `{"at": {"__type": "Date", "iso": "2023-12-31T23:30:00.000Z"}}`)
	if !rq.Match(o) {
		t.Error("30 minutes ago is within the last hour")
	}
	now = now.Add(time.Hour)
	if rq.Match(o) {
		t.Error("relative time did not move with the clock")
	}
	if len(rq.cover) != 0 {
		t.Error("a relative query has a cover")
	}
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		before, after, existed, deleted bool
		want                            Event
	}{
		{false, true, false, false, Create},
		{false, true, true, false, Enter},
		{true, true, true, false, Update},
		{true, false, true, false, Leave},
		{false, false, true, false, None},
		{true, false, true, true, Delete},
		{false, false, true, true, None},
	} {
		if got := Decide(c.before, c.after, c.existed, c.deleted); got != c.want {
			t.Errorf("Decide(%v,%v,%v,%v) = %v, want %v", c.before, c.after, c.existed, c.deleted, got, c.want)
		}
	}
	if Update.String() != "update" || None.String() != "" {
		t.Error("event names")
	}
}

func TestWatchAndProject(t *testing.T) {
	a := obj(t, `{"objectId": "x", "score": 1, "name": "a", "pos": {"x": 1}}`)
	b := obj(t, `{"objectId": "x", "score": 1, "name": "b", "pos": {"x": 1}}`)
	noScore := obj(t, `{"objectId": "x", "name": "b"}`)
	for _, c := range []struct {
		name    string
		ev      Event
		watch   []string
		a, b    schema.Object
		allowed bool
	}{
		{"update, watched field unchanged", Update, []string{"score"}, a, b, false},
		{"update, one watched field changed", Update, []string{"score", "name"}, a, b, true},
		{"update, no watch list", Update, nil, a, b, true},
		{"update, dotted watch unchanged", Update, []string{"pos.x"}, a, b, false},
		{"create setting a watched field", Create, []string{"score"}, nil, b, true},
		{"create without a watched field", Create, []string{"score"}, nil, noScore, false},
		{"enter, watched field unchanged", Enter, []string{"score"}, a, b, false},
		{"enter, watched field changed", Enter, []string{"name"}, a, b, true},
		{"leave always", Leave, []string{"score"}, a, b, true},
		{"delete always", Delete, []string{"score"}, a, nil, true},
	} {
		if got := WatchAllows(c.ev, c.watch, c.a, c.b); got != c.allowed {
			t.Errorf("%s: WatchAllows = %v, want %v", c.name, got, c.allowed)
		}
	}
	p := Project(obj(t, `{"className": "C", "objectId": "x", "createdAt": "t", "ACL": {}, "score": 1, "name": "n", "secret": 2}`),
		[]string{"score", "missing"}, []string{"secret"})
	if fmt.Sprint(p) != "map[ACL:map[] className:C createdAt:t objectId:x score:1]" {
		t.Errorf("project: %v", p)
	}
	if q := Project(a, nil, nil); fmt.Sprintf("%p", q) != fmt.Sprintf("%p", a) {
		t.Error("project copied without need")
	}
}

func TestIndexAddRemove(t *testing.T) {
	ix := NewIndex[int]()
	q1, _ := Compile("C", whereOf(t, `{"room": "a"}`), Options{})
	q1b, _ := Compile("C", whereOf(t, `{"room": "a"}`), Options{})
	q2, _ := Compile("C", whereOf(t, `{"n": {"$gt": 1}}`), Options{})
	g1 := ix.Add(q1, 1)
	if ix.Add(q1b, 2) != g1 {
		t.Fatal("identical queries do not share a group")
	}
	g2 := ix.Add(q2, 3)
	if s := ix.Stats(); s != (Stats{Members: 3, Groups: 2, Classes: 1}) {
		t.Errorf("stats %+v", s)
	}
	cands := ix.Candidates("C", nil, obj(t, `{"room": "a"}`), nil)
	if len(cands) != 2 {
		t.Errorf("candidates %d, want g1 and the fallback g2", len(cands))
	}
	if len(ix.Candidates("C", nil, obj(t, `{"room": "b"}`), nil)) != 1 {
		t.Error("room b reached the room a bucket")
	}
	if !ix.Remove(g1, 1) || ix.Remove(g1, 1) || !ix.Remove(g1, 2) || !ix.Remove(g2, 3) {
		t.Error("remove results")
	}
	if s := ix.Stats(); s != (Stats{}) || len(ix.classes) != 0 {
		t.Errorf("index not empty after removing everything: %+v %v", s, ix.classes)
	}
}

// TestCandidatesNeverMissAMatch is the index's contract, checked against
// brute force: every group whose query matches the original or the new
// object is among the candidates.
func TestCandidatesNeverMissAMatch(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	ix := NewIndex[int]()
	var groups []*Group[int]
	covered := 0
	for i := 0; i < 2000; i++ {
		w := randomWhere(r, 0)
		q, err := Compile("C", w, Options{})
		if err != nil {
			t.Fatalf("%v: %v", w, err)
		}
		if len(q.cover) > 0 {
			covered++
		}
		groups = append(groups, ix.Add(q, i))
	}
	if covered < len(groups)/2 {
		t.Errorf("only %d of %d random queries have a cover", covered, len(groups))
	}
	visited, matched := 0, 0
	for i := 0; i < 2000; i++ {
		var orig schema.Object
		if r.Intn(3) > 0 {
			orig = randomObject(r)
		}
		cur := randomObject(r)
		cands := map[*Group[int]]bool{}
		for _, g := range ix.Candidates("C", orig, cur, nil) {
			if cands[g] {
				t.Fatalf("group %s returned twice", g.query.key)
			}
			cands[g] = true
		}
		visited += len(cands)
		for _, g := range groups {
			if g.query.Match(orig) || g.query.Match(cur) {
				matched++
				if !cands[g] {
					t.Fatalf("missed: query %s matches\n orig %v\n obj  %v", g.query.key, orig, cur)
				}
			}
		}
	}
	t.Logf("%d groups (%d covered): %d candidates visited for %d matches over 2000 changes", len(groups), covered, visited, matched)
}

var (
	cats  = []string{"a", "b", "c", "d", "e", "f"}
	users = []string{"u1", "u2", "u3"}
)

func ptr(id string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": "_User", "objectId": id}
}

func randomPoint(r *rand.Rand) map[string]any {
	// Cluster points near interesting places: the antimeridian, the poles,
	// the origin, and anywhere.
	var lat, lng float64
	switch r.Intn(5) {
	case 0:
		lat, lng = r.Float64()*20-10, 179+r.Float64()*2
		if lng > 180 {
			lng -= 360
		}
	case 1:
		lat, lng = 85+r.Float64()*5, r.Float64()*360-180
	case 2:
		lat, lng = r.Float64()*2-1, r.Float64()*2-1
	default:
		lat, lng = r.Float64()*180-90, r.Float64()*360-180
	}
	return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
}

func randomObject(r *rand.Rand) schema.Object {
	o := schema.Object{"objectId": fmt.Sprintf("o%d", r.Intn(50))}
	if r.Intn(5) > 0 {
		o["cat"] = cats[r.Intn(len(cats))]
	}
	if r.Intn(4) > 0 {
		o["n"] = float64(r.Intn(6))
	}
	if r.Intn(3) > 0 {
		tags := []any{}
		for j := r.Intn(4); j > 0; j-- {
			tags = append(tags, cats[r.Intn(len(cats))])
		}
		o["tags"] = tags
	}
	if r.Intn(2) > 0 {
		o["owner"] = ptr(users[r.Intn(len(users))])
	}
	if r.Intn(2) > 0 {
		o["flag"] = r.Intn(2) == 0
	}
	if r.Intn(3) > 0 {
		o["loc"] = randomPoint(r)
	}
	if r.Intn(4) == 0 {
		o["info"] = map[string]any{"kind": cats[r.Intn(3)]}
	}
	return o
}

func randomWhere(r *rand.Rand, depth int) map[string]any {
	w := map[string]any{}
	for k := r.Intn(3) + 1; k > 0; k-- {
		c := r.Intn(17)
		if depth > 0 && (c >= 9 && c <= 12 || c == 16) {
			c = 0 // geo constraints are not allowed inside $or
		}
		switch c {
		case 0, 1:
			w["cat"] = cats[r.Intn(len(cats))]
		case 2:
			w["cat"] = map[string]any{"$in": []any{cats[r.Intn(6)], cats[r.Intn(6)]}}
		case 3:
			w["n"] = float64(r.Intn(6))
		case 4:
			w["n"] = map[string]any{"$gte": float64(r.Intn(6))}
		case 5:
			w["tags"] = cats[r.Intn(len(cats))]
		case 6:
			w["tags"] = map[string]any{"$all": []any{cats[r.Intn(6)], cats[r.Intn(6)]}}
		case 7:
			w["owner"] = ptr(users[r.Intn(len(users))])
		case 8:
			w["flag"] = r.Intn(2) == 0
		case 9:
			p := randomPoint(r)
			w["loc"] = map[string]any{"$nearSphere": p, "$maxDistanceInKilometers": float64(r.Intn(3000) + 1)}
		case 10:
			p := randomPoint(r)
			w["loc"] = map[string]any{"$geoWithin": map[string]any{"$centerSphere": []any{[]any{p["longitude"], p["latitude"]}, r.Float64() * 0.5}}}
		case 11:
			a, b := randomPoint(r), randomPoint(r)
			w["loc"] = map[string]any{"$within": map[string]any{"$box": []any{a, b}}}
		case 12:
			var pts []any
			for j := 0; j < 3+r.Intn(3); j++ {
				pts = append(pts, randomPoint(r))
			}
			w["loc"] = map[string]any{"$geoWithin": map[string]any{"$polygon": pts}}
		case 13:
			if depth < 2 {
				w["$or"] = []any{randomWhere(r, depth+1), randomWhere(r, depth+1)}
			}
		case 14:
			w["cat"] = map[string]any{"$ne": cats[r.Intn(6)]}
		case 15:
			w["info.kind"] = cats[r.Intn(3)]
		case 16:
			w["loc"] = map[string]any{"$nearSphere": randomPoint(r)} // the 100-mile default limit applies
		}
	}
	return w
}
