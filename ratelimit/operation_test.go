package ratelimit

import (
	"errors"
	"testing"
	"time"
)

// TestRuleCoversTheOperation: a rule written for one route of an
// operation counts its other routes, and nothing else.
func TestRuleCoversTheOperation(t *testing.T) {
	cases := []struct {
		name    string
		rule    Rule
		method  string
		path    string
		counted bool
	}{
		{"POST rule, GET /login", Rule{Path: "/login", Methods: []string{"POST"}}, "GET", "/login", true},
		{"GET rule, POST /login", Rule{Path: "/login", Methods: []string{"GET"}}, "POST", "/login", true},
		{"POST rule, GET /verifyPassword", Rule{Path: "/verifyPassword", Methods: []string{"POST"}}, "GET", "/verifyPassword", true},
		{"/users rule, /classes/_User", Rule{Path: "/users", Methods: []string{"POST"}}, "POST", "/classes/_User", true},
		{"/classes/_User/* rule, /users/x", Rule{Path: "/classes/_User/*"}, "PUT", "/users/abc", true},
		{"/roles rule, /classes/_Role/x", Rule{Path: "/roles/:id"}, "DELETE", "/classes/_Role/abc", true},
		{"/sessions rule, /classes/_Session", Rule{Path: "/sessions"}, "GET", "/classes/_Session", true},
		{"/installations rule, /classes/_Installation", Rule{Path: "/installations"}, "POST", "/classes/_Installation", true},
		{"POST /login rule, DELETE /login", Rule{Path: "/login", Methods: []string{"POST"}}, "DELETE", "/login", false},
		{"GET rule on a class, POST", Rule{Path: "/classes/A", Methods: []string{"GET"}}, "POST", "/classes/A", false},
		{"/users rule, /classes/_Users", Rule{Path: "/users"}, "POST", "/classes/_Users", false},
		{"/users rule, /usersX", Rule{Path: "/users"}, "POST", "/usersX", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.rule.Window, c.rule.Count = time.Minute, 1
			l, err := New([]Rule{c.rule}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			q := Request{Method: c.method, Path: c.path, IP: "1.2.3.4"}
			if err := l.Check(q); err != nil {
				t.Fatalf("first request refused: %v", err)
			}
			var limited *Error
			if counted := errors.As(l.Check(q), &limited); counted != c.counted {
				t.Fatalf("%s %s counted by the rule: %v, want %v", c.method, c.path, counted, c.counted)
			}
		})
	}
}

// BenchmarkCheck_Rules_3: a GET on a class path against three rules that
// do not cover it, the cost rules add to every request.
func BenchmarkCheck_Rules_3(b *testing.B) {
	l, err := New([]Rule{
		{Path: "/login", Methods: []string{"POST"}, Window: time.Minute, Count: 10},
		{Path: "/users", Methods: []string{"POST"}, Window: time.Minute, Count: 10},
		{Path: "/functions/*", Window: time.Minute, Count: 10},
	}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	q := Request{Method: "GET", Path: "/classes/Item/abc", IP: "1.2.3.4"}
	b.ReportAllocs()
	for b.Loop() {
		_ = l.Check(q)
	}
}
