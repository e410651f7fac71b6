package main

import (
	"errors"
	"fmt"
	"slices"
)

// The reply checks. Each reads its reply once with a scanner (scan.go) and
// fails on anything but a well-formed reply that says exactly what the
// model of the seeded data says. Where a key appears twice in an object,
// the first one counts, as it did when the checks used gjson's Get.

// eachResult walks a find reply once: result is called with the cursor on
// each element of its first "results" member, which must be an array.
func eachResult(body []byte, result func(s *scanner) error) error {
	s := scanner{b: body}
	noResults := func() error { return fmt.Errorf("no results array in %s", clip(string(body), 120)) }
	if s.peek() != '{' {
		return noResults()
	}
	found := false
	err := s.object(func(k jsonString, s *scanner) error {
		if found || !k.is("results") {
			return s.skip()
		}
		found = true
		if s.peek() != '[' {
			return noResults()
		}
		return s.array(result)
	})
	if err == nil && !found {
		err = noResults()
	}
	if err == nil {
		err = s.end()
	}
	return err
}

// resultN reads the result object at the cursor and returns its first
// "n", which must be a whole number. Its other members go to other, or are
// skipped if other is nil.
func resultN(s *scanner, other func(k jsonString, s *scanner) error) (int, error) {
	start := s.i
	if s.peek() != '{' {
		raw, err := s.raw()
		if err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("result without a number n: %s", clip(string(raw), 120))
	}
	n, found := 0, false
	err := s.object(func(k jsonString, s *scanner) error {
		if !found && k.is("n") {
			found = true
			var err error
			n, err = s.intValue("n")
			if err != nil {
				return fmt.Errorf("result without a number n: %w", err)
			}
			return nil
		}
		if other != nil {
			return other(k, s)
		}
		return s.skip()
	})
	if err == nil && !found {
		err = fmt.Errorf("result without a number n: %s", clip(string(s.b[start:s.i]), 120))
	}
	return n, err
}

