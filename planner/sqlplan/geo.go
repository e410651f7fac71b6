package sqlplan

import (
	"math"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/where"
)

// The geo operators are decided in SQL by the same arithmetic as package
// geo's exact tests (haversine on the sphere, boxes and polygons on the
// latitude/longitude plane), on the coordinates PostGIS keeps exactly; a
// PostGIS ST_DWithin with room to spare comes first so that a GiST index
// on the column can serve caps. Only the last bit of a sine may differ
// between Go and the database's libm, for points within about 1e-15
// radians of a boundary.

// sphereRadiusMeters bounds PostGIS's sphere radius (6371008.77 m) from
// above, so a prefilter distance in meters never falls short.
const sphereRadiusMeters = 6371009.0

// coords are the longitude and latitude expressions of a GeoPoint column.
func coords(col string) (lng, lat string) {
	return "ST_X(" + col + "::geometry)", "ST_Y(" + col + "::geometry)"
}

// distance is geo.Distance(center, point at col) in radians, as SQL
// (+Inf without a point).
func (b *builder) distance(col string, c geo.Point) string {
	lng, lat := coords(col)
	rad := b.arg(geo.Radian) + "::float8"
	lat1 := b.arg(c.Lat*geo.Radian) + "::float8"
	lat2 := "(" + lat + " * " + rad + ")"
	sLat := "sin((" + lat2 + " - " + lat1 + ") / 2)"
	sLng := "sin((" + lng + " - " + b.arg(c.Lng) + "::float8) * " + rad + " / 2)"
	h := "least(1::float8, greatest(0::float8, " + sLat + " * " + sLat + " + cos(" + lat1 + ") * cos(" + lat2 + ") * " + sLng + " * " + sLng + "))"
	// least and greatest skip NULLs: an object without the point is
	// infinitely far, as the in-memory order puts it.
	return "(CASE WHEN " + col + " IS NULL THEN 'Infinity'::float8 ELSE 2 * atan2(sqrt(" + h + "), sqrt(1 - " + h + ")) END)"
}

// geoOp translates a geo operator (or $exists) on a GeoPoint column.
func (b *builder) geoOp(path string, t typed, op *where.Op) (string, error) {
	if op.Code == where.OpExists {
		if op.Exists {
			return b.present(t), nil
		}
		return not(b.present(t)), nil
	}
	if op.Code == where.OpGeoIntersects {
		return "FALSE", nil // a GeoPoint contains no point: only Polygons intersect
	}
	if op.Code == where.OpNearSphere && op.Near != nil && !op.Near.HasMax {
		return "(" + t.expr + " IS NOT NULL)", nil
	}
	region, ok := matcher.RegionOf(op)
	if !ok {
		return "", unsupported(b.class, "a malformed %s on %q", op.Code, path)
	}
	lng, lat := coords(t.expr)
	switch r := region.(type) {
	case geo.Cap:
		exact := "(" + b.distance(t.expr, r.Center) + " <= " + b.arg(r.Radius) + "::float8)"
		return b.withinCap(t.expr, r, exact), nil
	case geo.Box:
		lngTest := "(" + lng + " >= " + b.arg(r.West) + "::float8 AND " + lng + " <= " + b.arg(r.East) + "::float8)"
		if r.West > r.East {
			lngTest = "(" + lng + " >= " + b.arg(r.West) + "::float8 OR " + lng + " <= " + b.arg(r.East) + "::float8)"
		}
		exact := "(" + lat + " >= " + b.arg(r.South) + "::float8 AND " + lat + " <= " + b.arg(r.North) + "::float8 AND " + lngTest + ")"
		// The exact test reads coordinates no index holds: a cap around
		// the box comes first so that the column's GiST index can serve
		// it (else every $box would scan the table, and be refused with 154).
		bound, ok := r.BoundingCap()
		if !ok {
			return "FALSE", nil
		}
		return b.withinCap(t.expr, bound, exact), nil
	case *geo.Polygon:
		return b.polygon(t.expr, r), nil
	}
	return "", unsupported(b.class, "%s on %q", op.Code, path)
}

