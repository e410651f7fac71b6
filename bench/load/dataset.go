package main

import (
	"fmt"
	"math"
	"strings"
)

// Shape of the seeded data. Every attribute derives from (seed, n) alone, so
// two servers seeded with the same -size and -seed hold the same data and
// every query has one right answer, computed here by brute force.
const (
	// resultsPerQuery is the size a selective query's answer aims at; the
	// category count, the geo radius and the tag count derive from it.
	resultsPerQuery = 50
	itemsPerOwner   = 100
	tiers           = 10
	favoritesPer    = 20 // items in each owner's "favorites" relation
	counterObjects  = 100
	userAccounts    = 20
	inValues        = 10 // values in a $in list
	rangeWidth      = 200
	rangePage       = 20
	// The geo data fills a one-degree square.
	geoLat0, geoLng0 = 10.0, 20.0
	geoSpan          = 1.0
	earthRadiusKm    = 6371.0 // Parse's radius for $maxDistanceInKilometers
)

// item is one seeded object of the Item class.
type item struct {
	N        int
	Category int // "c<k>"
	Score    int // a permutation of 0..size-1: unique, so orders are total
	Tag      int
	Owner    int
	Lat, Lng float64
}

// dataset is the model of everything seeded: the generator checks replies
// against it.
type dataset struct {
	prefix     string
	seed       uint64
	items      []item
	byScore    []int // score → n
	owners     int
	categories int
	tags       int
	favorites  [][]int // owner → item numbers in its relation
	// Filled while seeding.
	itemIDs    []string
	ownerIDs   []string
	counterIDs []string
}

func newDataset(prefix string, size int, seed uint64) *dataset {
	d := &dataset{prefix: prefix, seed: seed}
	d.owners = max(tiers, size/itemsPerOwner)
	d.categories = max(1, size/resultsPerQuery)
	// A tier holds a tenth of the items; tags cut that to resultsPerQuery.
	d.tags = max(1, size/tiers/resultsPerQuery)
	mult := coprime(7919, size)
	d.items = make([]item, size)
	d.byScore = make([]int, size)
	for n := range d.items {
		it := item{
			N:        n,
			Category: int(d.hash(n, 1) % uint64(d.categories)),
			Score:    int((uint64(n)*mult + 17) % uint64(size)),
			Tag:      int(d.hash(n, 2) % uint64(d.tags)),
			Owner:    int(d.hash(n, 3) % uint64(d.owners)),
			Lat:      geoLat0 + geoSpan*d.unit(n, 4),
			Lng:      geoLng0 + geoSpan*d.unit(n, 5),
		}
		d.items[n] = it
		d.byScore[it.Score] = n
	}
	d.favorites = make([][]int, d.owners)
	for o := range d.favorites {
		seen := map[int]bool{}
		for k := 0; len(d.favorites[o]) < min(favoritesPer, size); k++ {
			n := int(d.hash(o*1000+k, 6) % uint64(size))
			if !seen[n] {
				seen[n] = true
				d.favorites[o] = append(d.favorites[o], n)
			}
		}
	}
	return d
}

