package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/valyala/fastjson"
)

// The reply checks. Each parses its reply once with the worker's
// fastjson.Parser (reused, so a steady run allocates nothing for parsing)
// and fails on anything but a well-formed reply that says exactly what the
// model of the seeded data says. Where a key appears twice in an object,
// the first one counts, as it did when the checks used gjson's Get.

// parse parses body with the worker's parser, which rejects a truncated
// or unbalanced reply and bytes after the value. Its escape and number
// syntax is laxer than RFC 8259 (it keeps an unknown escape such as \1
// as written, and takes 01): a reply with a backslash, rare from either
// server, is validated first, so escapes are held to the grammar. Other
// replies are not (validating doubled a query check's cost, and the gjson
// checks this replaced validated nothing); every value a check compares
// is still read and compared strictly.
func (w *worker) parse(body []byte) (*fastjson.Value, error) {
	w.escaped = bytes.IndexByte(body, '\\') >= 0
	if w.escaped {
		if err := fastjson.ValidateBytes(body); err != nil {
			return nil, fmt.Errorf("malformed JSON: %w", err)
		}
	}
	return w.parser.ParseBytes(body)
}

// first is the first member of o named key, nil if there is none or o is
// nil. Object.Get compares keys as written before it compares them
// unescaped, so it would take a later "n" over an earlier "\u006e"; Visit
// compares unescaped keys in the reply's order but costs more, so it is
// used only for a reply with a backslash somewhere.
func (w *worker) first(o *fastjson.Object, key string) *fastjson.Value {
	if o == nil {
		return nil
	}
	if !w.escaped {
		return o.Get(key)
	}
	var found *fastjson.Value
	o.Visit(func(k []byte, v *fastjson.Value) {
		if found == nil && string(k) == key {
			found = v
		}
	})
	return found
}

// maxExactInt is the largest integer every float64 up to it holds exactly.
const maxExactInt = 1<<53 - 1

// wholeNumber is v's value if v is a number with no fraction (1, 1.0 or
// 1e0) within ±2^53; ok is false for anything else, nil included.
func wholeNumber(v *fastjson.Value) (n int, ok bool) {
	if v == nil || v.Type() != fastjson.TypeNumber {
		return 0, false
	}
	if n, err := v.Int(); err == nil && n >= -maxExactInt && n <= maxExactInt {
		return n, true
	}
	f, err := v.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxExactInt {
		return 0, false
	}
	return int(f), true
}

// isString reports whether v is a string whose value is want.
func isString(v *fastjson.Value, want string) bool {
	if v == nil || v.Type() != fastjson.TypeString {
		return false
	}
	s, err := v.StringBytes()
	return err == nil && string(s) == want
}

// nonEmptyString reports whether v is a string other than "".
func nonEmptyString(v *fastjson.Value) bool {
	if v == nil || v.Type() != fastjson.TypeString {
		return false
	}
	s, err := v.StringBytes()
	return err == nil && len(s) > 0
}

// raw is v as JSON, clipped, for messages.
func raw(v *fastjson.Value, n int) string {
	if v == nil {
		return "(absent)"
	}
	return clip(v.String(), n)
}

// findResults is the first "results" member of a find reply, which must
// be an array.
func findResults(w *worker, body []byte) ([]*fastjson.Value, error) {
	v, err := w.parse(body)
	if err != nil {
		return nil, err
	}
	results := w.first(v.GetObject(), "results")
	if results == nil || results.Type() != fastjson.TypeArray {
		return nil, fmt.Errorf("no results array in %s", clip(string(body), 120))
	}
	return results.GetArray(), nil
}

// resultN is the first "n" of a result, which must be a whole number.
func resultN(w *worker, result *fastjson.Value) (int, error) {
	n, ok := wholeNumber(w.first(result.GetObject(), "n"))
	if !ok {
		return 0, fmt.Errorf("result without a number n: %s", raw(result, 120))
	}
	return n, nil
}

// resultNs reads the "n" of every result into w.ns.
func resultNs(w *worker, body []byte) ([]int, error) {
	results, err := findResults(w, body)
	if err != nil {
		return nil, err
	}
	ns := w.ns[:0]
	for _, r := range results {
		n, err := resultN(w, r)
		if err != nil {
			return nil, err
		}
		ns = append(ns, n)
	}
	w.ns = ns
	return ns, nil
}

// checkSet: the results are exactly the items want (sorted), in any order.
func checkSet(w *worker, body []byte, want []int) error {
	ns, err := resultNs(w, body)
	if err != nil {
		return err
	}
	return sameSet(ns, want)
}

// sameSet sorts ns and compares it with want (sorted).
func sameSet(ns, want []int) error {
	if len(ns) != len(want) {
		return fmt.Errorf("%d results, want %d", len(ns), len(want))
	}
	slices.Sort(ns)
	if !slices.Equal(ns, want) {
		return fmt.Errorf("wrong objects: got n=%v, want n=%v", head(ns), head(want))
	}
	return nil
}

// checkSeq: the results are exactly the items want, in that order.
func checkSeq(w *worker, body []byte, want []int) error {
	ns, err := resultNs(w, body)
	if err != nil {
		return err
	}
	if !slices.Equal(ns, want) {
		return fmt.Errorf("got n=%v, want n=%v in this order", head(ns), head(want))
	}
	return nil
}

