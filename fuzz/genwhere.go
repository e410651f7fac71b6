package fuzz

import (
	"math"
	"math/rand"
	"strings"
)

// QueryGen draws random queries over a World.
type QueryGen struct {
	R     *rand.Rand
	World *World
}

// regexes mean the same in RE2 and PCRE; "a p" only with the x option
// matches what "ap" does.
var (
	regexes = []string{"^a", "an", "^A", "e$", "^$", "a.b", `a\.b`, "^(ap|ba)", "[bc]h?err", "^[^a]", `\d`, "Ü", "p+l", "^ap.*e$",
		"^ba", "t$", "^first.banana$"}
	regexOpt = []string{"", "", "i", "m", "s", "x", "im", "ix"}
)

// Query draws a query on Item: a where, sometimes an order, skip and limit.
func (g *QueryGen) Query() Query {
	q := g.query()
	if g.R.Intn(2) == 0 {
		q.Caller = Callers[g.R.Intn(len(Callers))]
	}
	return q
}

func (g *QueryGen) query() Query {
	if g.R.Intn(8) == 0 {
		return g.ownerQuery()
	}
	q := Query{Class: ItemClass, Where: g.Where(ItemClass, 0), Limit: 1000}
	if g.R.Intn(5) == 0 {
		q.Where = map[string]any{}
	}
	if g.R.Intn(3) == 0 {
		q.Where["loc"] = g.geo()
	}
	if g.R.Intn(2) == 0 {
		sortable := []string{"n", "s", "d", "b", "createdAt", "updatedAt", "objectId", "o.x"}
		for i := 1 + g.R.Intn(2); i > 0; i-- {
			q.Order = append(q.Order, OrderKey{Path: sortable[g.R.Intn(len(sortable))], Desc: g.R.Intn(2) == 0})
		}
	}
	if g.R.Intn(2) == 0 {
		q.Limit = []int{0, 1, 3, 10}[g.R.Intn(4)]
	}
	if g.R.Intn(3) == 0 {
		q.Skip = g.R.Intn(6)
	}
	return q
}

// Where draws a where of one to three keys; depth bounds $or/$and/$nor
// and subqueries.
func (g *QueryGen) Where(class string, depth int) map[string]any {
	w := map[string]any{}
	if class == ItemClass && depth == 0 && g.R.Intn(5) == 0 {
		// An $or of simple branches, which indexes can serve as a union.
		var branches []any
		for j := 2 + g.R.Intn(2); j > 0; j-- {
			key := []string{"n", "s", "d", "b", "arr", "objectId"}[g.R.Intn(6)]
			branches = append(branches, map[string]any{key: g.simpleValue(key)})
		}
		w["$or"] = branches
	}
	for i := 1 + g.R.Intn(3); i > 0; i-- {
		if depth < 2 && g.R.Intn(6) == 0 {
			op := []string{"$or", "$and", "$nor"}[g.R.Intn(3)]
			var branches []any
			for j := 1 + g.R.Intn(3); j > 0; j-- {
				branches = append(branches, g.Where(class, depth+1))
			}
			w[op] = branches
			continue
		}
		if class == OwnerClass {
			g.ownerConstraint(w)
			continue
		}
		key, cond := g.itemConstraint(depth)
		w[key] = cond
	}
	return w
}

// ownerQuery is a query on Owner: its relation to items both ways.
func (g *QueryGen) ownerQuery() Query {
	q := Query{Class: OwnerClass, Where: g.Where(OwnerClass, 0), Limit: 1000}
	if g.R.Intn(2) == 0 {
		q.Order = []OrderKey{{Path: []string{"name", "k", "objectId"}[g.R.Intn(3)], Desc: g.R.Intn(2) == 0}}
		q.Limit = 1 + g.R.Intn(4)
	}
	return q
}

