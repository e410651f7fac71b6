package fuzz

import (
	"fmt"
	"math/rand"
	"strings"
	"time"
)

// Writer is what Populate writes through: the system under test.
type Writer interface {
	Create(class string, body map[string]any) (id, createdAt string, err error)
	Update(class, id string, body map[string]any) (updatedAt string, err error)
}

// The classes of a generated data set. Item holds a field of every value
// type; Owner is what Item's pointers and relations point to.
const (
	ItemClass  = "Item"
	OwnerClass = "Owner"
)

// Value pools: small, so that equal values, ties and prefixes are common.
var (
	poolNumbers = []any{-3.0, 0.0, 1.0, 2.0, 2.5, 7.0, 100.0, 1e9}
	poolStrings = []any{"apple", "apricot", "banana", "Berry", "cherry", "", "a.b", "zeta", "Ünïcode", "apple pie", "APPLE",
		"a\nb", "first\nbanana"}
	poolYears = []int{2020, 2021, 2022, 2023}
	// textWords are no stop words, carry no diacritics and no two share a
	// stem (see textMatch).
	textWords = []string{"river", "stone", "cloud", "maple", "ember", "quartz"}
	// clusters are where GeoPoints gather (latitude, longitude): far from
	// the poles and the antimeridian.
	clusters = [][2]float64{{40.7, -74.0}, {48.85, 2.35}, {-33.9, 151.2}}
)

func pick(r *rand.Rand, xs []any) any { return xs[r.Intn(len(xs))] }

func randomDate(r *rand.Rand) map[string]any {
	t := time.Date(poolYears[r.Intn(len(poolYears))], time.Month(1+r.Intn(2)), 1, 0, 0, 0, r.Intn(3)*int(time.Millisecond), time.UTC)
	return date(t.Format("2006-01-02T15:04:05.000Z"))
}

func geoPoint(lat, lng float64) map[string]any {
	return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
}

// randomPoint is a point near one of the clusters.
func randomPoint(r *rand.Rand, spread float64) (lat, lng float64) {
	c := clusters[r.Intn(len(clusters))]
	return c[0] + (r.Float64()*2-1)*spread, c[1] + (r.Float64()*2-1)*spread
}

func randomText(r *rand.Rand) string {
	words := make([]string, 1+r.Intn(4))
	for i := range words {
		w := textWords[r.Intn(len(textWords))]
		switch r.Intn(4) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		words[i] = w
	}
	return strings.Join(words, []string{" ", ", ", ". "}[r.Intn(3)])
}

// Populate writes a random data set through w and returns the
// reference's copy of it: owners, then items pointing to them, then the
// relations both ways.
func Populate(r *rand.Rand, w Writer, items int) (*World, error) {
	world := NewWorld()
	world.Targets[ClassField{ItemClass, "rel"}] = OwnerClass
	world.Targets[ClassField{OwnerClass, "members"}] = ItemClass
	for i := 0; i < 5; i++ {
		body := map[string]any{"name": pick(r, poolStrings), "k": pick(r, poolNumbers)}
		if r.Intn(4) == 0 {
			body["ACL"] = randomACL(r)
		}
		if err := create(w, world, OwnerClass, body); err != nil {
			return nil, err
		}
	}
	for i := 0; i < items; i++ {
		if err := create(w, world, ItemClass, randomItem(r, world)); err != nil {
			return nil, err
		}
	}
	if err := relate(r, w, world, ItemClass, "rel", OwnerClass); err != nil {
		return nil, err
	}
	return world, relate(r, w, world, OwnerClass, "members", ItemClass)
}

func create(w Writer, world *World, class string, body map[string]any) error {
	id, createdAt, err := w.Create(class, body)
	if err != nil {
		return fmt.Errorf("create %s %v: %w", class, body, err)
	}
	o := map[string]any{"objectId": id, "createdAt": createdAt, "updatedAt": createdAt}
	for k, v := range body {
		o[k] = v
	}
	world.Objects[class] = append(world.Objects[class], o)
	return nil
}

