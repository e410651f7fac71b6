package fuzz

import (
	"math/rand"
)

// The constructs PostgreSQL cannot decide exactly, which the SQL path
// leaves to Go over a prefilter's rows: word boundaries and the m
// option's line anchors in $regex, $geoIntersects on a Polygon field and
// orders by Object, Array, GeoPoint and Polygon fields or dot paths
// ($text comes from the shared generator). The differential test mixes
// them into the shared generator's queries, alone, ANDed, in an $or and
// under a $nor.
var (
	looseRegexes = []string{`\bapple`, `pie\b`, `\bb`, `an\b`, `\Bp`, `a\b`, `\bfirst\b`, `^banana`, `^b$`, `e$`, `\bri`}
	looseOptions = []string{"", "i", "m", "m", "im"}
	looseOrders  = []string{"o", "arr", "loc", "o.y", "ps", "area", "o.x"}
)

// addAreas gives some items a Polygon field (area), a quadrilateral near
// one of the clusters, through w; the shared data sets have none.
func addAreas(r *rand.Rand, w Writer, world *World) error {
	for _, o := range world.Objects[ItemClass] {
		if r.Intn(2) == 0 {
			continue
		}
		lat, lng := randomPoint(r, 1.5)
		dLat, dLng := 0.2+r.Float64()*1.5, 0.2+r.Float64()*1.5
		ring := []any{[]any{lat, lng}, []any{lat + dLat, lng}, []any{lat + dLat, lng + dLng}, []any{lat + r.Float64()*dLat, lng + dLng}, []any{lat, lng}}
		area := map[string]any{"__type": "Polygon", "coordinates": ring}
		updatedAt, err := w.Update(ItemClass, o["objectId"].(string), map[string]any{"area": area})
		if err != nil {
			return err
		}
		o["area"], o["updatedAt"] = area, updatedAt
	}
	return nil
}

// looseQuery is the shared generator's query, now and then (loose set)
// with one of the constructs SQL leaves to Go.
func looseQuery(g *QueryGen) (q Query, loose bool) {
	q = g.Query()
	if q.Class != ItemClass || g.R.Intn(2) == 0 {
		return q, false
	}
	r := g.R
	if r.Intn(3) == 0 {
		q.Order = []OrderKey{{Path: looseOrders[r.Intn(len(looseOrders))], Desc: r.Intn(2) == 0}}
		if r.Intn(2) == 0 {
			q.Order = append(q.Order, OrderKey{Path: "n", Desc: r.Intn(2) == 0})
		}
		return q, true
	}
	var extra map[string]any
	if r.Intn(3) == 0 {
		lat, lng := randomPoint(r, 2)
		extra = map[string]any{"area": map[string]any{"$geoIntersects": map[string]any{"$point": geoPoint(lat, lng)}}}
	} else {
		c := map[string]any{"$regex": looseRegexes[r.Intn(len(looseRegexes))]}
		if opts := looseOptions[r.Intn(len(looseOptions))]; opts != "" {
			c["$options"] = opts
		}
		extra = map[string]any{[]string{"s", "s", "txt", "arr", "o.y"}[r.Intn(5)]: c}
	}
	shape := r.Intn(4)
	if _, geo := extra["area"]; geo || q.Where["loc"] != nil {
		shape = []int{0, 3}[r.Intn(2)] // geo constraints are refused inside $or and $nor
	}
	switch shape {
	case 0:
		q.Where = map[string]any{"$and": []any{q.Where, extra}}
	case 1:
		q.Where = map[string]any{"$or": []any{q.Where, extra}}
	case 2:
		q.Where = map[string]any{"$nor": []any{extra}, "$and": []any{q.Where}}
	default:
		q.Where = extra
	}
	return q, true
}
