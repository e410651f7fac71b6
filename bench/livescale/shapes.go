package main

import (
	"fmt"
	"math/rand/v2"
)

// The subscriptions come in four shapes, a quarter each by default (the
// -join share lowers the live joins'), and every shape is sized so that a
// write matches about matchesPerShape subscriptions of it. Each write
// carries the fields all four test, so the client knows exactly how many
// events every write must bring (lost events are counted, not guessed).
const matchesPerShape = 2

// geoSpacing is the grid (degrees) of the geo-circle centres; the circles'
// radius is far below it, so a point at a centre is inside that centre's
// circles only.
const (
	geoSpacing  = 0.5
	geoRadiusKm = 1.0
	earthKm     = 6371.0
	rangeValues = 100_000 // writes' v in [0, rangeValues)
)

// model is the set of subscriptions and, per write value, how many match.
type model struct {
	nEq, nRange, nGeo, nJoin int
	eqKeys, geoCells, tiers  int
	rangeWidth               int
	rangeCount               []int32 // subscriptions whose range holds v
}

func newModel(subs int, joinShare float64) *model {
	nJoin := int(float64(subs) * joinShare)
	rest := subs - nJoin
	m := &model{nEq: rest / 3, nRange: rest / 3, nJoin: nJoin}
	m.nGeo = rest - m.nEq - m.nRange
	m.eqKeys = max(1, m.nEq/matchesPerShape)
	m.geoCells = max(1, m.nGeo/matchesPerShape)
	m.tiers = max(1, m.nJoin/matchesPerShape)
	m.rangeWidth = max(1, rangeValues*matchesPerShape/max(1, m.nRange))
	m.rangeCount = make([]int32, rangeValues+1)
	for i := range m.nRange {
		lo, hi := m.rangeOf(i)
		m.rangeCount[lo]++
		m.rangeCount[hi]--
	}
	for v := 1; v <= rangeValues; v++ {
		m.rangeCount[v] += m.rangeCount[v-1]
	}
	return m
}

func (m *model) rangeOf(i int) (lo, hi int) {
	lo = int(uint64(i) * 2654435761 % uint64(rangeValues-m.rangeWidth+1))
	return lo, lo + m.rangeWidth
}

// cell returns the centre of geo cell c: a grid over ±60° latitude.
func cell(c int) (lat, lng float64) {
	const perRow = 700 // 350° of longitude
	return -60 + float64(c/perRow%240)*geoSpacing, -175 + float64(c%perRow)*geoSpacing
}

// total is the subscriptions in the model.
func (m *model) total() int { return m.nEq + m.nRange + m.nGeo + m.nJoin }

// where is subscription i's query (class and where clause).
func (m *model) where(i int) (class string, where map[string]any) {
	switch {
	case i < m.nEq:
		return "Item", map[string]any{"k": i % m.eqKeys}
	case i < m.nEq+m.nRange:
		lo, hi := m.rangeOf(i - m.nEq)
		return "Item", map[string]any{"v": map[string]any{"$gte": lo, "$lt": hi}}
	case i < m.nEq+m.nRange+m.nGeo:
		lat, lng := cell((i - m.nEq - m.nRange) % m.geoCells)
		return "Item", map[string]any{"loc": map[string]any{"$geoWithin": map[string]any{
			"$centerSphere": []any{[]any{lng, lat}, geoRadiusKm / earthKm}}}}
	default:
		t := (i - m.nEq - m.nRange - m.nGeo) % m.tiers
		return "Item", map[string]any{"owner": map[string]any{"$inQuery": map[string]any{
			"className": "Owner", "where": map[string]any{"tier": t}}}}
	}
}

// write is one created Item: its fields and how many events it must bring.
type write struct {
	k, v, geoCell, tier int
	expected            int
}

func (m *model) nextWrite(r *rand.Rand) write {
	w := write{k: r.IntN(m.eqKeys), v: r.IntN(rangeValues), geoCell: r.IntN(m.geoCells), tier: r.IntN(m.tiers)}
	w.expected = countMod(m.nEq, m.eqKeys, w.k) + int(m.rangeCount[w.v]) + countMod(m.nGeo, m.geoCells, w.geoCell)
	if m.nJoin > 0 {
		w.expected += countMod(m.nJoin, m.tiers, w.tier)
	}
	return w
}

// countMod is how many i in [0, n) have i mod k == j.
func countMod(n, k, j int) int {
	if n == 0 {
		return 0
	}
	c := n / k
	if j < n%k {
		c++
	}
	return c
}

func (w write) body(seq int, ownerIDs []string) []byte {
	lat, lng := cell(w.geoCell)
	owner := ""
	if len(ownerIDs) > 0 {
		owner = fmt.Sprintf(`,"owner":{"__type":"Pointer","className":"Owner","objectId":%q}`, ownerIDs[w.tier])
	}
	return fmt.Appendf(nil, `{"seq":%d,"k":%d,"v":%d,"loc":{"__type":"GeoPoint","latitude":%g,"longitude":%g}%s}`,
		seq, w.k, w.v, lat, lng, owner)
}
