package geo

// Plane returns the polygon as ContainsPoint tests it: its vertices on the
// unwrapped latitude/longitude plane (x may leave [-180, 180]; a ring
// around a pole is closed through the pole's corners) and their bounds.
// A translation of the exact test to another engine (SQL) reads it.
func (pg *Polygon) Plane() (xs, ys []float64, minX, maxX, minY, maxY float64) {
	return pg.xs, pg.ys, pg.minX, pg.maxX, pg.minY, pg.maxY
}

// EdgeEpsilon is the tolerance, in degrees, within which a point counts as
// on a polygon's edge.
const EdgeEpsilon = edgeEps

// Radian is one degree in radians, as Distance computes it.
const Radian = rad
