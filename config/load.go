package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
)

// ErrHelp is returned by Load when the arguments ask for help (-h, -help or
// --help). The caller prints Usage and exits with status 0.
var ErrHelp = errors.New("config: help requested")

// ErrUnknownOption is wrapped by the OptionError of a name that is neither a
// Quarry option nor a known Parse Server option.
var ErrUnknownOption = errors.New("unknown option")

// OptionError is a problem with one option. Load joins all of them with
// errors.Join, so a user sees every mistake at once; errors.As finds each.
type OptionError struct {
	// Option is the option name (Parse Server spelling, e.g. "port" or
	// "liveQuery.classNames"), or the unknown name as given.
	Option string
	// Source says where the value came from: "flag --port", "env PORT",
	// "config file ./config.json" or "default".
	Source string
	// Err is the problem.
	Err error
}

// Error names the option and the source; an unknown option also gets the
// closest known name, if any, and a pointer to --help.
func (e *OptionError) Error() string {
	if errors.Is(e.Err, ErrUnknownOption) {
		msg := fmt.Sprintf("unknown option %q (%s)", e.Option, e.Source)
		if s := suggest(e.Option); s != "" {
			return msg + fmt.Sprintf("; did you mean %q? see --help", s)
		}
		return msg + "; see --help"
	}
	return fmt.Sprintf("option %s (%s): %v", e.Option, e.Source, e.Err)
}

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }

// assignment is one value for one option from one source.
type assignment struct {
	name   string
	raw    any
	source string
}

// loader accumulates the result of one Load.
type loader struct {
	opts  *Options
	from  map[string]string // option name -> source of its current value
	warns []string
	errs  []error
}

// Load builds the options from command-line arguments (without the program
// name) and the environment ("KEY=value" pairs, as os.Environ returns).
// Precedence, lowest first: Defaults, the JSON config file named by the only
// positional argument, environment variables, flags. It reads no file but
// the config file and touches no global state.
//
// Warnings name accepted but ignored Parse Server options and other things
// worth logging. The error joins one *OptionError (or file error) per
// problem; it is ErrHelp alone when help was asked for.
func Load(args []string, env []string) (*Options, []string, error) {
	if wantsHelp(args) {
		return nil, nil, ErrHelp
	}
	l := &loader{opts: Defaults(), from: map[string]string{}}
	flags, path := l.parseArgs(args)
	if len(l.errs) > 0 {
		return nil, l.warns, errors.Join(l.errs...)
	}
	var file []assignment
	if path != "" {
		file = l.readFile(path)
		l.opts.ConfigFile = path
	}
	envs := l.parseEnv(env)
	for _, source := range [][]assignment{file, envs, flags} {
		for _, a := range source {
			l.apply(a)
		}
	}
	l.finish()
	if len(l.errs) > 0 {
		return nil, l.warns, errors.Join(l.errs...)
	}
	return l.opts, l.warns, nil
}

func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

func (l *loader) warn(format string, args ...any) {
	l.warns = append(l.warns, fmt.Sprintf(format, args...))
}

func (l *loader) fail(name, source string, err error) {
	l.errs = append(l.errs, &OptionError{Option: name, Source: source, Err: err})
}

// lookup finds a supported option. A known Parse Server option that Quarry
// ignores gets a warning, anything else an unknown-option error; both
// return nil.
func (l *loader) lookup(name, source string) *option {
	if o := byName[name]; o != nil {
		return o
	}
	if isUnsupported[name] {
		l.warn("%s (%s): ignored (%s)", name, source, whyIgnored(name))
		return nil
	}
	l.fail(name, source, ErrUnknownOption)
	return nil
}

// parseArgs reads flags into assignments and returns the config file path.
// Flags: -name or --name, with the value after "=" or in the next argument;
// a boolean takes the next argument only when it is "true" or "false".
// "--" ends the flags.
func (l *loader) parseArgs(args []string) ([]assignment, string) {
	var out []assignment
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, value, hasValue := strings.Cut(name, "=")
		source := "flag --" + name
		hasNext := i+1 < len(args)
		opt := l.lookup(name, source)
		if opt == nil {
			// Skip the value of an ignored Parse Server option. Its type is
			// unknown, so a following config file name is left alone.
			if isUnsupported[name] && !hasValue && hasNext && !strings.HasPrefix(args[i+1], "-") &&
				!strings.HasSuffix(strings.ToLower(args[i+1]), ".json") {
				i++
			}
			continue
		}
		if !hasValue {
			_, isBool := optField(opt).(*bool)
			switch {
			case isBool && hasNext && (args[i+1] == "true" || args[i+1] == "false"):
				value = args[i+1]
				i++
			case isBool:
				value = "true"
			case hasNext:
				value = args[i+1]
				i++
			default:
				l.fail(name, source, errors.New("needs a value"))
				continue
			}
		}
		out = append(out, assignment{name: opt.name, raw: value, source: source})
	}
	switch len(positional) {
	case 0:
		return out, ""
	case 1:
		return out, positional[0]
	}
	l.errs = append(l.errs, fmt.Errorf("only one config file may be given, got %s; see --help", strings.Join(positional, " ")))
	return out, ""
}

// optField is opt.field applied to a scratch value, nil for object options.
func optField(opt *option) any {
	if opt.field == nil {
		return nil
	}
	return opt.field(&Options{})
}

