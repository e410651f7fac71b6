package where

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/quarrydata/quarry/schema"
)

// compileRegex turns a $regex/$options pair (MongoDB's PCRE dialect) into
// an RE2 program. Go's regexp guarantees linear-time matching, which is why
// Quarry accepts only what RE2 can run (no look-around, no back-references)
// and refuses the rest with 102 instead of risking catastrophic
// backtracking.
//
// Differences from PCRE that remain: `$` without the m flag matches only at
// the very end of the text (PCRE also matches before a final newline), and
// \Z is refused.
func compileRegex(pattern, options any, hasOptions bool) (*Regex, error) {
	s, ok := pattern.(string)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "bad regex: %s", truncated(pattern))
	}
	if utf8.RuneCountInString(s) > MaxRegexLength {
		return nil, ErrRegexTooLong
	}
	opts := ""
	if hasOptions {
		o, ok := options.(string)
		if !ok {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "Bad $options value for query: %s", truncated(options))
		}
		// An empty string is accepted as "no options" (Parse Server 7 refuses
		// it, but SDKs that always send $options would break for nothing).
		if strings.Trim(o, "imxs") != "" {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "Bad $options value for query: %s", o)
		}
		opts = o
	}
	expr := translatePattern(s, strings.Contains(opts, "x"))
	flags := ""
	for _, f := range "ims" {
		if strings.ContainsRune(opts, f) {
			flags += string(f)
		}
	}
	if flags != "" {
		expr = "(?" + flags + ")" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "$regex not supported: %s: `%s`", regexProblem(se.Code), se.Expr)
		}
		return nil, schema.Errorf(schema.CodeInvalidQuery, "$regex not supported: %s", s)
	}
	return &Regex{Pattern: s, Options: opts, re: re, prefix: anchoredPrefix(expr)}, nil
}

// translatePattern rewrites the PCRE features RE2 lacks but can express:
// \Q...\E quoting (the SDK's startsWith/endsWith/contains; a missing \E
// quotes to the end, a stray \E is ignored, as in Perl) and, when extended
// is set, the x flag: unescaped whitespace and #-comments outside character
// classes are dropped. Everything else is passed through for RE2 to judge.
func translatePattern(p string, extended bool) string {
	var b strings.Builder
	b.Grow(len(p))
	inClass := false
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			switch p[i+1] {
			case 'Q':
				lit := p[i+2:]
				if end := strings.Index(lit, `\E`); end >= 0 {
					lit = lit[:end]
					i += 2 + end + 2
				} else {
					i = len(p)
				}
				if inClass {
					b.WriteString(quoteInClass(lit))
				} else {
					b.WriteString(regexp.QuoteMeta(lit))
				}
			case 'E':
				i += 2
			default:
				b.WriteString(p[i : i+2])
				i += 2
			}
			continue
		}
		if inClass {
			if strings.HasPrefix(p[i:], "[:") {
				// A POSIX class like [:alpha:] holds a ']' of its own.
				if end := strings.Index(p[i+2:], ":]"); end >= 0 {
					b.WriteString(p[i : i+2+end+2])
					i += 2 + end + 2
					continue
				}
			}
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
			i++
			continue
		}
		switch {
		case c == '[':
			inClass = true
			b.WriteByte(c)
			i++
			// A ']' right after '[' or '[^' is a literal member.
			if i < len(p) && p[i] == '^' {
				b.WriteByte('^')
				i++
			}
			if i < len(p) && p[i] == ']' {
				b.WriteByte(']')
				i++
			}
		case extended && strings.IndexByte(" \t\n\r\f\v", c) >= 0:
			i++
		case extended && c == '#':
			if nl := strings.IndexByte(p[i:], '\n'); nl >= 0 {
				i += nl + 1
			} else {
				i = len(p)
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// quoteInClass escapes every ASCII punctuation character so that quoted text
// inside [...] stays a list of literal members (QuoteMeta leaves '-' alone,
// which would make a range).
func quoteInClass(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// regexProblems words RE2's syntax errors for a Parse user, whose patterns
// were written for MongoDB's PCRE: replies never quote library error text.
var regexProblems = map[syntax.ErrorCode]string{
	syntax.ErrInvalidPerlOp:         "lookahead, lookbehind, atomic groups and other (?…) forms are not supported",
	syntax.ErrInvalidEscape:         "backreferences (\\1) and this escape are not supported",
	syntax.ErrInvalidNamedCapture:   "lookbehind and this named group are not supported",
	syntax.ErrMissingParen:          "a parenthesis is not closed",
	syntax.ErrUnexpectedParen:       "a parenthesis closes nothing",
	syntax.ErrMissingBracket:        "a character class is not closed",
	syntax.ErrInvalidCharRange:      "a character class range is backwards or invalid",
	syntax.ErrInvalidCharClass:      "a character class is invalid",
	syntax.ErrMissingRepeatArgument: "a repetition (*, + or ?) has nothing to repeat",
	syntax.ErrInvalidRepeatOp:       "a repetition is repeated (use (…) around it)",
	syntax.ErrInvalidRepeatSize:     "a repetition count is too large (at most 1000)",
	syntax.ErrTrailingBackslash:     "the pattern ends with a lone backslash",
	syntax.ErrInvalidUTF8:           "the pattern is not valid UTF-8",
	syntax.ErrNestingDepth:          "the pattern nests too deeply",
	syntax.ErrLarge:                 "the pattern is too large",
}

func regexProblem(code syntax.ErrorCode) string {
	if p, ok := regexProblems[code]; ok {
		return p
	}
	return "the pattern is invalid"
}