// checkBand: every item of must comes back, anything else returned is in
// may (items so close to a geo boundary that rounding decides), no item
// twice. must and may are sorted. w.ns keeps the reply's order.
func checkBand(w *worker, body []byte, must, may []int) error {
	ns, err := resultNs(w, body)
	if err != nil {
		return err
	}
	sorted := append(w.sorted[:0], ns...)
	w.sorted = sorted
	slices.Sort(sorted)
	found := 0
	for i, n := range sorted {
		if i > 0 && sorted[i-1] == n {
			return fmt.Errorf("n=%d returned twice", n)
		}
		if _, ok := slices.BinarySearch(must, n); ok {
			found++
		} else if _, ok := slices.BinarySearch(may, n); !ok {
			return fmt.Errorf("n=%d returned but does not match (%d results, want %d)", n, len(ns), len(must))
		}
	}
	if found != len(must) {
		return fmt.Errorf("%d results, want %d (missing %d)", len(ns), len(must), len(must)-found)
	}
	return nil
}

func head(ns []int) []int {
	if len(ns) > 8 {
		return ns[:8]
	}
	return ns
}

// checkInclude: the results are exactly the items want, each with its
// owner embedded as a full BenchOwner object.
func checkInclude(w *worker, d *dataset, body []byte, want []int) error {
	results, err := findResults(w, body)
	if err != nil {
		return err
	}
	ns := w.ns[:0]
	var wrongOwner error
	for _, r := range results {
		n, err := resultN(w, r)
		if err != nil {
			return err
		}
		ns = append(ns, n)
		if wrongOwner != nil || n < 0 || n >= len(d.items) {
			continue // a wrong n fails the set comparison first
		}
		it := d.items[n]
		owner := w.first(r.GetObject(), "owner")
		o := owner.GetObject()
		if !isString(w.first(o, "__type"), "Object") || !isString(w.first(o, "objectId"), d.ownerIDs[it.Owner]) || !isString(w.first(o, "name"), ownerName(it.Owner)) {
			wrongOwner = fmt.Errorf("n=%d: owner not included as owner-%d: %s", it.N, it.Owner, raw(owner, 120))
		}
	}
	w.ns = ns
	if err := sameSet(ns, want); err != nil {
		return err
	}
	return wrongOwner
}

// checkCount: a count=1&limit=0 reply holds the count want and an empty
// results array.
func checkCount(w *worker, body []byte, want int) error {
	v, err := w.parse(body)
	if err != nil {
		return err
	}
	o := v.GetObject()
	if o == nil {
		return fmt.Errorf("count reply is not an object: %s", clip(string(body), 60))
	}
	count, results := w.first(o, "count"), w.first(o, "results")
	if n, ok := wholeNumber(count); !ok || n != want {
		return fmt.Errorf("count %s, want %d", raw(count, 60), want)
	}
	if results == nil || results.Type() != fastjson.TypeArray || len(results.GetArray()) != 0 {
		return fmt.Errorf("limit 0 returned %d results: %s", len(results.GetArray()), raw(results, 60))
	}
	return nil
}

// checkGot: a GET reply is the object objectId whose n is n.
func checkGot(w *worker, body []byte, objectID string, n int) error {
	v, err := w.parse(body)
	if err != nil {
		return err
	}
	o := v.GetObject()
	if o == nil {
		return fmt.Errorf("GET reply is not an object: %s", clip(string(body), 60))
	}
	id, nv := w.first(o, "objectId"), w.first(o, "n")
	if got, ok := wholeNumber(nv); !isString(id, objectID) || !ok || got != n {
		return fmt.Errorf("got objectId %s n %s", raw(id, 40), raw(nv, 40))
	}
	return nil
}

// isCreated checks a create reply: it must carry an objectId and a
// createdAt, both non-empty strings.
func isCreated(w *worker, v *fastjson.Value) error {
	o := v.GetObject()
	if !nonEmptyString(w.first(o, "objectId")) || !nonEmptyString(w.first(o, "createdAt")) {
		return fmt.Errorf("create reply without objectId and createdAt: %s", raw(v, 120))
	}
	return nil
}

// checkCreated checks the reply of one create.
func checkCreated(w *worker, body []byte) error {
	v, err := w.parse(body)
	if err != nil {
		return err
	}
	return isCreated(w, v)
}

// checkBatchCreated checks a batch reply of want creates: an array of
// want elements, each with a create reply as its first "success".
func checkBatchCreated(w *worker, body []byte, want int) error {
	v, err := w.parse(body)
	if err != nil {
		return err
	}
	if v.Type() != fastjson.TypeArray {
		return fmt.Errorf("batch reply is not an array: %s", clip(string(body), 120))
	}
	replies := v.GetArray()
	if len(replies) != want {
		return fmt.Errorf("%d results for %d requests", len(replies), want)
	}
	for _, r := range replies {
		success := w.first(r.GetObject(), "success")
		if success == nil {
			return fmt.Errorf("no success: %s", raw(r, 120))
		}
		if err := isCreated(w, success); err != nil {
			return err
		}
	}
	return nil
}

// checkCounter: an Increment reply carries the new count, a whole number
// of at least 1.
func checkCounter(w *worker, body []byte) error {
	v, err := w.parse(body)
	if err != nil {
		return err
	}
	if count, ok := wholeNumber(w.first(v.GetObject(), "count")); !ok || count < 1 {
		return fmt.Errorf("Increment reply without the new count: %s", clip(string(body), 120))
	}
	return nil
}

// checkLogin: a login reply carries a session token and the user's name.
func checkLogin(w *worker, body []byte, username string) error {
	v, err := w.parse(body)
	if err != nil {
		return err
	}
	o := v.GetObject()
	if !nonEmptyString(w.first(o, "sessionToken")) || !isString(w.first(o, "username"), username) {
		return fmt.Errorf("login reply without the session of %s: %s", username, clip(string(body), 120))
	}
	return nil
}
