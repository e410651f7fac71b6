package transport

import (
	"io/fs"
	"testing"
)

// TestFillPlaceholders: the Mustache subset of the router's pages.
func TestFillPlaceholders(t *testing.T) {
	values := map[string]any{"name": `<b>"Ann" & co</b>`, "n": 3.0, "zero": 0.0, "user": map[string]any{"city": "Oslo"}, "no": false}
	for _, tc := range []struct{ in, want string }{
		{"hi {{name}}", "hi &lt;b&gt;&#34;Ann&#34; &amp; co&lt;/b&gt;"},
		{"{{{name}}}", `<b>"Ann" & co</b>`},
		{"{{& name}}", `<b>"Ann" & co</b>`},
		{"{{ n }} {{zero}}", "3 0"},
		{"{{user.city}}", "Oslo"},
		{"[{{missing}}]", "[]"},
		{"{{#n}}yes{{/n}}{{#zero}}no{{/zero}}{{^no}} not{{/no}}", "yes not"},
		{"{{#user}}{{user.city}}{{/user}}", "Oslo"},
		{"{{! a comment }}x", "x"},
		{"{{#open}}never closed", "{{#open}}never closed"},
		{"unclosed {{name", "unclosed {{name"},
	} {
		if got := fillPlaceholders(tc.in, values); got != tc.want {
			t.Errorf("fillPlaceholders(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// BenchmarkFillPlaceholders_DefaultPage: one of Quarry's router pages
// filled with a page's parameters (CPU per page served).
func BenchmarkFillPlaceholders_DefaultPage(b *testing.B) {
	page, err := fs.ReadFile(defaultRouterPages(), "password_reset.html")
	if err != nil {
		b.Fatal(err)
	}
	values := map[string]any{"appName": "Quarry", "appId": "app", "username": "ann", "token": "0123456789abcdef",
		"publicServerUrl": "http://localhost:1337/parse", "locale": "de-AT", "error": "Password too short"}
	text := string(page)
	b.ReportAllocs()
	for b.Loop() {
		_ = fillPlaceholders(text, values)
	}
}