// readFile reads a JSON config file: an object of options, or Parse
// Server's {"apps": [ {options} ]} with exactly one app.
func (l *loader) readFile(path string) []assignment {
	data, err := os.ReadFile(path)
	if err != nil {
		l.errs = append(l.errs, fmt.Errorf("config file: %w", err))
		return nil
	}
	top, err := decodeJSON(data)
	if err != nil {
		l.errs = append(l.errs, fmt.Errorf("config file %s: %w", path, err))
		return nil
	}
	obj, ok := top.(map[string]any)
	if !ok {
		l.errs = append(l.errs, fmt.Errorf("config file %s: want a JSON object of options, got %s", path, jsonType(top)))
		return nil
	}
	source := "config file " + path
	if apps, ok := obj["apps"]; ok {
		list, _ := apps.([]any)
		if len(list) != 1 {
			l.errs = append(l.errs, fmt.Errorf(`config file %s: "apps" must be an array of exactly one app object (Quarry serves one app per process), got %s`, path, describeApps(apps)))
			return nil
		}
		app, ok := list[0].(map[string]any)
		if !ok {
			l.errs = append(l.errs, fmt.Errorf(`config file %s: apps[0] must be an object of options, got %s`, path, jsonType(list[0])))
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if k != "apps" {
				l.warn(`%s (%s): ignored, options belong inside apps[0] when "apps" is used`, k, source)
			}
		}
		obj = app
	}
	var out []assignment
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if obj[k] == nil {
			continue // null means "not set", as in Parse Server
		}
		if opt := l.lookup(k, source); opt != nil {
			out = append(out, assignment{name: opt.name, raw: obj[k], source: source})
		}
	}
	return out
}

func describeApps(v any) string {
	if list, ok := v.([]any); ok {
		return fmt.Sprintf("%d apps", len(list))
	}
	return jsonType(v)
}

// decodeJSON decodes one JSON value, keeping numbers exact, and reports
// syntax errors by line and column.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, fmt.Errorf("invalid JSON at line %d, column %d: %v", line, col, err)
		}
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty, want a JSON object")
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: unexpected data after the top-level value")
	}
	return v, nil
}

// position turns the offset of a json.SyntaxError (bytes read, including
// the offending one) into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	offset = max(0, min(offset-1, int64(len(data))))
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// parseEnv turns environment variables into assignments. For each option
// QUARRY_<NAME> wins over Parse Server's variables; empty values count as
// unset. Unused QUARRY_* and PARSE_SERVER_* variables get a warning.
func (l *loader) parseEnv(env []string) []assignment {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	used := map[string]bool{}
	var out []assignment
	for _, opt := range options {
		chosen := ""
		for _, name := range opt.envNames() {
			v := vars[name]
			if v == "" {
				continue
			}
			used[name] = true
			if chosen == "" {
				chosen = name
				out = append(out, assignment{name: opt.name, raw: v, source: "env " + name})
			} else if v != vars[chosen] {
				l.warn("env %s: ignored, %s takes precedence", name, chosen)
			}
		}
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if used[k] || vars[k] == "" {
			continue
		}
		switch {
		case strings.HasPrefix(k, "QUARRY_"):
			l.warn("env %s: ignored, not a Quarry option; see --help", k)
		case strings.HasPrefix(k, "PARSE_SERVER_"), strings.HasPrefix(k, "PARSE_PUBLIC_"):
			l.warn("env %s: ignored (%s)", k, whyIgnoredEnv(k))
		}
	}
	return out
}

// apply stores one assignment, expanding object options into their keys.
func (l *loader) apply(a assignment) {
	opt := byName[a.name]
	if _, isObject := a.raw.(map[string]any); isObject && opt.name == "filesAdapter" {
		// A Parse Server config names an adapter module Quarry cannot run.
		l.warn("filesAdapter (%s): a Parse Server adapter module cannot run in Quarry: using %q "+
			"(set filesAdapter to \"local\" or \"s3\", see docs/files.md)", a.source, l.opts.Files.Adapter)
		return
	}
	if opt.field != nil {
		if err := set(l.opts, opt, a.raw); err != nil {
			l.fail(opt.name, a.source, err)
			return
		}
		l.from[opt.name] = a.source
		return
	}
	obj, err := asObject(a.raw)
	if err != nil {
		l.fail(opt.name, a.source, err)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if obj[k] == nil {
			continue
		}
		if sub := l.lookup(opt.name+"."+k, a.source); sub != nil {
			l.apply(assignment{name: sub.name, raw: obj[k], source: a.source})
		}
	}
}

// asObject accepts a decoded JSON object or JSON text of one.
func asObject(raw any) (map[string]any, error) {
	if s, ok := raw.(string); ok {
		v, err := decodeJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("want a JSON object: %w", err)
		}
		raw = v
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, got %s", jsonType(raw))
	}
	return obj, nil
}

// source says where the current value of the option came from.
func (l *loader) source(name string) string {
	if s := l.from[name]; s != "" {
		return s
	}
	return "default"
}

// suggest returns the supported or ignored option name closest to name, or "".
func suggest(name string) string {
	best, bestDist := "", 3
	try := func(n string) {
		if strings.EqualFold(n, name) {
			best, bestDist = n, -1
			return
		}
		if d := editDistance(strings.ToLower(n), strings.ToLower(name)); d < bestDist {
			best, bestDist = n, d
		}
	}
	for _, o := range options {
		try(o.name)
	}
	for _, n := range unsupported {
		try(n)
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = slices.Min([]int{prev[j] + 1, cur[j-1] + 1, prev[j-1] + cost})
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
