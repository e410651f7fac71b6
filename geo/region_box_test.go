package geo

import (
	"math/rand/v2"
	"testing"
)

// Every point a box holds lies in its bounding cap, whatever the box:
// small, large, across the antimeridian, touching a pole.
func TestBoxBoundingCapHoldsTheBox(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	boxes := []Box{
		{South: 48.8, North: 48.9, West: 2.3, East: 2.4},
		{South: -10, North: 10, West: 170, East: -170},
		{South: 80, North: 90, West: -180, East: 180},
		{South: -60, North: 60, West: -120, East: 120},
		{South: 0, North: 0, West: 5, East: 5},
	}
	for range 50 {
		s, n := r.Float64()*180-90, r.Float64()*180-90
		if s > n {
			s, n = n, s
		}
		boxes = append(boxes, Box{South: s, North: n, West: r.Float64()*360 - 180, East: r.Float64()*360 - 180})
	}
	for _, b := range boxes {
		c, ok := b.BoundingCap()
		if !ok {
			t.Fatalf("%+v: no cap", b)
		}
		width := b.East - b.West
		if width < 0 {
			width += 360
		}
		// The corners, the edges' midpoints and random inner points.
		for i := range 400 {
			fy, fx := r.Float64(), r.Float64()
			switch i % 4 {
			case 0:
				fy, fx = float64(i/4%2), float64(i/8%2)
			case 1:
				fy = float64(i / 4 % 2)
			}
			p := Point{Lat: b.South + fy*(b.North-b.South), Lng: b.West + fx*width}
			if p.Lng > 180 {
				p.Lng -= 360
			}
			if b.ContainsPoint(p) && !c.ContainsPoint(p) {
				t.Fatalf("%+v: %+v in the box, not in its cap %+v (distance %g)", b, p, c, Distance(c.Center, p))
			}
		}
	}
}
