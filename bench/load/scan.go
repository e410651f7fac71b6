package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/tidwall/gjson"
)

// scanner reads a JSON reply in one forward pass. The checks walk the
// members they need and skip the rest without building values, so each
// byte of a reply is read once. (gjson's Get squashes every value it
// passes on the way to a key, so a Get of "results", a ForEach over it and
// a Get of "n" in each result read a query reply about three times; that
// was half of the generator's CPU on query workloads.)
//
// It accepts only well-formed JSON (RFC 8259 grammar; string bytes are not
// checked as UTF-8): anything else is an error, wherever it is in the
// reply, including bytes after the value.
type scanner struct {
	b []byte
	i int
}

// errSyntax marks a reply that is not well-formed JSON.
var errSyntax = errors.New("malformed JSON")

func (s *scanner) syntaxError(what string) error {
	lo, hi := max(0, s.i-40), min(len(s.b), s.i+40)
	return fmt.Errorf("%w at byte %d (%s): %s", errSyntax, s.i, what, string(s.b[lo:hi]))
}

func (s *scanner) space() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return // the common case: no white space between tokens
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value (0 at the end).
func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// end fails unless only white space is left.
func (s *scanner) end() error {
	if s.space(); s.i != len(s.b) {
		return s.syntaxError("data after the value")
	}
	return nil
}

// object walks the members of the object at the cursor. member must
// consume exactly one value (read it or skip it).
func (s *scanner) object(member func(key jsonString, s *scanner) error) error {
	if s.peek() != '{' {
		return s.syntaxError("want an object")
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		s.space()
		key, err := s.str()
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.syntaxError("want ':'")
		}
		s.i++
		if err := member(key, s); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.syntaxError("want ',' or '}'")
		}
	}
}

// array walks the elements of the array at the cursor. elem must consume
// exactly one value.
func (s *scanner) array(elem func(s *scanner) error) error {
	if s.peek() != '[' {
		return s.syntaxError("want an array")
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := elem(s); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.syntaxError("want ',' or ']'")
		}
	}
}

// jsonString is a string as it appears in the reply, quotes included.
type jsonString struct {
	quoted  []byte
	escaped bool // holds a backslash escape
}

// text is the string's value.
func (j jsonString) text() string {
	if j.quoted == nil {
		return ""
	}
	if !j.escaped {
		return string(j.quoted[1 : len(j.quoted)-1])
	}
	return gjson.ParseBytes(j.quoted).String()
}

// is reports whether the string's value is want, without allocating
// unless the string holds escapes.
func (j jsonString) is(want string) bool {
	if j.quoted == nil {
		return false
	}
	if !j.escaped {
		return string(j.quoted[1:len(j.quoted)-1]) == want
	}
	return j.text() == want
}

// empty reports whether the string is absent or "".
func (j jsonString) empty() bool { return j.quoted == nil || j.is("") }

// str reads the string at the cursor.
func (s *scanner) str() (jsonString, error) {
	if s.peek() != '"' {
		return jsonString{}, s.syntaxError("want a string")
	}
	start := s.i
	escaped := false
	for s.i++; s.i < len(s.b); s.i++ {
		b, i := s.b, s.i // locals stay in registers; s.i would be stored each byte
		for i < len(b) && !stopsString[b[i]] {
			i++
		}
		s.i = i
		if s.i == len(s.b) {
			break
		}
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return jsonString{quoted: s.b[start:s.i], escaped: escaped}, nil
		case c == '\\':
			escaped = true
			s.i++
			if s.i >= len(s.b) {
				return jsonString{}, s.syntaxError("unterminated string")
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if s.i+4 >= len(s.b) || !isHex(s.b[s.i+1]) || !isHex(s.b[s.i+2]) || !isHex(s.b[s.i+3]) || !isHex(s.b[s.i+4]) {
					return jsonString{}, s.syntaxError("bad \\u escape")
				}
				s.i += 4
			default:
				return jsonString{}, s.syntaxError("bad escape")
			}
		case c < 0x20:
			return jsonString{}, s.syntaxError("control character in string")
		}
	}
	return jsonString{}, s.syntaxError("unterminated string")
}

