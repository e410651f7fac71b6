package transport_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// Geo queries over HTTP: every operator, its units and shapes, the
// antimeridian and the poles, geo with other constraints, and every
// error. The places are real cities; distances from San Francisco: Oakland
// 13 km, San Jose 68 km (42 miles), Sacramento 121 km (75 miles), Los
// Angeles 559 km.

var geoPlaces = []struct {
	name, cat string
	lat, lng  float64
}{
	{"sf", "city", 37.7749, -122.4194},
	{"oak", "city", 37.8044, -122.2712},
	{"sj", "town", 37.3382, -121.8863},
	{"sac", "city", 38.5816, -121.4944},
	{"la", "city", 34.0522, -118.2437},
	{"ny", "city", 40.7128, -74.0060},
	{"suva", "town", -18.1416, 178.4419}, // Fiji, east of the antimeridian
	{"taveuni", "town", -16.85, -179.95}, // Fiji, west of it
	{"apia", "town", -13.8333, -171.75},
	{"pole1", "camp", 89.9, 10},
	{"pole2", "camp", 89.95, -170},
	{"alert", "camp", 82.5, -62.3},
	{"edge", "mark", 37.0, -122.0}, // on the edges of the bay box and polygon below
}

func geoPt(lat, lng float64) map[string]any {
	return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
}

// geoFind runs a query and returns the places' names in result order.
func geoFind(t testing.TB, srv *servertest.Server, class string, where any, extra url.Values) ([]string, servertest.Response) {
	t.Helper()
	q := url.Values{}
	for k, v := range extra {
		q[k] = v
	}
	w, _ := json.Marshal(where)
	q.Set("where", string(w))
	res := srv.Do(t, "GET", "/classes/"+class+"?"+q.Encode(), nil, servertest.Master())
	var body struct {
		Results []map[string]any `json:"results"`
	}
	_ = json.Unmarshal(res.Body, &body)
	names := []string{}
	for _, r := range body.Results {
		n, _ := r["name"].(string)
		names = append(names, n)
	}
	return names, res
}

func geoServer(t *testing.T, edit func(*config.Options)) *servertest.Server {
	srv := servertest.Start(t, edit)
	for _, p := range geoPlaces {
		mustCreate(t, srv, "Spot", map[string]any{"name": p.name, "cat": p.cat, "loc": geoPt(p.lat, p.lng)})
	}
	mustCreate(t, srv, "Spot", map[string]any{"name": "nowhere", "cat": "city"}) // no location
	square := func(lat, lng, d float64) []any {
		return []any{[]any{lat - d, lng - d}, []any{lat - d, lng + d}, []any{lat + d, lng + d}, []any{lat + d, lng - d}}
	}
	for _, z := range []struct {
		name   string
		coords []any
	}{
		{"bay", square(37.6, -122.2, 0.5)},
		{"sfbox", square(37.77, -122.42, 0.05)},
		{"fiji", []any{[]any{-19.0, 177.0}, []any{-19.0, -179.0}, []any{-16.0, -179.0}, []any{-16.0, 177.0}}},
	} {
		mustCreate(t, srv, "Zone", map[string]any{"name": z.name, "area": map[string]any{"__type": "Polygon", "coordinates": z.coords}})
	}
	return srv
}

