package ratelimit

import "strings"

// A rule limits an operation, not a spelling of it: Parse's REST API
// reaches several operations through more than one route, and a rule
// written for one of them must count the others too, or a client simply
// takes the other door. The tables below are every such alias.

// operation is one route (method and path) that performs a request's
// operation.
type operation struct{ method, path string }

// maxForms bounds the routes one operation has: as sent, its method
// twin, and each of those under its class alias.
const maxForms = 4

// methodTwins are the paths whose operation is the same under GET and
// POST (both log in; both check a password).
var methodTwins = map[string]bool{"/login": true, "/verifyPassword": true}

// classAliases are the built-in classes whose objects have a REST path of
// their own besides /classes/<name>, both ways.
var classAliases = [][2]string{
	{"/classes/_User", "/users"},
	{"/classes/_Role", "/roles"},
	{"/classes/_Session", "/sessions"},
	{"/classes/_Installation", "/installations"},
}

// forms appends to buf every route that performs q's operation, q's own
// first. It allocates only for a class alias (a path rewritten).
func (q Request) forms(buf []operation) []operation {
	buf = append(buf, operation{q.Method, q.Path})
	if methodTwins[q.Path] {
		switch q.Method {
		case "GET":
			buf = append(buf, operation{"POST", q.Path})
		case "POST":
			buf = append(buf, operation{"GET", q.Path})
		}
	}
	for _, f := range buf {
		if alias, ok := classAlias(f.path); ok {
			buf = append(buf, operation{f.method, alias})
		}
	}
	return buf
}

// classAlias is path under a built-in class's other REST prefix.
func classAlias(path string) (string, bool) {
	if rest, ok := strings.CutPrefix(path, "/classes/"); ok && (rest == "" || rest[0] != '_') {
		return "", false // the usual case, decided at once: not a built-in class
	}
	for _, a := range classAliases {
		for i, from := range a {
			rest, ok := strings.CutPrefix(path, from)
			if ok && (rest == "" || rest[0] == '/') {
				return a[1-i] + rest, true
			}
		}
	}
	return "", false
}
