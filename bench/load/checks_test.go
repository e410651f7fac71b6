package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkCase is one reply and whether the check must accept it.
type checkCase struct {
	name string
	body string
	ok   bool
}

// item3 is the result object of item n, as a server returns it.
func item3(d *dataset, n int) string { return string(mustJSON(storedItem(d, n, false))) }

// results wraps result objects in a find reply.
func results(objs ...string) string { return `{"results":[` + strings.Join(objs, ",") + `]}` }

// findCases are the replies every results check must judge alike: want is
// {1, 2, 3} in that order.
func findCases(d *dataset) []checkCase {
	a, b, c := item3(d, 1), item3(d, 2), item3(d, 3)
	return []checkCase{
		{"exact", results(a, b, c), true},
		{"white space everywhere", " {\n\t\"results\" : [ " + a + " ,\r\n" + b + " , " + c + " ] } \n", true},
		{"n written 2.0 and 3e0", results(a, `{"n":2.0}`, `{"n":3e0}`), true},
		{"escaped key", results(a, `{"\u006e":2}`, c), true},
		{"first n counts", results(a, `{"n":2,"n":9}`, c), true},
		{"first n escaped", results(a, `{"\u006e":2,"n":9}`, c), true},
		{"first n escaped and wrong", results(a, `{"\u006e":9,"n":2}`, c), false},
		{"first results counts", `{"results":[{"n":1},{"n":2},{"n":3}],"results":[{"n":4}]}`, true},
		{"first results wrong", `{"results":[{"n":4}],"results":[{"n":1},{"n":2},{"n":3}]}`, false},
		{"other members first", `{"count":3,"results":[{"x":[1,{"n":7}],"n":1},{"n":2},{"n":3}]}`, true},
		{"missing result", results(a, b), false},
		{"extra result", results(a, b, c, item3(d, 4)), false},
		{"duplicate result", results(a, b, b), false},
		{"duplicate instead of one", results(a, a, c), false},
		{"wrong result", results(a, b, item3(d, 5)), false},
		{"no results", `{}`, false},
		{"results null", `{"results":null}`, false},
		{"results an object", `{"results":{"n":1}}`, false},
		{"results a string", `{"results":"[]"}`, false},
		{"body an array", `[` + a + `,` + b + `,` + c + `]`, false},
		{"body empty", ``, false},
		{"error reply", `{"code":102,"error":"bad query"}`, false},
		{"n a string", results(a, b, `{"n":"3"}`), false},
		{"n null", results(a, b, `{"n":null}`), false},
		{"n true", results(a, b, `{"n":true}`), false},
		{"n a fraction", results(a, b, `{"n":3.5}`), false},
		{"n an object", results(a, b, `{"n":{"n":3}}`), false},
		{"n missing", results(a, b, `{"objectId":"x"}`), false},
		{"n only nested", results(a, b, `{"o":{"n":3}}`), false},
		{"first n wrong", results(a, b, `{"n":4,"n":3}`), false},
		{"result not an object", results(a, b, `3`), false},
		{"result an array", results(a, b, `[{"n":3}]`), false},
		{"truncated", results(a, b, c)[:len(results(a, b, c))-3], false},
		{"trailing garbage", results(a, b, c) + `x`, false},
		{"second value", results(a, b, c) + `{}`, false},
		{"missing comma", `{"results":[{"n":1}{"n":2},{"n":3}]}`, false},
		{"trailing comma", `{"results":[{"n":1},{"n":2},{"n":3},]}`, false},
		{"bad escape in a skipped string", results(a, b, `{"s":"\x","n":3}`), false},
		// The lexical grammar of values no check reads is not held
		// (as under the gjson checks): a raw control character or a
		// leading zero in a skipped member passes.
		{"control character in a skipped string", results(a, b, "{\"s\":\"a\nb\",\"n\":3}"), true},
		{"leading zero in a skipped number", results(a, b, `{"s":01,"n":3}`), true},
		{"bad literal elsewhere", results(a, b, `{"s":nul,"n":3}`), false},
		{"unquoted key", `{results:[{"n":1},{"n":2},{"n":3}]}`, false},
	}
}