func TestGeoQueriesHTTP(t *testing.T) {
	srv := geoServer(t, nil)
	type M = map[string]any
	type A = []any
	sf := geoPt(37.7749, -122.4194)
	near := func(extra M) M {
		m := M{"$nearSphere": sf}
		for k, v := range extra {
			m[k] = v
		}
		return M{"loc": m}
	}
	box := func(sw, ne M) M { return M{"loc": M{"$within": M{"$box": A{sw, ne}}}} }
	poly := func(p any) M { return M{"loc": M{"$geoWithin": M{"$polygon": p}}} }
	sphere := func(c any, r float64) M { return M{"loc": M{"$geoWithin": M{"$centerSphere": A{c, r}}}} }
	// A triangle around the bay whose southern edge runs along latitude 37
	// through "edge".
	bayTriangle := A{geoPt(37, -122.6), geoPt(37, -121.4), geoPt(38.0, -122.4)}
	cases := []struct {
		name    string
		class   string
		where   M
		params  url.Values
		want    []string // in order when ordered is set
		ordered bool
		count   int // checked when params hold count=1
	}{
		// $nearSphere: sorted by distance, limited to 100 miles by default.
		{name: "nearSphere sorts by distance within 100 miles", where: near(nil), want: []string{"sf", "oak", "sj", "edge", "sac"}, ordered: true},
		{name: "maxDistanceInKilometers", where: near(M{"$maxDistanceInKilometers": 20}), want: []string{"sf", "oak"}, ordered: true},
		{name: "maxDistanceInMiles", where: near(M{"$maxDistanceInMiles": 50}), want: []string{"sf", "oak", "sj"}, ordered: true},
		{name: "maxDistanceInRadians", where: near(M{"$maxDistanceInRadians": 0.001}), want: []string{"sf"}, ordered: true},
		{name: "maxDistance is radians", where: near(M{"$maxDistance": 0.015}), want: []string{"sf", "oak", "sj", "edge"}, ordered: true},
		{name: "a larger maximum than 100 miles", where: near(M{"$maxDistanceInKilometers": 600}), want: []string{"sf", "oak", "sj", "edge", "sac", "la"}, ordered: true},
		{name: "several maxima: the tightest", where: near(M{"$maxDistanceInKilometers": 600, "$maxDistanceInMiles": 10}), want: []string{"sf", "oak"}, ordered: true},
		{name: "maxDistance 0 is the point itself", where: near(M{"$maxDistance": 0}), want: []string{"sf"}, ordered: true},
		{name: "nearSphere limit", where: near(nil), params: url.Values{"limit": {"2"}}, want: []string{"sf", "oak"}, ordered: true},
		{name: "nearSphere skip", where: near(nil), params: url.Values{"skip": {"1"}, "limit": {"2"}}, want: []string{"oak", "sj"}, ordered: true},
		{name: "explicit order overrides distance", where: near(nil), params: url.Values{"order": {"-name"}}, want: []string{"sj", "sf", "sac", "oak", "edge"}, ordered: true},
		{name: "nearSphere with count", where: near(nil), params: url.Values{"count": {"1"}, "limit": {"1"}}, want: []string{"sf"}, ordered: true, count: 5},
		{name: "nearSphere count only", where: near(M{"$maxDistanceInKilometers": 70}), params: url.Values{"count": {"1"}, "limit": {"0"}}, want: []string{}, count: 3},
		{name: "nearSphere and another constraint", where: M{"loc": M{"$nearSphere": sf}, "cat": "city"}, want: []string{"sf", "oak", "sac"}, ordered: true},
		{name: "nearSphere under $and", where: M{"$and": A{near(nil), M{"cat": M{"$ne": "town"}}}}, want: []string{"sf", "oak", "edge", "sac"}, ordered: true},
		{name: "nearSphere with $or elsewhere", where: M{"loc": M{"$nearSphere": sf}, "$or": A{M{"name": "sj"}, M{"name": "oak"}}}, want: []string{"oak", "sj"}, ordered: true},
		{name: "nearest across the antimeridian", where: M{"loc": M{"$nearSphere": geoPt(-17, 179.9), "$maxDistanceInKilometers": 500}}, want: []string{"taveuni", "suva"}, ordered: true},
		{name: "nearest over the pole", where: M{"loc": M{"$nearSphere": geoPt(89.99, 100), "$maxDistanceInKilometers": 100}}, want: []string{"pole2", "pole1"}, ordered: true},

		// $within $box: edges along lines of latitude and longitude, edges included.
		{name: "box", where: box(geoPt(37, -122.6), geoPt(38, -121.8)), want: []string{"edge", "oak", "sf", "sj"}},
		{name: "box with corners reversed", where: box(geoPt(38, -121.8), geoPt(37, -122.6)), want: []string{"edge", "oak", "sf", "sj"}},
		{name: "box across the antimeridian", where: box(geoPt(-19, 178), geoPt(-13, -171)), want: []string{"apia", "suva", "taveuni"}},
		{name: "box around the pole", where: box(geoPt(89.5, -180), geoPt(90, 180)), want: []string{"pole1", "pole2"}},
		{name: "box and another constraint", where: M{"loc": M{"$within": M{"$box": A{geoPt(37, -122.6), geoPt(38, -121.8)}}}, "cat": "city"}, want: []string{"oak", "sf"}},
		{name: "box count", where: box(geoPt(37, -122.6), geoPt(38, -121.8)), params: url.Values{"count": {"1"}, "limit": {"0"}}, want: []string{}, count: 4},

		// $geoWithin $polygon: at least 3 points, open or closed, edges included.
		{name: "polygon of GeoPoints", where: poly(bayTriangle), want: []string{"edge", "oak", "sf", "sj"}},
		{name: "closed polygon", where: poly(append(append(A{}, bayTriangle...), bayTriangle[0])), want: []string{"edge", "oak", "sf", "sj"}},
		{name: "polygon of [lng, lat] pairs", where: poly(A{A{-122.6, 37.0}, A{-121.4, 37.0}, A{-122.4, 38.0}}), want: []string{"edge", "oak", "sf", "sj"}},
		{name: "Polygon value", where: poly(M{"__type": "Polygon", "coordinates": A{A{37.0, -122.6}, A{37.0, -121.4}, A{38.0, -122.4}}}), want: []string{"edge", "oak", "sf", "sj"}},
		{name: "polygon across the antimeridian", where: poly(A{geoPt(-19, 177), geoPt(-19, -179), geoPt(-16, -179), geoPt(-16, 177)}), want: []string{"suva", "taveuni"}},
		{name: "polygon around the north pole", where: poly(A{geoPt(85, 0), geoPt(85, 90), geoPt(85, 180), geoPt(85, -90)}), want: []string{"pole1", "pole2"}},
		{name: "polygon and another constraint", where: M{"loc": M{"$geoWithin": M{"$polygon": bayTriangle}}, "cat": "town"}, want: []string{"sj"}},

		// $geoWithin $centerSphere: radians, point as [lng, lat] or a GeoPoint.
		{name: "centerSphere [lng, lat]", where: sphere(A{-122.4194, 37.7749}, 0.015), want: []string{"edge", "oak", "sf", "sj"}},
		{name: "centerSphere GeoPoint", where: sphere(sf, 0.003), want: []string{"oak", "sf"}},
		{name: "centerSphere around the pole", where: sphere(A{0, 90}, 0.0025), want: []string{"pole1", "pole2"}},
		{name: "centerSphere across the antimeridian", where: sphere(A{180, -17.5}, 0.03), want: []string{"suva", "taveuni"}},
		{name: "centerSphere the whole Earth", where: sphere(A{0, 0}, 4), params: url.Values{"count": {"1"}, "limit": {"0"}}, want: []string{}, count: len(geoPlaces)},

		// $geoIntersects $point on Polygon fields.
		{name: "geoIntersects", class: "Zone", where: M{"area": M{"$geoIntersects": M{"$point": sf}}}, want: []string{"bay", "sfbox"}},
		{name: "geoIntersects on an edge", class: "Zone", where: M{"area": M{"$geoIntersects": M{"$point": geoPt(37.1, -122.0)}}}, want: []string{"bay"}},
		{name: "geoIntersects across the antimeridian", class: "Zone", where: M{"area": M{"$geoIntersects": M{"$point": geoPt(-17, 179.5)}}}, want: []string{"fiji"}},
		{name: "geoIntersects nothing", class: "Zone", where: M{"area": M{"$geoIntersects": M{"$point": geoPt(0, 0)}}}, want: []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			class := c.class
			if class == "" {
				class = "Spot"
			}
			got, res := geoFind(t, srv, class, c.where, c.params)
			if res.Status != 200 {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			if !c.ordered {
				sort.Strings(got)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("got %v, want %v", got, c.want)
			}
			if c.params.Get("count") == "1" {
				if n, _ := res.Map()["count"].(float64); int(n) != c.count {
					t.Errorf("count %v, want %d", res.Map()["count"], c.count)
				}
			}
		})
	}
}

