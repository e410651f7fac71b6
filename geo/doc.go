// Package geo is Quarry's geometry on the sphere: GeoPoint and Polygon
// values and their validation, great-circle distances and unit conversion
// with Parse's Earth radii, the exact tests behind $nearSphere, $box,
// $polygon, $centerSphere and $geoIntersects (Cap, Box, Polygon), and S2
// cell coverings with their interior cells marked, for index scans. It is
// built on github.com/golang/geo/s2.
//
// It is a pure leaf: no I/O, no mutable globals, no import of Quarry's
// packages. The matcher, the index and the planner call the same tests and
// the same Distance, so a find, its index scan and a LiveQuery agree.
// $box and $polygon edges follow lines of latitude and longitude (as
// MongoDB-backed Parse Server's flat operators), the short way round in
// longitude; points on an edge are inside (docs/geo.md).
package geo