func (g *QueryGen) ownerConstraint(w map[string]any) {
	r := g.R
	switch r.Intn(6) {
	case 0:
		w["name"] = g.scalarCond(poolStrings)
	case 1:
		w["k"] = g.scalarCond(poolNumbers)
	case 2:
		w["members"] = pick(r, g.itemPointers())
	case 3:
		w["members"] = map[string]any{[]string{"$in", "$nin", "$all"}[r.Intn(3)]: g.someOf(g.itemPointers(), 1)}
	case 4:
		w["$relatedTo"] = map[string]any{"object": pick(r, g.itemPointers()), "key": "rel"}
	default:
		w["objectId"] = g.scalarCond(g.ids(OwnerClass))
	}
}

func (g *QueryGen) itemPointers() []any {
	var out []any
	for _, id := range g.ids(ItemClass) {
		out = append(out, pointer(ItemClass, id.(string)))
	}
	return out
}

// ids are the ids of a class plus one that does not exist.
func (g *QueryGen) ids(class string) []any {
	out := []any{"missing00"}
	for _, o := range g.World.Objects[class] {
		out = append(out, o["objectId"])
	}
	return out
}

// scalarCond is a constraint on a field of one scalar type, its values
// drawn from pool (now and then from another type's pool). Range
// operators get numbers, strings and Dates only: how null, booleans and
// pointers order is left to each database.
func (g *QueryGen) scalarCond(pool []any) any {
	r := g.R
	if r.Intn(10) == 0 {
		pool = [][]any{poolNumbers, poolStrings, {true, false, nil}}[r.Intn(3)]
	}
	v := func() any { return pick(r, pool) }
	list := func() []any {
		out := []any{}
		for i := r.Intn(4); i > 0; i-- {
			out = append(out, v())
		}
		return out
	}
	switch r.Intn(12) {
	case 0, 1:
		return v()
	case 2:
		return map[string]any{"$eq": v()}
	case 3:
		return map[string]any{"$ne": v()}
	case 4:
		return map[string]any{"$in": list()}
	case 5:
		return map[string]any{"$nin": list()}
	case 6:
		return map[string]any{"$exists": r.Intn(2) == 0}
	case 7:
		return nil
	}
	a, b := v(), v()
	if !ordered(a) || !ordered(b) {
		return a
	}
	if r.Intn(4) == 0 {
		return map[string]any{"$gt": a, "$lte": b}
	}
	return map[string]any{[]string{"$lt", "$lte", "$gt", "$gte"}[r.Intn(4)]: a}
}

func ordered(v any) bool {
	k := kindOf(v)
	return k == kindNumber || k == kindString || k == kindDate
}

// itemConstraint draws one field constraint of Item.
func (g *QueryGen) itemConstraint(depth int) (string, any) {
	r := g.R
	switch r.Intn(21) {
	case 19:
		// Whole-value equality on an Object (keys in any order) or a GeoPoint.
		objs := g.World.Objects[ItemClass]
		o := objs[r.Intn(len(objs))]
		if loc, ok := o["loc"]; ok && r.Intn(2) == 0 {
			return "loc", loc
		}
		if v, ok := o["o"]; ok {
			return "o", v
		}
		return "o", map[string]any{"y": pick(r, poolStrings)}
	case 16:
		return "d", g.relativeCond()
	case 17:
		return "arr", g.arrayExtra()
	case 18:
		if r.Intn(3) == 0 {
			return "rel", map[string]any{"$ne": pick(r, g.pointers())}
		}
		return "rel", map[string]any{[]string{"$nin", "$all"}[r.Intn(2)]: g.someOf(g.pointers(), 1)}
	case 0:
		return "n", g.scalarCond(poolNumbers)
	case 1:
		return "s", g.scalarCond(poolStrings)
	case 2:
		return "b", g.scalarCond([]any{true, false})
	case 3:
		return "d", g.scalarCond(dates(r))
	case 4:
		return "o.x", g.scalarCond(poolNumbers)
	case 5:
		return []string{"createdAt", "updatedAt"}[r.Intn(2)], g.scalarCond(g.stamps())
	case 6:
		return "objectId", g.scalarCond(g.ids(ItemClass))
	case 7:
		return []string{"s", "o.y", "txt", "arr", "n", "objectId"}[r.Intn(6)], g.regex()
	case 8:
		if r.Intn(3) == 0 {
			// Words of the s pool: no stop words, no diacritics.
			return "s", g.text([]string{"apple", "banana", "cherry", "pie", "zeta", "berry", "first"})
		}
		return "txt", g.text(textWords)
	case 9:
		return "arr", g.arrayCond(append(append([]any{}, poolNumbers...), poolStrings...))
	case 10:
		return "ps", g.arrayCond(g.pointers())
	case 11:
		return "rel", g.relationCond()
	case 12:
		// An array of pointers takes subqueries too (any element).
		return []string{"p", "p", "ps"}[r.Intn(3)], g.pointerCond(depth)
	case 13:
		return "$relatedTo", map[string]any{"object": pick(r, g.pointers()), "key": "members"}
	case 14:
		return g.selectCond(depth)
	}
	return "s", g.scalarCond(poolStrings)
}

