package fuzz

import (
	"regexp"
	"strings"
	"unicode"
)

// matchOp evaluates one operator of a field constraint; ops is the whole
// constraint, for operators that read a sibling ($options, $maxDistance).
func (ev *evaluator) matchOp(class, key string, v any, present bool, op string, arg any, ops map[string]any) bool {
	arg = queryValue(key, arg)
	if rel, ok := operators(arg); ok && rel["$relativeTime"] != nil {
		arg = relativeTime(rel["$relativeTime"].(string))
	}
	switch op {
	case "$eq":
		return equalMatch(v, present, arg)
	case "$ne":
		return !equalMatch(v, present, arg)
	case "$lt", "$lte", "$gt", "$gte":
		return anyElement(v, func(x any) bool { return compareOp(op, x, arg) })
	case "$in":
		return inMatch(v, present, queryList(key, arg))
	case "$nin":
		return !inMatch(v, present, queryList(key, arg))
	case "$all":
		for _, x := range arg.([]any) {
			if rx, ok := operators(x); ok && rx["$regex"] != nil {
				// containsAllStartingWith: each pattern matches some element.
				if !ev.matchOp(class, key, v, present, "$regex", rx["$regex"], rx) {
					return false
				}
			} else if !equalMatch(v, present, x) {
				return false
			}
		}
		return true
	case "$containedBy":
		return containedBy(v, arg.([]any))
	case "$exists":
		return present == arg.(bool)
	case "$regex":
		re := compileRegex(arg.(string), ops["$options"])
		return anyElement(v, func(x any) bool { s, ok := x.(string); return ok && re.MatchString(s) })
	case "$options", "$maxDistance", "$maxDistanceInRadians", "$maxDistanceInMiles", "$maxDistanceInKilometers":
		return true // read with their operator
	case "$text":
		return textMatch(v, arg.(map[string]any)["$search"].(map[string]any))
	case "$inQuery", "$notInQuery":
		sub := arg.(map[string]any)
		var ptrs []any
		for _, id := range ev.subquery(sub) {
			ptrs = append(ptrs, pointer(sub["className"].(string), id))
		}
		return inMatch(v, present, ptrs) == (op == "$inQuery")
	case "$select", "$dontSelect":
		sel := arg.(map[string]any)
		sub := sel["query"].(map[string]any)
		return inMatch(v, present, ev.selectValues(sub, sel["key"].(string))) == (op == "$select")
	}
	return ev.matchGeo(v, op, arg, ops)
}

// anyElement applies test to v, or to each element when v is an array
// (MongoDB's rule for operators on array fields).
func anyElement(v any, test func(any) bool) bool {
	if arr, ok := v.([]any); ok {
		for _, x := range arr {
			if test(x) {
				return true
			}
		}
		return false
	}
	return test(v)
}

// equalMatch is equality as a where clause means it: null matches a
// missing or null value; on an array field, a value matches when the
// array equals it or holds an element equal to it.
func equalMatch(v any, present bool, q any) bool {
	if q == nil && (!present || v == nil) {
		return true
	}
	if !present {
		return false
	}
	if equal(v, q) {
		return true
	}
	if arr, ok := v.([]any); ok {
		for _, x := range arr {
			if equal(x, q) {
				return true
			}
		}
	}
	return false
}

func inMatch(v any, present bool, list []any) bool {
	for _, q := range list {
		if equalMatch(v, present, q) {
			return true
		}
	}
	return false
}

// queryList is an $in or $nin operand, nested arrays flattened (the
// protocol notes: "nested arrays are flattened").
func queryList(key string, arg any) []any {
	var out []any
	for _, x := range arg.([]any) {
		if inner, ok := x.([]any); ok {
			out = append(out, queryList(key, inner)...)
			continue
		}
		out = append(out, queryValue(key, x))
	}
	return out
}

// containedBy: every element of the array field is in list. A missing or
// null field has no element outside the list, so it matches (as with
// MongoDB-backed Parse Server, where the operator is "no element not in
// the list"). The generator uses it on array fields only, so how a scalar
// fares is left open.
func containedBy(v any, list []any) bool {
	arr, _ := v.([]any)
	for _, x := range arr {
		if !inMatch(x, true, list) {
			return false
		}
	}
	return true
}

func compareOp(op string, x, q any) bool {
	c, ok := compare(x, q)
	if !ok {
		return false // values of different types never compare
	}
	switch op {
	case "$lt":
		return c < 0
	case "$lte":
		return c <= 0
	case "$gt":
		return c > 0
	}
	return c >= 0
}

// compileRegex compiles a $regex with its $options: i, m and s as in Go's
// flags, x by dropping the pattern's unescaped white space. The generator
// only writes patterns that mean the same in RE2 and PCRE.
func compileRegex(pattern string, options any) *regexp.Regexp {
	flags := ""
	opts, _ := options.(string)
	for _, c := range opts {
		switch c {
		case 'i', 'm', 's':
			flags += string(c)
		case 'x':
			pattern = strings.Map(func(r rune) rune {
				if unicode.IsSpace(r) {
					return -1
				}
				return r
			}, pattern)
		}
	}
	if flags != "" {
		pattern = "(?" + flags + ")" + pattern
	}
	return regexp.MustCompile(pattern)
}

// textMatch is $text over one string field. Choices, with the generator
// kept inside them: the term is split into words at anything not a letter
// or digit, and a field matches when it holds any of them as a whole word;
// case-insensitive unless $caseSensitive. The generator's words are no
// stop words, no two share a stem and carry no diacritics, so stemming,
// stop lists and diacritic folding cannot change the answer.
func textMatch(v any, search map[string]any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	caseSensitive, _ := search["$caseSensitive"].(bool)
	norm := func(w string) string {
		if caseSensitive {
			return w
		}
		return strings.ToLower(w)
	}
	words := map[string]bool{}
	for _, w := range splitWords(s) {
		words[norm(w)] = true
	}
	for _, w := range splitWords(search["$term"].(string)) {
		if words[norm(w)] {
			return true
		}
	}
	return false
}

func splitWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// subquery returns the ids of the objects a {className, where} matches.
func (ev *evaluator) subquery(sub map[string]any) []string {
	class := sub["className"].(string)
	where, _ := sub["where"].(map[string]any)
	var ids []string
	for _, o := range ev.w.Objects[class] {
		// Subqueries run with the caller's rights.
		if ev.caller.canRead(o) && ev.matches(class, o, where) {
			ids = append(ids, o["objectId"].(string))
		}
	}
	return ids
}

// selectValues are the values of key in a subquery's results. Choice:
// results without the key contribute nothing (the generator's keys are
// always set, so this is never decisive).
func (ev *evaluator) selectValues(sub map[string]any, key string) []any {
	class := sub["className"].(string)
	where, _ := sub["where"].(map[string]any)
	var vals []any
	for _, o := range ev.w.Objects[class] {
		if ev.caller.canRead(o) && ev.matches(class, o, where) {
			if v, ok := ev.lookup(class, o, key); ok {
				vals = append(vals, v)
			}
		}
	}
	return vals
}
