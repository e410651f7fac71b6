package graphql

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode"
)

// typeName is a class's GraphQL type name: a leading underscore dropped
// and the first letter upper-cased (_User -> User, gameScore -> GameScore).
func typeName(class string) string {
	n := strings.TrimPrefix(class, "_")
	if n == "" {
		return ""
	}
	return strings.ToUpper(n[:1]) + n[1:]
}

// lowerCamel lower-cases the first letter (GameScore -> gameScore).
func lowerCamel(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// plural is the English plural the generated connection field uses
// (gameScore -> gameScores, category -> categories, box -> boxes).
func plural(s string) string {
	lower := strings.ToLower(s)
	switch {
	case strings.HasSuffix(lower, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(lower[len(lower)-2])):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(lower, "s"), strings.HasSuffix(lower, "x"), strings.HasSuffix(lower, "z"),
		strings.HasSuffix(lower, "ch"), strings.HasSuffix(lower, "sh"):
		return s + "es"
	}
	return s + "s"
}

// validName reports whether s is a GraphQL name.
func validName(s string) bool {
	if s == "" || strings.HasPrefix(s, "__") {
		return false
	}
	for i, r := range s {
		if r > unicode.MaxASCII || !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// globalID is the Relay id of an object: base64 of "Class:objectId", with
// the Parse class name.
func globalID(class, id string) string {
	return base64.StdEncoding.EncodeToString([]byte(class + ":" + id))
}

// fromGlobalID reads an ID argument, which may be a global id or a plain
// objectId. class is "" when the id came as a plain objectId.
func fromGlobalID(id string) (class, objectID string) {
	if b, err := base64.StdEncoding.DecodeString(id); err == nil {
		if c, o, ok := strings.Cut(string(b), ":"); ok && c != "" && o != "" && validName(strings.TrimPrefix(c, "_")) {
			return c, o
		}
	}
	return "", id
}

// idOf reads an ID argument naming an object of class: a global id of
// that class, or else the text itself as a plain objectId (a plain id that
// happens to decode as another class's global id stays itself).
func idOf(class, id string) string {
	if c, oid := fromGlobalID(id); c == class {
		return oid
	}
	return id
}

// cursor encodes a connection offset as Relay's array connections do.
func cursor(offset int) string {
	return base64.StdEncoding.EncodeToString([]byte("arrayconnection:" + strconv.Itoa(offset)))
}

// fromCursor reads a cursor back; ok is false when it is not one.
func fromCursor(c string) (int, bool) {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	rest, ok := strings.CutPrefix(string(b), "arrayconnection:")
	if !ok {
		return 0, false
	}
	n := 0
	if rest == "" {
		return 0, false
	}
	for _, r := range rest {
		if r < '0' || r > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}