func dates(r *rand.Rand) []any {
	out := make([]any, 6)
	for i := range out {
		out[i] = randomDate(r)
	}
	return out
}

// stamps are createdAt/updatedAt values of existing objects, as Dates or
// as ISO strings.
func (g *QueryGen) stamps() []any {
	var out []any
	for _, o := range g.World.Objects[ItemClass] {
		for _, k := range []string{"createdAt", "updatedAt"} {
			if g.R.Intn(2) == 0 {
				out = append(out, date(o[k].(string)))
			} else {
				out = append(out, o[k])
			}
		}
	}
	return out
}

func (g *QueryGen) pointers() []any {
	var out []any
	for _, id := range g.ids(OwnerClass) {
		out = append(out, pointer(OwnerClass, id.(string)))
	}
	return out
}

func (g *QueryGen) regex() any {
	pattern := regexes[g.R.Intn(len(regexes))]
	opts := regexOpt[g.R.Intn(len(regexOpt))]
	// A space after a backslash would be an escaped, literal one.
	if strings.Contains(opts, "x") && g.R.Intn(2) == 0 && len(pattern) > 1 && pattern[0] != '\\' {
		pattern = pattern[:1] + " " + pattern[1:]
	}
	c := map[string]any{"$regex": pattern}
	if opts != "" {
		c["$options"] = opts
	}
	return c
}

func (g *QueryGen) text(words []string) any {
	var term []string
	for i := 1 + g.R.Intn(2); i > 0; i-- {
		w := words[g.R.Intn(len(words))]
		if g.R.Intn(3) == 0 {
			w = strings.ToUpper(w)
		}
		term = append(term, w)
	}
	if g.R.Intn(6) == 0 {
		term = append(term, "absent")
	}
	search := map[string]any{"$term": strings.Join(term, " ")}
	if g.R.Intn(3) == 0 {
		search["$caseSensitive"] = g.R.Intn(2) == 0
	}
	return map[string]any{"$text": map[string]any{"$search": search}}
}

// arrayCond is a constraint on an array field, values from pool.
func (g *QueryGen) arrayCond(pool []any) any {
	r := g.R
	list := func(min int) []any {
		out := []any{}
		for i := min + r.Intn(3); i > 0; i-- {
			out = append(out, pick(r, pool))
		}
		return out
	}
	switch r.Intn(8) {
	case 0, 1:
		return pick(r, pool)
	case 2:
		return map[string]any{"$all": list(1)}
	case 3:
		return map[string]any{"$in": list(0)}
	case 4:
		return map[string]any{"$nin": list(0)}
	case 5:
		return map[string]any{"$ne": pick(r, pool)}
	case 6:
		return map[string]any{"$exists": r.Intn(2) == 0}
	}
	return map[string]any{"$containedBy": list(0)}
}

func (g *QueryGen) relationCond() any {
	if g.R.Intn(2) == 0 {
		return pick(g.R, g.pointers())
	}
	var list []any
	for i := g.R.Intn(3); i >= 0; i-- {
		list = append(list, pick(g.R, g.pointers()))
	}
	return map[string]any{"$in": list}
}

func (g *QueryGen) pointerCond(depth int) any {
	if depth < 2 && g.R.Intn(2) == 0 {
		op := []string{"$inQuery", "$notInQuery"}[g.R.Intn(2)]
		return map[string]any{op: map[string]any{"className": OwnerClass, "where": g.Where(OwnerClass, depth+1)}}
	}
	return g.scalarCond(g.pointers())
}

