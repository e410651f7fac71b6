package transport_test

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// Query tests: every where operator and query parameter through a real
// server. Each table row is one GET /classes/<class> with its parameters
// and the objects that must come back, named by their "label" field.
// Helpers here are prefixed with q so they stay apart from the other
// scenario files of this package.

// qCase is one query and what its reply must hold.
type qCase struct {
	name    string
	class   string         // default "Item"
	params  map[string]any // query parameters; non-strings are sent as JSON
	headers map[string]string

	// want lists the labels of the results: in order when the query has an
	// order, as a set otherwise. nil means "not checked"; use qNone for an
	// empty result.
	want  []string
	count int // expected count when >= 0 and the count parameter is set

	status int    // default 200
	code   int    // expected Parse error code of an error reply
	errHas string // substring of the error message
	has    []string
	hasNot []string
	check  func(t *testing.T, body map[string]any)
}

var qNone = []string{}

// qPath encodes a query as a URL path below the mount.
func qPath(class string, params map[string]any) string {
	vals := url.Values{}
	for k, v := range params {
		if s, ok := v.(string); ok {
			vals.Set(k, s)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		vals.Set(k, string(b))
	}
	p := "/classes/" + class
	if len(vals) > 0 {
		p += "?" + vals.Encode()
	}
	return p
}

// qRun runs the rows in order against srv.
func qRun(t *testing.T, srv *servertest.Server, rows []qCase) {
	t.Helper()
	for _, c := range rows {
		t.Run(c.name, func(t *testing.T) {
			class := c.class
			if class == "" {
				class = "Item"
			}
			headers := c.headers
			if headers == nil {
				headers = servertest.App()
			}
			res := srv.Do(t, "GET", qPath(class, c.params), nil, headers)
			qCheck(t, c, res)
		})
	}
}

// qCheck applies a row's expectations to a reply.
func qCheck(t *testing.T, c qCase, res servertest.Response) {
	t.Helper()
	body := string(res.Body)
	status := c.status
	if status == 0 {
		status = 200
	}
	if res.Status != status {
		t.Fatalf("status %d, want %d: %s", res.Status, status, qClip(body))
	}
	m := res.Map()
	if m == nil {
		t.Fatalf("reply is not a JSON object: %s", qClip(body))
	}
	if c.code != 0 {
		if got, _ := m["code"].(float64); int(got) != c.code {
			t.Errorf("code %v, want %d: %s", m["code"], c.code, qClip(body))
		}
	}
	if c.errHas != "" {
		if msg, _ := m["error"].(string); !strings.Contains(msg, c.errHas) {
			t.Errorf("error %q lacks %q", msg, c.errHas)
		}
	}
	for _, s := range c.has {
		if !strings.Contains(body, s) {
			t.Errorf("reply lacks %q: %s", s, qClip(body))
		}
	}
	for _, s := range c.hasNot {
		if strings.Contains(body, s) {
			t.Errorf("reply must not hold %q: %s", s, qClip(body))
		}
	}
	if res.Status != 200 {
		return
	}
	if c.want != nil {
		got := qLabels(t, m)
		want := append([]string(nil), c.want...)
		if _, ordered := c.params["order"]; !ordered {
			sort.Strings(got)
			sort.Strings(want)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("results %v, want %v", got, want)
		}
	}
	if _, counted := c.params["count"]; counted && c.count >= 0 {
		if got, ok := m["count"].(float64); !ok || int(got) != c.count {
			t.Errorf("count %v, want %d", m["count"], c.count)
		}
	}
	if c.check != nil {
		c.check(t, m)
	}
}

// qResults returns the results of a find reply.
func qResults(t *testing.T, m map[string]any) []map[string]any {
	t.Helper()
	list, ok := m["results"].([]any)
	if !ok {
		t.Fatalf("no results array: %v", m)
	}
	out := make([]map[string]any, len(list))
	for i, r := range list {
		obj, ok := r.(map[string]any)
		if !ok {
			t.Fatalf("result %d is not an object: %v", i, r)
		}
		out[i] = obj
	}
	return out
}

// qLabels lists the label field of every result ("?" when absent).
func qLabels(t *testing.T, m map[string]any) []string {
	t.Helper()
	out := []string{}
	for _, r := range qResults(t, m) {
		l, ok := r["label"].(string)
		if !ok {
			l = "?"
		}
		out = append(out, l)
	}
	return out
}

// qCreate creates an object and returns its objectId and createdAt.
func qCreate(t testing.TB, srv *servertest.Server, class string, fields map[string]any) (id, createdAt string) {
	t.Helper()
	res := srv.Do(t, "POST", "/classes/"+class, fields, servertest.Master())
	if res.Status != 201 {
		t.Fatalf("create %s %v: %d %s", class, fields, res.Status, qClip(string(res.Body)))
	}
	m := res.Map()
	id, _ = m["objectId"].(string)
	createdAt, _ = m["createdAt"].(string)
	return id, createdAt
}

// qBatchCreate creates n objects of a class through /batch, at most
// 20 per request (the default batch size).
func qBatchCreate(t testing.TB, srv *servertest.Server, class string, n int, fields func(i int) map[string]any) {
	t.Helper()
	for start := 0; start < n; start += 20 {
		var reqs []any
		for i := start; i < n && i < start+20; i++ {
			reqs = append(reqs, map[string]any{"method": "POST", "path": "/parse/classes/" + class, "body": fields(i)})
		}
		res := srv.Do(t, "POST", "/batch", map[string]any{"requests": reqs}, servertest.Master())
		if res.Status != 200 || strings.Contains(string(res.Body), `"error"`) {
			t.Fatalf("batch create: %d %s", res.Status, qClip(string(res.Body)))
		}
	}
}

func qPtr(class, id string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": class, "objectId": id}
}

func qDate(iso string) map[string]any { return map[string]any{"__type": "Date", "iso": iso} }

func qClip(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// qWorld is the dataset of the operator tests.
type qWorld struct {
	srv     *servertest.Server
	ids     map[string]string // label -> objectId (items and owners)
	created map[string]string // label -> createdAt
}

// qItems builds the Item/Owner dataset:
//
//	owners ann (vip, fav "a", boss bob), bob (fav "b"), cy (vip, fav "c")
//	a: n 1,  s "alpha",       d 2024-01-01, tags [x y], owner ann, others [bob cy], info {city Paris, zip 75}, flag true,  text "the quick brown fox"
//	b: n 2,  s "beta",        d 2024-02-01, tags [y z], owner bob, others [ann],    info {city Berlin, zip 10}, flag false, text "lazy dogs sleep"
//	c: n 3,  s "Gamma",       d 2024-03-01, tags [x],   owner ann,                  info {city paris},                      text "Quick thinking"
//	d: n 10, s "delta\nline",               tags [],                                                        flag true
//	e:       s "a.b*c",                     tags [z],   owner cy,  others [cy, ghost]
//	f: n 4,  s "fig",                       tags [y],   owner ghost (a missing Owner)
//
// Items are created in label order, a few milliseconds apart, so their
// createdAt order is the label order. ann's relation "likes" holds a and b.
func qItems(t *testing.T, edit func(o *config.Options)) *qWorld {
	t.Helper()
	srv := servertest.Start(t, edit)
	w := &qWorld{srv: srv, ids: map[string]string{}, created: map[string]string{}}
	w.ids["bob"], _ = qCreate(t, srv, "Owner", map[string]any{"label": "bob", "name": "bob", "vip": false, "fav": "b"})
	w.ids["ann"], _ = qCreate(t, srv, "Owner", map[string]any{"label": "ann", "name": "ann", "vip": true, "fav": "a",
		"boss": qPtr("Owner", w.ids["bob"])})
	w.ids["cy"], _ = qCreate(t, srv, "Owner", map[string]any{"label": "cy", "name": "cy", "vip": true, "fav": "c"})
	owner := func(l string) map[string]any {
		if l == "ghost" {
			return qPtr("Owner", "ghost000")
		}
		return qPtr("Owner", w.ids[l])
	}
	items := []map[string]any{
		{"label": "a", "n": 1, "s": "alpha", "d": qDate("2024-01-01T00:00:00.000Z"), "tags": []any{"x", "y"},
			"owner": owner("ann"), "others": []any{owner("bob"), owner("cy")},
			"info": map[string]any{"city": "Paris", "zip": 75}, "flag": true, "text": "the quick brown fox"},
		{"label": "b", "n": 2, "s": "beta", "d": qDate("2024-02-01T00:00:00.000Z"), "tags": []any{"y", "z"},
			"owner": owner("bob"), "others": []any{owner("ann")},
			"info": map[string]any{"city": "Berlin", "zip": 10}, "flag": false, "text": "lazy dogs sleep"},
		{"label": "c", "n": 3, "s": "Gamma", "d": qDate("2024-03-01T00:00:00.000Z"), "tags": []any{"x"},
			"owner": owner("ann"), "info": map[string]any{"city": "paris"}, "text": "Quick thinking"},
		{"label": "d", "n": 10, "s": "delta\nline", "tags": []any{}, "flag": true},
		{"label": "e", "s": "a.b*c", "tags": []any{"z"}, "owner": owner("cy"), "others": []any{owner("cy"), owner("ghost")}},
		{"label": "f", "n": 4, "s": "fig", "tags": []any{"y"}, "owner": owner("ghost")},
	}
	for _, it := range items {
		l := it["label"].(string)
		w.ids[l], w.created[l] = qCreate(t, srv, "Item", it)
		time.Sleep(3 * time.Millisecond)
	}
	res := srv.Do(t, "PUT", "/classes/Owner/"+w.ids["ann"], map[string]any{"likes": map[string]any{
		"__op": "AddRelation", "objects": []any{qPtr("Item", w.ids["a"]), qPtr("Item", w.ids["b"])}}}, servertest.Master())
	if res.Status != 200 {
		t.Fatalf("AddRelation: %d %s", res.Status, qClip(string(res.Body)))
	}
	return w
}

func qLen(t *testing.T, m map[string]any) int { return len(qResults(t, m)) }
