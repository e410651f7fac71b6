package transport

import "testing"

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