// resultNs reads the "n" of every result into w.ns.
func resultNs(w *worker, body []byte) ([]int, error) {
	ns := w.ns[:0]
	err := eachResult(body, func(s *scanner) error {
		n, err := resultN(s, nil)
		ns = append(ns, n)
		return err
	})
	w.ns = ns
	return ns, err
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

// includedOwner is the first "owner" member of a result, as read.
type includedOwner struct {
	found               bool
	raw                 []byte
	typ, objectID, name jsonString // zero unless a string
}

func (o *includedOwner) read(s *scanner) error {
	o.found = true
	start := s.i
	var vals [3]jsonString
	err := s.strMembers([]string{"__type", "objectId", "name"}, vals[:])
	o.typ, o.objectID, o.name = vals[0], vals[1], vals[2]
	o.raw = s.b[start:s.i]
	return err
}

// checkInclude: the results are exactly the items want, each with its
// owner embedded as a full BenchOwner object.
func checkInclude(w *worker, d *dataset, body []byte, want []int) error {
	ns := w.ns[:0]
	var wrongOwner error
	err := eachResult(body, func(s *scanner) error {
		var o includedOwner
		n, err := resultN(s, func(k jsonString, s *scanner) error {
			if !o.found && k.is("owner") {
				return o.read(s)
			}
			return s.skip()
		})
		ns = append(ns, n)
		if err != nil || wrongOwner != nil || n < 0 || n >= len(d.items) {
			return err // a wrong n fails the set comparison first
		}
		it := d.items[n]
		if !o.typ.is("Object") || !o.objectID.is(d.ownerIDs[it.Owner]) || !o.name.is(ownerName(it.Owner)) {
			wrongOwner = fmt.Errorf("n=%d: owner not included as owner-%d: %s", it.N, it.Owner, clip(string(o.raw), 120))
		}
		return nil
	})
	w.ns = ns
	if err != nil {
		return err
	}
	if err := sameSet(ns, want); err != nil {
		return err
	}
	return wrongOwner
}

// checkCount: a count=1&limit=0 reply holds the count want and an empty
// results array.
func checkCount(body []byte, want int) error {
	s := scanner{b: body}
	var count, results []byte
	countOK, nResults, resultsOK := false, 0, false
	err := s.object(func(k jsonString, s *scanner) error {
		switch {
		case count == nil && k.is("count"):
			start := s.i
			if c := s.peek(); c == '-' || isDigit(c) {
				num, err := s.number()
				if err != nil {
					return err
				}
				n, ok := integer(num)
				countOK = ok && n == want
			} else if err := s.skip(); err != nil {
				return err
			}
			count = s.b[start:s.i]
			return nil
		case results == nil && k.is("results"):
			start := s.i
			if s.peek() != '[' {
				_, err := s.raw()
				results = s.b[start:s.i]
				return err
			}
			resultsOK = true
			err := s.array(func(s *scanner) error {
				nResults++
				return s.skip()
			})
			results = s.b[start:s.i]
			return err
		}
		return s.skip()
	})
	if err == nil {
		err = s.end()
	}
	switch {
	case err != nil:
		return err
	case !countOK:
		return fmt.Errorf("count %s, want %d", clip(string(count), 60), want)
	case !resultsOK || nResults != 0:
		return fmt.Errorf("limit 0 returned %d results: %s", nResults, clip(string(results), 60))
	}
	return nil
}

// checkGot: a GET reply is the object objectId whose n is n.
func checkGot(body []byte, objectID string, n int) error {
	s := scanner{b: body}
	var id jsonString
	var idRaw, nRaw []byte
	gotN, nOK := 0, false
	err := s.object(func(k jsonString, s *scanner) error {
		switch {
		case idRaw == nil && k.is("objectId"):
			start := s.i
			if s.peek() == '"' {
				var err error
				id, err = s.str()
				idRaw = s.b[start:s.i]
				return err
			}
			var err error
			idRaw, err = s.raw()
			return err
		case nRaw == nil && k.is("n"):
			start := s.i
			var err error
			gotN, err = s.intValue("n")
			nOK = err == nil
			if err != nil && !errors.Is(err, errNotInteger) {
				return err
			}
			nRaw = s.b[start:s.i]
			return nil
		}
		return s.skip()
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return err
	}
	if !id.is(objectID) || !nOK || gotN != n {
		return fmt.Errorf("got objectId %s n %s", clip(string(idRaw), 40), clip(string(nRaw), 40))
	}
	return nil
}

// strMembers reads the object at the cursor, keeping in vals[i] the first
// member named names[i] if it is a string (zero if it is not, or absent).
// A value that is not an object leaves every vals[i] zero.
func (s *scanner) strMembers(names []string, vals []jsonString) error {
	if s.peek() != '{' {
		return s.skip()
	}
	var seen uint64
	return s.object(func(k jsonString, s *scanner) error {
		for i, name := range names {
			if seen&(1<<i) != 0 || !k.is(name) {
				continue
			}
			seen |= 1 << i
			if s.peek() != '"' {
				return s.skip()
			}
			var err error
			vals[i], err = s.str()
			return err
		}
		return s.skip()
	})
}

// readCreated reads a create reply at the cursor: it must carry an
// objectId and a createdAt, both non-empty strings.
func readCreated(s *scanner) error {
	start := s.i
	var vals [2]jsonString
	if err := s.strMembers([]string{"objectId", "createdAt"}, vals[:]); err != nil {
		return err
	}
	if vals[0].empty() || vals[1].empty() {
		return fmt.Errorf("create reply without objectId and createdAt: %s", clip(string(s.b[start:s.i]), 120))
	}
	return nil
}

// checkCreated checks the reply of one create.
func checkCreated(body []byte) error {
	s := scanner{b: body}
	if err := readCreated(&s); err != nil {
		return err
	}
	return s.end()
}

// checkBatchCreated checks a batch reply of want creates: an array of
// want elements, each with a create reply as its first "success".
func checkBatchCreated(body []byte, want int) error {
	s := scanner{b: body}
	got := 0
	var wrong error
	if s.peek() != '[' {
		raw, err := s.raw()
		if err != nil {
			return err
		}
		return fmt.Errorf("batch reply is not an array: %s", clip(string(raw), 120))
	}
	err := s.array(func(s *scanner) error {
		got++
		start := s.i
		found := false
		if s.peek() != '{' {
			raw, err := s.raw()
			if err == nil && wrong == nil {
				wrong = fmt.Errorf("no success: %s", clip(string(raw), 120))
			}
			return err
		}
		err := s.object(func(k jsonString, s *scanner) error {
			if found || !k.is("success") {
				return s.skip()
			}
			found = true
			if err := readCreated(s); err != nil && wrong == nil {
				if errors.Is(err, errSyntax) {
					return err
				}
				wrong = err
			}
			return nil
		})
		if err == nil && !found && wrong == nil {
			wrong = fmt.Errorf("no success: %s", clip(string(s.b[start:s.i]), 120))
		}
		return err
	})
	if err == nil {
		err = s.end()
	}
	switch {
	case err != nil:
		return err
	case got != want:
		return fmt.Errorf("%d results for %d requests", got, want)
	}
	return wrong
}

// checkCounter: an Increment reply carries the new count, a whole number
// of at least 1.
func checkCounter(body []byte) error {
	s := scanner{b: body}
	count, found := 0, false
	var wrong error
	err := s.object(func(k jsonString, s *scanner) error {
		if found || !k.is("count") {
			return s.skip()
		}
		found = true
		var err error
		count, err = s.intValue("count")
		if errors.Is(err, errNotInteger) {
			wrong, err = err, nil
		}
		return err
	})
	if err == nil {
		err = s.end()
	}
	if err == nil && (wrong != nil || !found || count < 1) {
		err = fmt.Errorf("Increment reply without the new count: %s", clip(string(body), 120))
	}
	return err
}

// checkLogin: a login reply carries a session token and the user's name.
func checkLogin(body []byte, username string) error {
	s := scanner{b: body}
	var vals [2]jsonString
	err := s.strMembers([]string{"sessionToken", "username"}, vals[:])
	if err == nil {
		err = s.end()
	}
	if err == nil && (vals[0].empty() || !vals[1].is(username)) {
		err = fmt.Errorf("login reply without the session of %s: %s", username, clip(string(body), 120))
	}
	return err
}
