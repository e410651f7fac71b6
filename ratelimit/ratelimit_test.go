package ratelimit

import (
	"errors"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		name  string
		rule  Rule
		req   Request
		match bool
	}{
		{"star is every path", Rule{Path: "*"}, Request{Method: "GET", Path: "/classes/A"}, true},
		{"glob", Rule{Path: "/functions/*"}, Request{Method: "POST", Path: "/functions/hello"}, true},
		{"glob crosses slashes", Rule{Path: "/classes/*"}, Request{Method: "GET", Path: "/classes/A/x1"}, true},
		{"glob elsewhere", Rule{Path: "/functions/*"}, Request{Method: "POST", Path: "/classes/A"}, false},
		{"exact", Rule{Path: "/users"}, Request{Method: "POST", Path: "/users"}, true},
		{"exact with trailing slash", Rule{Path: "/users"}, Request{Method: "POST", Path: "/users/"}, true},
		{"exact is not a prefix", Rule{Path: "/users"}, Request{Method: "GET", Path: "/users/me"}, false},
		{"no leading slash", Rule{Path: "login"}, Request{Method: "GET", Path: "/login"}, true},
		{"segment parameter", Rule{Path: "/classes/:className"}, Request{Method: "GET", Path: "/classes/A"}, true},
		{"segment parameter is one segment", Rule{Path: "/classes/:className"}, Request{Method: "GET", Path: "/classes/A/b"}, false},
		{"dots are literal", Rule{Path: "/a.b"}, Request{Method: "GET", Path: "/axb"}, false},
		{"more paths", Rule{Path: "/classes/P", Paths: []string{"/classes/P/*"}}, Request{Method: "PUT", Path: "/classes/P/x"}, true},
		{"method listed", Rule{Path: "*", Methods: []string{"post"}}, Request{Method: "POST", Path: "/x"}, true},
		{"method not listed", Rule{Path: "*", Methods: []string{"POST"}}, Request{Method: "GET", Path: "/x"}, false},
		{"master exempt", Rule{Path: "*"}, Request{Method: "GET", Path: "/x", Master: true}, false},
		{"master included", Rule{Path: "*", IncludeMaster: true}, Request{Method: "GET", Path: "/x", Master: true}, true},
		{"internal exempt", Rule{Path: "*"}, Request{Method: "GET", Path: "/x", Internal: true}, false},
		{"internal included", Rule{Path: "*", IncludeInternal: true}, Request{Method: "GET", Path: "/x", Internal: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.rule.Window, c.rule.Count = time.Second, 1
			l, err := New([]Rule{c.rule}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			c.req.IP = "1.2.3.4"
			// The first request is always allowed; the second is refused
			// exactly when the rule matches.
			if err := l.Check(c.req); err != nil {
				t.Fatal(err)
			}
			if refused := l.Check(c.req) != nil; refused != c.match {
				t.Fatalf("refused %v, want %v", refused, c.match)
			}
		})
	}
}

func TestWindowAndAddress(t *testing.T) {
	now := time.Unix(1000, 0)
	l, err := New([]Rule{{Path: "/functions/*", Window: time.Minute, Count: 2, Message: "slow down"}},
		Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Method: "POST", Path: "/functions/f", IP: "10.0.0.1"}
	steps := []struct {
		advance time.Duration
		ip      string
		refused bool
	}{
		{0, "10.0.0.1", false},
		{time.Second, "10.0.0.1", false},
		{time.Second, "10.0.0.1", true},
		{0, "10.0.0.2", false}, // another address has its own count
		{time.Minute, "10.0.0.1", false},
		{0, "10.0.0.1", false},
		{0, "10.0.0.1", true},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		req.IP = s.ip
		err := l.Check(req)
		if (err != nil) != s.refused {
			t.Fatalf("step %d: err %v, want refused %v", i, err, s.refused)
		}
		if err != nil {
			var le *Error
			pe, ok := schema.AsError(err)
			if !errors.As(err, &le) || !ok || pe.Code != Code || pe.Message != "slow down" {
				t.Fatalf("step %d: refusal %#v", i, err)
			}
		}
	}
}

func TestBadRules(t *testing.T) {
	for _, r := range []Rule{
		{Path: "", Window: time.Second, Count: 1},
		{Path: "*", Window: 0, Count: 1},
		{Path: "*", Window: time.Second, Count: 0},
		{Path: "*", Window: time.Second, Count: 1, RedisURL: "http://x"},
	} {
		if _, err := New([]Rule{r}, Options{}); !errors.Is(err, errBadRule) {
			t.Errorf("%+v: err %v, want errBadRule", r, err)
		}
	}
}

func TestNilLimiter(t *testing.T) {
	var l *Limiter
	if l.Check(Request{Path: "/x"}) != nil || !l.Empty() || l.Close() != nil {
		t.Fatal("a nil limiter must allow everything")
	}
}