// withinCap is exact preceded by a PostGIS ST_DWithin of the cap c with
// room to spare, which a GiST index on col can serve; a cap of the whole
// sphere needs no prefilter.
func (b *builder) withinCap(col string, c geo.Cap, exact string) string {
	if c.Radius >= math.Pi {
		return "(" + exact + ")"
	}
	center := "ST_SetSRID(ST_MakePoint(" + b.arg(c.Center.Lng) + "::float8, " + b.arg(c.Center.Lat) + "::float8), 4326)::geography"
	meters := (c.Radius+geo.Margin)*sphereRadiusMeters + 1
	return "(ST_DWithin(" + col + ", " + center + ", " + b.arg(meters) + "::float8, false) AND " + exact + ")"
}

// polygon is geo.Polygon.ContainsPoint in SQL: the point's longitude
// shifted by whole turns onto the polygon's unwrapped plane, then the
// edge test and the even-odd rule over the edges (a, b).
func (b *builder) polygon(col string, pg *geo.Polygon) string {
	xs, ys, minX, maxX, minY, maxY := pg.Plane()
	n := len(xs)
	ax, ay, bx, by := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		ax[i], ay[i], bx[i], by[i] = xs[j], ys[j], xs[i], ys[i]
	}
	lo, hi := math.Floor((minX-geo.EdgeEpsilon-180)/360), math.Ceil((maxX+geo.EdgeEpsilon+180)/360)
	var shifts []float64
	for k := lo; k <= hi; k++ {
		shifts = append(shifts, 360*k)
	}
	eps := b.arg(geo.EdgeEpsilon) + "::float8"
	edges := "unnest(" + b.arg(ax) + "::float8[], " + b.arg(ay) + "::float8[], " + b.arg(bx) + "::float8[], " + b.arg(by) + "::float8[]) AS e(ax, ay, bx, by)"
	onEdge := "EXISTS (SELECT 1 FROM " + edges + " WHERE p.x >= least(e.ax, e.bx) - " + eps + " AND p.x <= greatest(e.ax, e.bx) + " + eps +
		" AND p.y >= least(e.ay, e.by) - " + eps + " AND p.y <= greatest(e.ay, e.by) + " + eps +
		" AND abs((e.bx - e.ax) * (p.y - e.ay) - (e.by - e.ay) * (p.x - e.ax)) <= " + eps + " * sqrt((e.bx - e.ax) ^ 2 + (e.by - e.ay) ^ 2))"
	crossings := "(SELECT count(*) FROM " + edges + " WHERE CASE WHEN (e.ay > p.y) <> (e.by > p.y) THEN p.x < e.ax + (p.y - e.ay) * (e.bx - e.ax) / (e.by - e.ay) ELSE FALSE END)"
	lng, lat := coords(col)
	return "(EXISTS (SELECT 1 FROM (SELECT " + lng + " + s AS x, " + lat + " AS y FROM unnest(" + b.arg(shifts) + "::float8[]) AS sh(s)) AS p" +
		" WHERE p.x >= " + b.arg(minX) + "::float8 - " + eps + " AND p.x <= " + b.arg(maxX) + "::float8 + " + eps +
		" AND p.y >= " + b.arg(minY) + "::float8 - " + eps + " AND p.y <= " + b.arg(maxY) + "::float8 + " + eps +
		" AND (" + onEdge + " OR " + crossings + " % 2 = 1)))"
}

// nearOf is the distance order of the first top-level $nearSphere on a
// GeoPoint column ("" when there is none), as the in-memory plan sorts.
func (b *builder) nearOf(tree *where.Node) string {
	var found string
	tree.Walk(func(n *where.Node) bool {
		if found != "" || n.Kind == where.KindOr || n.Kind == where.KindNor {
			return false
		}
		for _, op := range n.Ops {
			if n.Kind == where.KindField && op.Code == where.OpNearSphere && op.Near != nil {
				if col, ok := b.t.Columns[n.Path]; ok && col.Kind == store.ColumnGeoPoint {
					found = b.distance(quote(col.Name), op.Near.Point)
				}
			}
		}
		return found == ""
	})
	return found
}
