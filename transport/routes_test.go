package transport

import "testing"

// TestRouteTableMatch: every request finds the route a radix router would
// give it (a fixed segment beats a parameter at the first place two
// patterns differ), with its parameters bound, and paths no route takes
// find nothing.
func TestRouteTableMatch(t *testing.T) {
	var s Server
	s.registerRoutes()
	cases := []struct {
		method, rel string
		pattern     string // "" when no route matches
		params      map[string]string
	}{
		{"GET", "/classes/Item/abc", "/classes/{className}/{objectId}", map[string]string{"className": "Item", "objectId": "abc"}},
		{"GET", "/classes/Item", "/classes/{className}", map[string]string{"className": "Item"}},
		{"GET", "/users/me", "/users/me", nil},
		{"GET", "/users/u1", "/users/{objectId}", map[string]string{"objectId": "u1"}},
		{"PUT", "/users/me", "/users/{objectId}", map[string]string{"objectId": "me"}},
		{"GET", "/sessions/me", "/sessions/me", nil},
		{"GET", "/cloud_code/jobs/data", "/cloud_code/jobs/data", nil},
		{"PUT", "/cloud_code/jobs/j1", "/cloud_code/jobs/{objectId}", map[string]string{"objectId": "j1"}},
		{"PUT", "/hooks/triggers/Item/beforeSave", "/hooks/triggers/{class}/{trigger}", map[string]string{"class": "Item", "trigger": "beforeSave"}},
		{"POST", "/batch", "/batch", nil},
		{"PATCH", "/classes/Item/abc", "", nil},
		{"GET", "/classes//abc", "", nil},
		{"GET", "/classes/Item/abc/more", "", nil},
		{"GET", "/nothing", "", nil},
		{"GET", "/a/b/c/d/e/f/g/h/i/j", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.method+tc.rel, func(t *testing.T) {
			var p pathParams
			r := s.table.match(tc.method, tc.rel, &p)
			switch {
			case tc.pattern == "" && r != nil:
				t.Fatalf("matched %s %s, want no route", r.method, r.pattern)
			case tc.pattern == "":
				return
			case r == nil:
				t.Fatalf("no route, want %s", tc.pattern)
			case r.pattern != tc.pattern:
				t.Fatalf("matched %s, want %s", r.pattern, tc.pattern)
			case p.n != len(tc.params):
				t.Fatalf("%d parameters, want %d", p.n, len(tc.params))
			}
			for name, want := range tc.params {
				if got := p.get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

// TestRouteFamily: the family a routed request is counted under (its
// route's first segment) is the one the path names (Server.family).
func TestRouteFamily(t *testing.T) {
	s := Server{opts: Options{MountPath: "/parse"}}
	s.registerRoutes()
	for _, r := range s.routes {
		path := "/parse"
		for _, seg := range r.segs {
			if isParamSeg(seg) {
				seg = "x"
			}
			path += "/" + seg
		}
		var p pathParams
		if got := s.table.match(r.method, path[len("/parse"):], &p); got == nil {
			t.Errorf("%s %s: no route", r.method, path)
			continue
		}
		if want := s.family([]byte(path)); r.segs[0] != want {
			t.Errorf("%s %s: route family %q, path family %q", r.method, path, r.segs[0], want)
		}
	}
}

// Benchmark_RouteTable_Match_ObjectGet: the route of a get, which must not
// allocate.
func Benchmark_RouteTable_Match_ObjectGet(b *testing.B) {
	var s Server
	s.registerRoutes()
	var p pathParams
	b.ReportAllocs()
	for range b.N {
		if s.table.match("GET", "/classes/Item/abc", &p) == nil {
			b.Fatal("no route")
		}
	}
}