// stopsString marks the bytes that end a run of plain string content: the
// closing quote, an escape and the control characters JSON forbids there.
var stopsString = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads the number at the cursor and returns its text.
func (s *scanner) number() ([]byte, error) {
	s.space()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && isDigit(s.b[s.i]):
		s.digits()
	default:
		return nil, s.syntaxError("want a number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.i >= len(s.b) || !isDigit(s.b[s.i]) {
			return nil, s.syntaxError("want a digit after '.'")
		}
		s.digits()
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.i >= len(s.b) || !isDigit(s.b[s.i]) {
			return nil, s.syntaxError("want a digit in the exponent")
		}
		s.digits()
	}
	return s.b[start:s.i], nil
}

// digits moves past a run of digits.
func (s *scanner) digits() {
	b, i := s.b, s.i
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	s.i = i
}

// maxExactInt is the largest integer every float64 up to it holds exactly.
const maxExactInt = 1<<53 - 1

// integer is the value of a JSON number that is a whole number (1, 1.0 or
// 1e0); ok is false for fractions and for magnitudes beyond 2^53.
func integer(num []byte) (n int, ok bool) {
	if n, ok := plainInteger(num); ok {
		return n, true
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxExactInt {
		return 0, false
	}
	return int(f), true
}

// plainInteger reads the common case, up to 15 digits with no fraction or
// exponent, without converting to a string.
func plainInteger(num []byte) (int, bool) {
	digits := num
	if len(num) > 0 && num[0] == '-' {
		digits = num[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	v := 0
	for _, c := range digits {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if len(digits) < len(num) {
		v = -v
	}
	return v, true
}

// literal reads true, false or null.
func (s *scanner) literal() error {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return nil
		}
	}
	return s.syntaxError("want a value")
}

// skip reads one value of any kind, checking its syntax.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.skipObject()
	case c == '[':
		return s.skipArray()
	case c == '"':
		_, err := s.str()
		return err
	case c == '-' || isDigit(c):
		_, err := s.number()
		return err
	default:
		return s.literal()
	}
}

// skipObject is object with a member that skips every value, written out
// because most of a reply is skipped and the callback costs a third.
func (s *scanner) skipObject() error {
	s.i++ // '{'
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		if _, err := s.str(); err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.syntaxError("want ':'")
		}
		s.i++
		if err := s.skip(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.syntaxError("want ',' or '}'")
		}
	}
}

// skipArray is array with an element that skips every value.
func (s *scanner) skipArray() error {
	s.i++ // '['
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := s.skip(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.syntaxError("want ',' or ']'")
		}
	}
}

// raw reads one value and returns its bytes.
func (s *scanner) raw() ([]byte, error) {
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

// errNotInteger marks a member that should hold a whole number but holds
// something else.
var errNotInteger = errors.New("not a whole number")

// intValue reads a whole number; name is for the error.
func (s *scanner) intValue(name string) (int, error) {
	start := s.i
	if c := s.peek(); c != '-' && !isDigit(c) {
		raw, err := s.raw()
		if err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%s is %w: %s", name, errNotInteger, clip(string(raw), 60))
	}
	num, err := s.number()
	if err != nil {
		return 0, err
	}
	n, ok := integer(num)
	if !ok {
		return 0, fmt.Errorf("%s is %w: %s", name, errNotInteger, clip(string(s.b[start:s.i]), 60))
	}
	return n, nil
}

// strValue reads a string; name is for the error.
func (s *scanner) strValue(name string) (jsonString, error) {
	if s.peek() != '"' {
		raw, err := s.raw()
		if err != nil {
			return jsonString{}, err
		}
		return jsonString{}, fmt.Errorf("%s is not a string: %s", name, clip(string(raw), 60))
	}
	return s.str()
}