func TestChecks_FindReplies(t *testing.T) {
	d := testData(100)
	want := []int{1, 2, 3}
	checks := map[string]func(w *worker, body []byte) error{
		"set":  func(w *worker, b []byte) error { return checkSet(w, b, want) },
		"seq":  func(w *worker, b []byte) error { return checkSeq(w, b, want) },
		"band": func(w *worker, b []byte) error { return checkBand(w, b, want, nil) },
	}
	for name, check := range checks {
		for _, tc := range findCases(d) {
			if err := check(&worker{}, []byte(tc.body)); (err == nil) != tc.ok {
				t.Errorf("%s, %s: err = %v, want ok %v", name, tc.name, err, tc.ok)
			}
		}
	}
	// An n that is not a whole number must fail even where reading it as
	// 0 would give the right answer.
	zero := []int{0, 1, 2}
	a, b := item3(d, 1), item3(d, 2)
	for _, tc := range []checkCase{
		{"0", results(`{"n":0}`, a, b), true},
		{"-0 and 0.0", results(`{"n":-0}`, a, b), true},
		{"0.0", results(`{"n":0.0}`, a, b), true},
		{"a string", results(`{"n":"0"}`, a, b), false},
		{"null", results(`{"n":null}`, a, b), false},
		{"false", results(`{"n":false}`, a, b), false},
		{"an empty object", results(`{"n":{}}`, a, b), false},
		{"a fraction", results(`{"n":0.5}`, a, b), false},
		{"missing", results(`{}`, a, b), false},
	} {
		if err := checkSet(&worker{}, []byte(tc.body), zero); (err == nil) != tc.ok {
			t.Errorf("set, n %s: err = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	// A reply with no results is an empty results array, nothing else.
	for _, tc := range []checkCase{
		{"empty", `{"results":[]}`, true},
		{"null", `{"results":null}`, false},
		{"an object", `{"results":{}}`, false},
		{"absent", `{}`, false},
	} {
		for name, check := range map[string]func(w *worker, body []byte) error{
			"set":  func(w *worker, b []byte) error { return checkSet(w, b, nil) },
			"seq":  func(w *worker, b []byte) error { return checkSeq(w, b, nil) },
			"band": func(w *worker, b []byte) error { return checkBand(w, b, nil, nil) },
		} {
			if err := check(&worker{}, []byte(tc.body)); (err == nil) != tc.ok {
				t.Errorf("%s, no results, %s: err = %v, want ok %v", name, tc.name, err, tc.ok)
			}
		}
	}
	// What only some of them accept.
	c := item3(d, 3)
	for _, tc := range []struct {
		name      string
		body      string
		check     func(w *worker, body []byte) error
		ok        bool
		checkName string
	}{
		{"another order", results(c, a, b), checks["set"], true, "set"},
		{"another order", results(c, a, b), checks["band"], true, "band"},
		{"another order", results(c, a, b), checks["seq"], false, "seq"},
		{"swapped pair", results(a, c, b), checks["seq"], false, "seq"},
		{"one of may too", results(a, b, c, item3(d, 9)), func(w *worker, body []byte) error { return checkBand(w, body, want, []int{9}) }, true, "band"},
		{"may only", results(a, b, item3(d, 9)), func(w *worker, body []byte) error { return checkBand(w, body, want, []int{9}) }, false, "band"},
		{"may twice", results(a, b, c, item3(d, 9), item3(d, 9)), func(w *worker, body []byte) error { return checkBand(w, body, want, []int{9}) }, false, "band"},
	} {
		if err := tc.check(&worker{}, []byte(tc.body)); (err == nil) != tc.ok {
			t.Errorf("%s, %s: err = %v, want ok %v", tc.checkName, tc.name, err, tc.ok)
		}
	}
}

func TestChecks_Include(t *testing.T) {
	d := testData(100)
	want := []int{1, 2}
	inc := func(n int) string { return string(mustJSON(storedItem(d, n, true))) }
	withOwner := func(n int, owner string) string {
		return fmt.Sprintf(`{"n":%d,"owner":%s}`, n, owner)
	}
	o2 := d.items[2].Owner
	owner := func(typ, id, name string) string {
		return fmt.Sprintf(`{"__type":%q,"className":"BenchOwner","objectId":%q,"name":%q}`, typ, id, name)
	}
	for _, tc := range []checkCase{
		{"included", results(inc(1), inc(2)), true},
		{"owner before n", results(inc(1), fmt.Sprintf(`{"owner":%s,"n":2}`, owner("Object", d.ownerIDs[o2], ownerName(o2)))), true},
		{"a pointer, not included", results(inc(1), withOwner(2, owner("Pointer", d.ownerIDs[o2], ownerName(o2)))), false},
		{"another owner", results(inc(1), withOwner(2, owner("Object", d.ownerIDs[o2+1], ownerName(o2)))), false},
		{"another name", results(inc(1), withOwner(2, owner("Object", d.ownerIDs[o2], ownerName(o2+1)))), false},
		{"first __type counts", results(inc(1), withOwner(2, fmt.Sprintf(`{"__type":"Pointer","__type":"Object","objectId":%q,"name":%q}`, d.ownerIDs[o2], ownerName(o2)))), false},
		{"no name", results(inc(1), withOwner(2, fmt.Sprintf(`{"__type":"Object","objectId":%q}`, d.ownerIDs[o2]))), false},
		{"owner a string", results(inc(1), withOwner(2, fmt.Sprintf("%q", d.ownerIDs[o2]))), false},
		{"owner null", results(inc(1), withOwner(2, "null")), false},
		{"no owner", results(inc(1), `{"n":2}`), false},
		{"first owner counts", results(inc(1), fmt.Sprintf(`{"n":2,"owner":null,"owner":%s}`, owner("Object", d.ownerIDs[o2], ownerName(o2)))), false},
		{"missing result", results(inc(1)), false},
		{"extra result", results(inc(1), inc(2), inc(3)), false},
		{"wrong result", results(inc(1), inc(3)), false},
		{"n out of range", results(inc(1), withOwner(1000, owner("Object", d.ownerIDs[o2], ownerName(o2)))), false},
		{"negative n", results(inc(1), withOwner(-1, owner("Object", d.ownerIDs[o2], ownerName(o2)))), false},
		{"malformed owner", results(inc(1), withOwner(2, `{"__type":"Object",}`)), false},
		{"no results", `{}`, false},
	} {
		if err := checkInclude(&worker{}, d, []byte(tc.body), want); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestChecks_SmallReplies(t *testing.T) {
	d := testData(100)
	id := d.itemIDs[7]
	get := func(b []byte) error { return checkGot(&worker{}, b, id, 7) }
	count := func(b []byte) error { return checkCount(&worker{}, b, 55) }
	batch := func(b []byte) error { return checkBatchCreated(&worker{}, b, 3) }
	login := func(b []byte) error { return checkLogin(&worker{}, b, "user-1") }
	create := func(b []byte) error { return checkCreated(&worker{}, b) }
	counter := func(b []byte) error { return checkCounter(&worker{}, b) }
	created := `{"success":{"objectId":"a1","createdAt":"` + testDate + `"}}`
	for _, tc := range []struct {
		check func([]byte) error
		checkCase
	}{
		{get, checkCase{"the object", item3(d, 7), true}},
		{get, checkCase{"n as 7.0", `{"objectId":"` + id + `","n":7.0}`, true}},
		{get, checkCase{"another object", item3(d, 8), false}},
		{get, checkCase{"right id, wrong n", `{"objectId":"` + id + `","n":8}`, false}},
		{get, checkCase{"n a string", `{"objectId":"` + id + `","n":"7"}`, false}},
		{get, checkCase{"n a fraction", `{"objectId":"` + id + `","n":7.5}`, false}},
		{get, checkCase{"no n", `{"objectId":"` + id + `"}`, false}},
		{get, checkCase{"no objectId", `{"n":7}`, false}},
		{get, checkCase{"objectId not a string", `{"objectId":["` + id + `"],"n":7}`, false}},
		{get, checkCase{"first objectId counts", `{"objectId":"x","objectId":"` + id + `","n":7}`, false}},
		{get, checkCase{"an error", `{"code":101,"error":"Object not found."}`, false}},
		{get, checkCase{"a find reply", results(item3(d, 7)), false}},
		{get, checkCase{"truncated", item3(d, 7)[:40], false}},
		{get, checkCase{"trailing garbage", item3(d, 7) + "]", false}},
		{count, checkCase{"the count", `{"results":[],"count":55}`, true}},
		{count, checkCase{"count first", `{"count":55,"results":[]}`, true}},
		{count, checkCase{"wrong count", `{"results":[],"count":54}`, false}},
		{count, checkCase{"count a string", `{"results":[],"count":"55"}`, false}},
		{count, checkCase{"no count", `{"results":[]}`, false}},
		{count, checkCase{"results returned", `{"results":[{"n":1}],"count":55}`, false}},
		{count, checkCase{"no results", `{"count":55}`, false}},
		{count, checkCase{"results not an array", `{"results":{},"count":55}`, false}},
		{count, checkCase{"malformed", `{"results":[],"count":55`, false}},
		{create, checkCase{"created", `{"objectId":"a1","createdAt":"` + testDate + `"}`, true}},
		{create, checkCase{"first objectId counts", `{"objectId":"","objectId":"a1","createdAt":"` + testDate + `"}`, false}},
		{create, checkCase{"no createdAt", `{"objectId":"a1"}`, false}},
		{create, checkCase{"empty objectId", `{"objectId":"","createdAt":"` + testDate + `"}`, false}},
		{create, checkCase{"an error", `{"code":137,"error":"duplicate"}`, false}},
		{create, checkCase{"malformed", `{"objectId":"a1","createdAt":"x"`, false}},
		{counter, checkCase{"the count", `{"count":3,"updatedAt":"` + testDate + `"}`, true}},
		{counter, checkCase{"zero", `{"count":0}`, false}},
		{counter, checkCase{"negative", `{"count":-2}`, false}},
		{counter, checkCase{"a string", `{"count":"3"}`, false}},
		{counter, checkCase{"an Increment op", `{"count":{"__op":"Increment","amount":1}}`, false}},
		{counter, checkCase{"no count", `{"updatedAt":"` + testDate + `"}`, false}},
		{batch, checkCase{"three created", `[` + created + `,` + created + `,` + created + `]`, true}},
		{batch, checkCase{"two", `[` + created + `,` + created + `]`, false}},
		{batch, checkCase{"four", `[` + created + `,` + created + `,` + created + `,` + created + `]`, false}},
		{batch, checkCase{"one failed", `[` + created + `,{"error":{"code":137,"error":"x"}},` + created + `]`, false}},
		{batch, checkCase{"one empty", `[` + created + `,{"success":{}},` + created + `]`, false}},
		{batch, checkCase{"one not an object", `[` + created + `,1,` + created + `]`, false}},
		{batch, checkCase{"not an array", `{"results":[]}`, false}},
		{login, checkCase{"logged in", `{"objectId":"u1","username":"user-1","sessionToken":"r:abc"}`, true}},
		{login, checkCase{"another user", `{"username":"user-2","sessionToken":"r:abc"}`, false}},
		{login, checkCase{"first username counts", `{"username":"user-2","username":"user-1","sessionToken":"r:abc"}`, false}},
		{login, checkCase{"no session", `{"username":"user-1"}`, false}},
		{login, checkCase{"empty session", `{"username":"user-1","sessionToken":""}`, false}},
	} {
		if err := tc.check([]byte(tc.body)); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// The fastjson checks must reject every reply the gjson checks rejected:
// random edits of good replies (a byte changed, dropped or doubled, or a
// JSON token swapped in) are judged by both, and an edit the old check
// caught must be caught by the new one too.
func TestChecks_RejectWhatGjsonRejected(t *testing.T) {
	d := testData(2000)
	set := d.matching(func(it *item) bool { return it.Category == 3 })
	in := []int{4, 50, 700}
	created := `{"success":{"objectId":"a1","createdAt":"` + testDate + `"}}`
	pairs := []struct {
		name      string
		body      []byte
		old, scan func(b []byte) error
	}{
		{"set", findReply(d, set, false), func(b []byte) error { return legacyCheckSet(b, set) }, func(b []byte) error { return checkSet(&worker{}, b, set) }},
		{"seq", findReply(d, set, false), func(b []byte) error { return legacyCheckSeq(b, set) }, func(b []byte) error { return checkSeq(&worker{}, b, set) }},
		{"band", findReply(d, set, false), func(b []byte) error { return legacyCheckBand(b, set, in) }, func(b []byte) error { return checkBand(&worker{}, b, set, in) }},
		{"include", findReply(d, in, true), func(b []byte) error { return legacyCheckInclude(d, b, in) }, func(b []byte) error { return checkInclude(&worker{}, d, b, in) }},
		{"count", []byte(`{"results":[],"count":55}`), func(b []byte) error { return legacyCheckCount(b, 55) }, func(b []byte) error { return checkCount(&worker{}, b, 55) }},
		{"get", mustJSON(storedItem(d, 7, false)), func(b []byte) error { return legacyCheckGot(b, d.itemIDs[7], 7) }, func(b []byte) error { return checkGot(&worker{}, b, d.itemIDs[7], 7) }},
		{"created", []byte(`{"objectId":"a1","createdAt":"` + testDate + `"}`), legacyCheckCreated, func(b []byte) error { return checkCreated(&worker{}, b) }},
		{"counter", []byte(`{"count":3,"updatedAt":"` + testDate + `"}`), legacyCheckCounter, func(b []byte) error { return checkCounter(&worker{}, b) }},
		{"batch", []byte(`[` + created + `,` + created + `]`), func(b []byte) error { return legacyCheckBatchCreated(b, 2) }, func(b []byte) error { return checkBatchCreated(&worker{}, b, 2) }},
		{"login", []byte(`{"username":"user-1","sessionToken":"r:abc"}`), func(b []byte) error { return legacyCheckLogin(b, "user-1") }, func(b []byte) error { return checkLogin(&worker{}, b, "user-1") }},
	}
	tokens := []string{`"`, `\`, `{`, `}`, `[`, `]`, `,`, `:`, `0`, `1`, `9`, `-`, `.`, `e`, `n`, ` `, `null`, `"n"`, `"n":1,`, `{"n":3},`, `"results"`, `true`, `"x"`}
	rng := rand.New(rand.NewPCG(14, 14))
	for _, p := range pairs {
		if err := p.old(p.body); err != nil {
			t.Fatalf("%s: the old check rejects the good reply: %v", p.name, err)
		}
		if err := p.scan(p.body); err != nil {
			t.Fatalf("%s: the new check rejects the good reply: %v", p.name, err)
		}
		caught := 0
		for range 3000 {
			b := mutate(rng, p.body, tokens)
			if p.old(b) == nil {
				continue
			}
			caught++
			if p.scan(b) == nil {
				t.Errorf("%s: the gjson check rejects, the fastjson one accepts: %s", p.name, clip(string(b), 400))
			}
		}
		if caught < 300 {
			t.Errorf("%s: only %d of 3000 edits were wrong replies: the test proves little", p.name, caught)
		}
	}
}

// mutate returns body with one random edit.
func mutate(rng *rand.Rand, body []byte, tokens []string) []byte {
	i := rng.IntN(len(body))
	out := bytes.Clone(body)
	switch rng.IntN(4) {
	case 0: // drop a byte
		return append(out[:i], body[i+1:]...)
	case 1: // double a byte
		return append(out[:i+1], body[i:]...)
	case 2: // replace a byte with a token
		return append(append(out[:i], tokens[rng.IntN(len(tokens))]...), body[i+1:]...)
	default: // insert a token
		return append(append(out[:i], tokens[rng.IntN(len(tokens))]...), body[i:]...)
	}
}