// coprime returns the first m >= start that shares no factor with n.
func coprime(start uint64, n int) uint64 {
	m := start
	for gcd(m, uint64(n)) != 1 {
		m++
	}
	return m
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// hash is splitmix64 of (seed, n, field): deterministic, well spread.
func (d *dataset) hash(n, field int) uint64 {
	x := d.seed*0x9E3779B97F4A7C15 + uint64(n)*0xBF58476D1CE4E5B9 + uint64(field)*0x94D049BB133111EB
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return x
}

// unit is a deterministic number in [0, 1).
func (d *dataset) unit(n, field int) float64 {
	return float64(d.hash(n, field)>>11) / (1 << 53)
}

// Class names.
func (d *dataset) itemClass() string    { return d.prefix + "Item" }
func (d *dataset) ownerClass() string   { return d.prefix + "Owner" }
func (d *dataset) counterClass() string { return d.prefix + "Counter" }
func (d *dataset) writeClass() string   { return d.prefix + "Write" }
func (d *dataset) liveClass() string    { return d.prefix + "Live" }
func (d *dataset) username(i int) string {
	return strings.ToLower(d.prefix) + "-user-" + fmt.Sprint(i)
}
func (d *dataset) password(i int) string { return fmt.Sprintf("pw-%d-%d", d.seed, i) }

func categoryName(k int) string { return fmt.Sprintf("c%d", k) }
func ownerName(o int) string    { return fmt.Sprintf("owner-%d", o) }
func ownerTier(o int) int       { return o % tiers }

// indexSpec is one secondary index: a class and a field.
type indexSpec struct{ Class, Field, Type string }

// indexes lists the secondary indexes both servers get, so the comparison
// is between equivalent setups. No geo index: Parse Server's PostgreSQL
// adapter creates none.
func (d *dataset) indexes() []indexSpec {
	return []indexSpec{
		{d.itemClass(), "n", "Number"},
		{d.itemClass(), "category", "String"},
		{d.itemClass(), "score", "Number"},
		{d.itemClass(), "tag", "Number"},
		{d.itemClass(), "owner", "Pointer"},
		{d.ownerClass(), "tier", "Number"},
	}
}

// itemBody is the JSON body creating item n.
func (d *dataset) itemBody(n int) map[string]any {
	it := d.items[n]
	return map[string]any{
		"n":        it.N,
		"category": categoryName(it.Category),
		"score":    it.Score,
		"tag":      it.Tag,
		"owner":    pointer(d.ownerClass(), d.ownerIDs[it.Owner]),
		"location": geoPoint(it.Lat, it.Lng),
	}
}

func pointer(class, id string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": class, "objectId": id}
}

func geoPoint(lat, lng float64) map[string]any {
	return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
}

// Geo sizes chosen so that a geo query matches about resultsPerQuery items.
func (d *dataset) nearRadiusKm() float64 {
	areaKm2 := (geoSpan * 111.19) * (geoSpan * 111.19 * math.Cos((geoLat0+geoSpan/2)*math.Pi/180))
	return math.Sqrt(resultsPerQuery * areaKm2 / float64(len(d.items)) / math.Pi)
}

func (d *dataset) boxSide() float64 {
	return geoSpan * math.Sqrt(resultsPerQuery/float64(len(d.items)))
}

// hexRadius is the circumradius (degrees) of a hexagon of the target area.
func (d *dataset) hexRadius() float64 {
	area := geoSpan * geoSpan * resultsPerQuery / float64(len(d.items))
	return math.Sqrt(2 * area / (3 * math.Sqrt(3)))
}

// haversineKm is the great-circle distance on Parse's sphere.
func haversineKm(lat1, lng1, lat2, lng2 float64) float64 {
	const rad = math.Pi / 180
	dLat := (lat2 - lat1) * rad
	dLng := (lng2 - lng1) * rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLng/2)*math.Sin(dLng/2)
	return 2 * earthRadiusKm * math.Asin(math.Min(1, math.Sqrt(a)))
}

// pt is a point in degrees, as (lat, lng).
type pt struct{ Lat, Lng float64 }

// inPolygon is the even-odd test for a planar polygon in (lat, lng).
func inPolygon(p pt, poly []pt) bool {
	in := false
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		a, b := poly[i], poly[j]
		if (a.Lat > p.Lat) != (b.Lat > p.Lat) &&
			p.Lng < (b.Lng-a.Lng)*(p.Lat-a.Lat)/(b.Lat-a.Lat)+a.Lng {
			in = !in
		}
	}
	return in
}

// distToPolygonEdge is the planar distance in degrees from p to the
// nearest edge of poly.
func distToPolygonEdge(p pt, poly []pt) float64 {
	best := math.Inf(1)
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		best = math.Min(best, distToSegment(p, poly[j], poly[i]))
	}
	return best
}

func distToSegment(p, a, b pt) float64 {
	dx, dy := b.Lat-a.Lat, b.Lng-a.Lng
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = math.Max(0, math.Min(1, ((p.Lat-a.Lat)*dx+(p.Lng-a.Lng)*dy)/l))
	}
	x, y := a.Lat+t*dx-p.Lat, a.Lng+t*dy-p.Lng
	return math.Sqrt(x*x + y*y)
}