// TestGeoQueryErrorsHTTP: every malformed geo constraint is a 4xx with
// Parse's code.
func TestGeoQueryErrorsHTTP(t *testing.T) {
	srv := geoServer(t, nil)
	m := servertest.Master()
	type M = map[string]any
	type A = []any
	q := func(where any) string {
		b, _ := json.Marshal(where)
		return "/classes/Spot?where=" + url.QueryEscape(string(b))
	}
	sf := geoPt(37.7749, -122.4194)
	bad := func(name string, where any, status, code int, text string) scenario {
		return scenario{name: name, method: "GET", path: q(where), headers: m, expectedStatus: status,
			expectedContains: []string{fmt.Sprintf(`"code":%d`, code), text}}
	}
	runScenarios(t, srv, []scenario{
		bad("nearSphere inside $or", M{"$or": A{M{"loc": M{"$nearSphere": sf}}, M{"name": "x"}}}, 400, 102, "not allowed inside $or"),
		bad("centerSphere inside $or", M{"$or": A{M{"loc": M{"$geoWithin": M{"$centerSphere": A{A{0, 0}, 1}}}}}}, 400, 102, "not allowed inside $or"),
		bad("box inside $nor", M{"$nor": A{M{"loc": M{"$within": M{"$box": A{sf, sf}}}}}}, 400, 102, "not allowed"),
		bad("nearSphere not a GeoPoint", M{"loc": M{"$nearSphere": A{1, 2}}}, 400, 107, "GeoPoint"),
		bad("nearSphere latitude out of range", M{"loc": M{"$nearSphere": geoPt(91, 0)}}, 400, 107, "latitude"),
		bad("nearSphere longitude out of range", M{"loc": M{"$nearSphere": geoPt(0, 181)}}, 400, 107, "longitude"),
		bad("negative maxDistance", M{"loc": M{"$nearSphere": sf, "$maxDistance": -1}}, 400, 107, "maxDistance"),
		bad("maxDistanceInMiles not a number", M{"loc": M{"$nearSphere": sf, "$maxDistanceInMiles": "far"}}, 400, 107, "maxDistanceInMiles"),
		bad("maxDistance without nearSphere", M{"loc": M{"$maxDistance": 1}}, 400, 102, "$nearSphere"),
		bad("box of one point", M{"loc": M{"$within": M{"$box": A{sf}}}}, 400, 107, "malformatted $within arg"),
		bad("box of three points", M{"loc": M{"$within": M{"$box": A{sf, sf, sf}}}}, 400, 107, "malformatted $within arg"),
		bad("box without $box", M{"loc": M{"$within": M{"$polygon": A{sf, sf, sf}}}}, 400, 107, "malformatted $within arg"),
		bad("box corner out of range", M{"loc": M{"$within": M{"$box": A{geoPt(-91, 0), sf}}}}, 400, 107, "latitude"),
		bad("polygon of two points", M{"loc": M{"$geoWithin": M{"$polygon": A{sf, sf}}}}, 400, 107, "at least 3"),
		bad("Polygon value of two points", M{"loc": M{"$geoWithin": M{"$polygon": M{"__type": "Polygon", "coordinates": A{A{0, 0}, A{1, 1}}}}}}, 400, 107, "at least 3"),
		bad("polygon not an array", M{"loc": M{"$geoWithin": M{"$polygon": "square"}}}, 400, 107, "$polygon"),
		bad("polygon point out of range", M{"loc": M{"$geoWithin": M{"$polygon": A{sf, sf, geoPt(0, 200)}}}}, 400, 107, "longitude"),
		bad("geoWithin without a shape", M{"loc": M{"$geoWithin": M{"$box": A{sf, sf}}}}, 400, 107, "$geoWithin"),
		bad("centerSphere without a distance", M{"loc": M{"$geoWithin": M{"$centerSphere": A{A{0, 0}}}}}, 400, 107, "$centerSphere"),
		bad("centerSphere negative distance", M{"loc": M{"$geoWithin": M{"$centerSphere": A{A{0, 0}, -1}}}}, 400, 107, "distance invalid"),
		bad("centerSphere bad point", M{"loc": M{"$geoWithin": M{"$centerSphere": A{"here", 1}}}}, 400, 107, "geo point invalid"),
		bad("geoIntersects without a point", M{"area": M{"$geoIntersects": M{"$point": A{1, 2}}}}, 400, 107, "$point"),
		{name: "a second GeoPoint field", method: "POST", path: "/classes/Spot", headers: m,
			body: M{"other": geoPt(1, 1)}, expectedStatus: 400, expectedContains: []string{`"code":111`}},
		{name: "a GeoPoint at latitude 90", method: "POST", path: "/classes/Spot", headers: m,
			body: M{"loc": geoPt(90, 0)}, expectedStatus: 400},
		{name: "a GeoPoint at longitude -180", method: "POST", path: "/classes/Spot", headers: m,
			body: M{"loc": geoPt(0, -180)}, expectedStatus: 400},
	})
}

