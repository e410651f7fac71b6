package planner

import (
	"math"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/planner/where"
	"github.com/quarrydata/quarry/schema"
)

// nearSort orders results by distance from a $nearSphere point when the
// query gives no explicit order.
type nearSort struct {
	path  string
	point where.GeoPoint
}

// nearOf finds a top-level $nearSphere (geo constraints are refused inside
// $or, so a top-level And child is the only place one can be).
func nearOf(root *where.Node) *nearSort {
	for _, c := range root.Children {
		if c.Kind != where.KindField {
			continue
		}
		for _, op := range c.Ops {
			if op.Code == where.OpNearSphere && op.Near != nil {
				return &nearSort{path: c.Path, point: op.Near.Point}
			}
		}
	}
	return nil
}

// distance is the great-circle distance in radians, +Inf when the object
// has no GeoPoint at the path (those cannot match a $nearSphere anyway).
func (n *nearSort) distance(obj schema.Object) float64 {
	v, _ := schema.Get(obj, n.path)
	p, ok := matcher.GeoPointOf(v)
	if !ok {
		return math.Inf(1)
	}
	return matcher.Distance(n.point, p)
}
