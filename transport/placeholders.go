package transport

import (
	"fmt"
	"html"
	"strings"
)

// fillPlaceholders renders the Mustache subset the pages router's page
// files use: {{name}} (HTML-escaped), {{{name}}} and {{&name}} (as is),
// {{#name}}…{{/name}} (shown when name is set and not false, empty or
// zero), {{^name}}…{{/name}} (the opposite) and {{! comments}}. Names may
// be dotted paths into objects. An unknown name is empty, as in Mustache;
// an unclosed tag or section is kept as text, never an error, so an
// operator's broken page still shows.
func fillPlaceholders(text string, values map[string]any) string {
	var b strings.Builder
	renderSection(&b, text, values)
	return b.String()
}

func renderSection(b *strings.Builder, text string, values map[string]any) {
	for {
		open := strings.Index(text, "{{")
		if open < 0 {
			b.WriteString(text)
			return
		}
		b.WriteString(text[:open])
		rest := text[open+2:]
		closer, raw := "}}", false
		if strings.HasPrefix(rest, "{") {
			closer, raw, rest = "}}}", true, rest[1:]
		}
		end := strings.Index(rest, closer)
		if end < 0 {
			b.WriteString(text[open:])
			return
		}
		tag := strings.TrimSpace(rest[:end])
		text = rest[end+len(closer):]
		switch {
		case raw:
			b.WriteString(placeholderText(lookupPlaceholder(values, tag)))
		case strings.HasPrefix(tag, "!"):
		case strings.HasPrefix(tag, "&"):
			b.WriteString(placeholderText(lookupPlaceholder(values, strings.TrimSpace(tag[1:]))))
		case strings.HasPrefix(tag, "#"), strings.HasPrefix(tag, "^"):
			name := strings.TrimSpace(tag[1:])
			endTag := "{{/" + name + "}}"
			stop := strings.Index(text, endTag)
			if stop < 0 {
				b.WriteString("{{" + tag + "}}")
				continue
			}
			if placeholderTruthy(lookupPlaceholder(values, name)) == (tag[0] == '#') {
				renderSection(b, text[:stop], values)
			}
			text = text[stop+len(endTag):]
		case strings.HasPrefix(tag, "/"):
			// A stray closing tag: nothing to close.
		default:
			b.WriteString(html.EscapeString(placeholderText(lookupPlaceholder(values, tag))))
		}
	}
}

func lookupPlaceholder(values map[string]any, name string) any {
	if v, ok := values[name]; ok {
		return v
	}
	var cur any = values
	for _, part := range strings.Split(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

func placeholderText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%f", v), "0"), ".")
	}
	return fmt.Sprint(v)
}

func placeholderTruthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	case []any:
		return len(v) > 0
	}
	return true
}