// TestGeoWritesFollowHTTP: moving, removing and adding points and polygons
// shows in the next query (the S2 indexes follow writes), and the 100-mile
// limit can be lifted by configuration.
func TestGeoWritesFollowHTTP(t *testing.T) {
	srv := geoServer(t, func(o *config.Options) { o.NearSphereMaxDistanceMiles = 0 })
	type M = map[string]any
	sf := geoPt(37.7749, -122.4194)
	names, _ := geoFind(t, srv, "Spot", M{"loc": M{"$nearSphere": sf}}, url.Values{"limit": {"6"}})
	if strings.Join(names, ",") != "sf,oak,sj,edge,sac,la" {
		t.Fatalf("without a limit: %v", names)
	}
	// A new class's first GeoPoint is indexed too.
	id := mustCreate(t, srv, "Cafe", M{"name": "blue", "loc": geoPt(37.78, -122.41)})
	mustCreate(t, srv, "Cafe", M{"name": "red", "loc": geoPt(40, -100)})
	if names, _ := geoFind(t, srv, "Cafe", M{"loc": M{"$nearSphere": sf, "$maxDistanceInKilometers": 5}}, nil); strings.Join(names, ",") != "blue" {
		t.Fatalf("new class: %v", names)
	}
	// Move it away, then back, then remove the location.
	for _, step := range []struct {
		body M
		want string
	}{
		{M{"loc": geoPt(10, 10)}, ""},
		{M{"loc": geoPt(37.7751, -122.4196)}, "blue"},
		{M{"loc": M{"__op": "Delete"}}, ""},
	} {
		if res := srv.Do(t, "PUT", "/classes/Cafe/"+id, step.body, servertest.Master()); res.Status != 200 {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		names, _ := geoFind(t, srv, "Cafe", M{"loc": M{"$geoWithin": M{"$centerSphere": []any{sf, 0.001}}}}, nil)
		if strings.Join(names, ",") != step.want {
			t.Fatalf("after %v: %v, want %q", step.body, names, step.want)
		}
	}
	if res := srv.Do(t, "DELETE", "/classes/Cafe/"+id, nil, servertest.Master()); res.Status != 200 {
		t.Fatalf("delete: %d", res.Status)
	}
	// Polygons: a new zone is found, a changed one follows.
	zid := mustCreate(t, srv, "Zone", M{"name": "tiny", "area": M{"__type": "Polygon", "coordinates": []any{
		[]any{10.0, 10.0}, []any{10.0, 10.001}, []any{10.001, 10.001}}}})
	q := M{"area": M{"$geoIntersects": M{"$point": geoPt(10.0009, 10.0009)}}}
	if names, _ := geoFind(t, srv, "Zone", q, nil); strings.Join(names, ",") != "tiny" {
		t.Fatalf("new zone: %v", names)
	}
	srv.Do(t, "PUT", "/classes/Zone/"+zid, M{"area": M{"__type": "Polygon", "coordinates": []any{
		[]any{20.0, 20.0}, []any{20.0, 21.0}, []any{21.0, 21.0}}}}, servertest.Master())
	if names, _ := geoFind(t, srv, "Zone", q, nil); len(names) != 0 {
		t.Fatalf("moved zone still found: %v", names)
	}
}

// TestGeoExplainHTTP: the plan shows the S2 access.
func TestGeoExplainHTTP(t *testing.T) {
	srv := geoServer(t, nil)
	where, _ := json.Marshal(map[string]any{"loc": map[string]any{"$within": map[string]any{"$box": []any{geoPt(37, -122.6), geoPt(38, -121.8)}}}})
	res := srv.Do(t, "GET", "/classes/Spot?explain=true&limit=2&where="+url.QueryEscape(string(where)), nil, servertest.Master())
	if res.Status != 200 || !strings.Contains(string(res.Body), "geo index loc") {
		t.Errorf("explain: %d %s", res.Status, res.Body)
	}
}

// TestPolygonRingsAreClosed: an open ring is stored closed (the first point
// repeated), as Parse stores it, and an equality names it open or closed.
func TestPolygonRingsAreClosed(t *testing.T) {
	srv := servertest.Start(t, nil)
	open := []any{[]any{0.0, 0.0}, []any{0.0, 1.0}, []any{1.0, 1.0}}
	closed := append(append([]any{}, open...), []any{0.0, 0.0})
	id := mustCreate(t, srv, "Zone", map[string]any{"area": map[string]any{"__type": "Polygon", "coordinates": open}})
	got := mustGet(t, srv, "Zone", id)["area"].(map[string]any)["coordinates"]
	if !reflect.DeepEqual(got, closed) {
		t.Fatalf("stored ring %v, want %v", got, closed)
	}
	for name, ring := range map[string][]any{"open": open, "closed": closed} {
		where := map[string]any{"area": map[string]any{"__type": "Polygon", "coordinates": ring}}
		res := srv.Do(t, "GET", qPath("Zone", map[string]any{"where": where}), nil, servertest.App())
		if n := len(res.Map()["results"].([]any)); res.Status != 200 || n != 1 {
			t.Errorf("equality with the %s ring: %d %s", name, res.Status, res.Body)
		}
	}
}