// relate adds random members to the relation field of some objects.
func relate(r *rand.Rand, w Writer, world *World, class, field, target string) error {
	targets := world.Objects[target]
	for _, o := range world.Objects[class] {
		if r.Intn(2) == 0 {
			continue
		}
		var ptrs []any
		var ids []string
		for j := r.Intn(4); j > 0; j-- {
			id := targets[r.Intn(len(targets))]["objectId"].(string)
			if !contains(ids, id) {
				ids = append(ids, id)
				ptrs = append(ptrs, pointer(target, id))
			}
		}
		if len(ids) == 0 {
			continue
		}
		id := o["objectId"].(string)
		updatedAt, err := w.Update(class, id, map[string]any{field: map[string]any{"__op": "AddRelation", "objects": ptrs}})
		if err != nil {
			return fmt.Errorf("relate %s.%s: %w", class, field, err)
		}
		o["updatedAt"] = updatedAt
		world.Members[RelKey{class, id, field}] = ids
	}
	return nil
}

// ownerPointer points to a random owner, now and then to one that does
// not exist.
func ownerPointer(r *rand.Rand, world *World) map[string]any {
	owners := world.Objects[OwnerClass]
	if r.Intn(8) == 0 {
		return pointer(OwnerClass, "missing00")
	}
	p := pointer(OwnerClass, owners[r.Intn(len(owners))]["objectId"].(string))
	if r.Intn(10) == 0 {
		// Members beside the pointer's (an included object's fields): the
		// value is still that pointer, for equality and for the indexes.
		p["name"] = "included"
	}
	return p
}

// randomItem is an Item body: each field of its one type, missing some of
// the time (and n sometimes null).
func randomItem(r *rand.Rand, world *World) map[string]any {
	o := map[string]any{}
	maybe := func(key string, pct int, v func() any) {
		if r.Intn(100) < pct {
			o[key] = v()
		}
	}
	maybe("n", 80, func() any {
		if r.Intn(15) == 0 {
			return nil
		}
		return pick(r, poolNumbers)
	})
	maybe("s", 80, func() any { return pick(r, poolStrings) })
	maybe("b", 70, func() any { return r.Intn(2) == 0 })
	maybe("d", 75, func() any { return randomDate(r) })
	maybe("p", 70, func() any { return ownerPointer(r, world) })
	maybe("ps", 50, func() any {
		arr := []any{}
		for j := r.Intn(4); j > 0; j-- {
			arr = append(arr, ownerPointer(r, world))
		}
		return arr
	})
	maybe("arr", 70, func() any {
		arr := []any{}
		for j := r.Intn(5); j > 0; j-- {
			if r.Intn(2) == 0 {
				arr = append(arr, pick(r, poolNumbers))
			} else {
				arr = append(arr, pick(r, poolStrings))
			}
		}
		return arr
	})
	maybe("o", 70, func() any {
		m := map[string]any{"y": pick(r, poolStrings)}
		if r.Intn(4) > 0 {
			m["x"] = pick(r, poolNumbers)
		}
		return m
	})
	maybe("loc", 80, func() any { return geoPoint(randomPoint(r, 1.5)) })
	maybe("txt", 70, func() any { return randomText(r) })
	maybe("ACL", 60, func() any { return randomACL(r) })
	return o
}

// Callers are who the queries run as, besides the master key: the
// public, a user, and a user with a role.
var Callers = []*Caller{{}, {UserID: "u1"}, {UserID: "u2", Roles: []string{"role:A"}}}

// randomACL grants read to some of the callers (write alone hides).
func randomACL(r *rand.Rand) map[string]any {
	acl := map[string]any{}
	for _, who := range []string{"*", "u1", "u2", "role:A", "role:B"} {
		switch r.Intn(5) {
		case 0:
			acl[who] = map[string]any{"read": true}
		case 1:
			acl[who] = map[string]any{"read": true, "write": true}
		case 2:
			if who == "*" {
				acl[who] = map[string]any{"write": true}
			}
		}
	}
	return acl
}