// selectCond matches Item's n against Owner's k, or s against name.
func (g *QueryGen) selectCond(depth int) (string, any) {
	field, key := "n", "k"
	if g.R.Intn(2) == 0 {
		field, key = "s", "name"
	}
	op := []string{"$select", "$dontSelect"}[g.R.Intn(2)]
	return field, map[string]any{op: map[string]any{"key": key,
		"query": map[string]any{"className": OwnerClass, "where": g.Where(OwnerClass, depth+1)}}}
}

// geo draws a geo constraint for the top level of a where.
func (g *QueryGen) geo() any {
	r := g.R
	lat, lng := randomPoint(r, 1.5)
	switch r.Intn(4) {
	case 0:
		c := map[string]any{"$nearSphere": geoPoint(lat, lng)}
		switch r.Intn(4) {
		case 0:
			c["$maxDistance"] = 0.002 + r.Float64()*0.03
		case 1:
			c["$maxDistanceInMiles"] = 10 + r.Float64()*150
		case 2:
			c["$maxDistanceInKilometers"] = 10 + r.Float64()*250
		}
		return c
	case 1:
		dLat, dLng := 0.1+r.Float64()*2, 0.1+r.Float64()*2
		return map[string]any{"$within": map[string]any{"$box": []any{geoPoint(lat-dLat, lng-dLng), geoPoint(lat+dLat, lng+dLng)}}}
	case 2:
		return map[string]any{"$geoWithin": map[string]any{"$centerSphere": []any{[]any{lng, lat}, 0.002 + r.Float64()*0.03}}}
	}
	// A star-shaped polygon: vertices at increasing angles round a centre.
	n := 3 + r.Intn(4)
	var poly []any
	for i := 0; i < n; i++ {
		a := (float64(i) + r.Float64()*0.8) * 2 * math.Pi / float64(n)
		rad := 0.3 + r.Float64()*2
		poly = append(poly, geoPoint(lat+rad*math.Sin(a), lng+rad*math.Cos(a)))
	}
	return map[string]any{"$geoWithin": map[string]any{"$polygon": poly}}
}

// someOf is a list of n to n+2 values of pool.
func (g *QueryGen) someOf(pool []any, n int) any {
	var out []any
	for i := n + g.R.Intn(3); i > 0; i-- {
		out = append(out, pick(g.R, pool))
	}
	return out
}

// relativeCond compares a Date field with a $relativeTime.
func (g *QueryGen) relativeCond() any {
	r := g.R
	rel := []string{"now", "in 2 years", "3 years ago", "5 years ago", "1 years ago", "10 weeks ago", "in 30 days", "400 days ago"}[r.Intn(8)]
	return map[string]any{[]string{"$lt", "$lte", "$gt", "$gte"}[r.Intn(4)]: map[string]any{"$relativeTime": rel}}
}

// arrayExtra are the array-only forms: ranges over elements, regexes in
// $all, and whole-array equality.
func (g *QueryGen) arrayExtra() any {
	r := g.R
	switch r.Intn(3) {
	case 0:
		return map[string]any{[]string{"$lt", "$lte", "$gt", "$gte"}[r.Intn(4)]: pick(r, poolNumbers)}
	case 1:
		var all []any
		for i := 1 + r.Intn(2); i > 0; i-- {
			all = append(all, map[string]any{"$regex": []string{"^a", "^b", "^c", "^"}[r.Intn(4)]})
		}
		return map[string]any{"$all": all}
	}
	return []any{pick(r, poolNumbers), pick(r, poolStrings)}
}

// simpleValue is an equality value for key, of its type.
func (g *QueryGen) simpleValue(key string) any {
	switch key {
	case "n":
		return pick(g.R, poolNumbers)
	case "s", "arr":
		return pick(g.R, poolStrings)
	case "d":
		return pick(g.R, dates(g.R))
	case "b":
		return g.R.Intn(2) == 0
	}
	return pick(g.R, g.ids(ItemClass))
}
