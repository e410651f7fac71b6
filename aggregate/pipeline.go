package aggregate

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Limits of the evaluator.
const (
	// MaxStages caps the stages of one pipeline.
	MaxStages = 64
	// DefaultMaxDocuments caps the documents any stage may hold or
	// produce when RunOptions gives no cap ($unwind multiplies them).
	DefaultMaxDocuments = 1_000_000
	// maxExprDepth bounds nesting inside one expression.
	maxExprDepth = 16
	// checkEvery is how many documents pass between deadline checks.
	checkEvery = 256
)

// Errors of the evaluator's limits.
var (
	ErrTooManyDocuments = schema.Errorf(schema.CodeInefficientQuery,
		"the aggregate pipeline holds too many documents; narrow its first $match")
	ErrTimeout = schema.Errorf(schema.CodeTimeout, "the aggregate pipeline took too long")
)

func errorf(format string, args ...any) error {
	return schema.Errorf(schema.CodeInvalidQuery, format, args...)
}

// Stage is one pipeline stage as a client sent it.
type Stage struct {
	// Name is the stage, with or without its $: "$group" or "group".
	Name string
	// Spec is the stage's operand as decoded JSON.
	Spec any
	// Keys is the key order of a $sort Spec (decoded JSON objects lose
	// it); when nil, a $sort on several keys sorts them by name.
	Keys []string
}

type kind int

const (
	kindMatch kind = iota
	kindGroup
	kindProject
	kindSort
	kindLimit
	kindSkip
	kindUnwind
	kindCount
	kindSample
)

var stageKinds = map[string]kind{
	"match": kindMatch, "group": kindGroup, "project": kindProject, "sort": kindSort, "limit": kindLimit,
	"skip": kindSkip, "unwind": kindUnwind, "count": kindCount, "sample": kindSample,
}

// SortKey is one key of a $sort.
type SortKey = matcher.SortKey

type stage struct {
	kind kind
	name string // "$group", for explain

	where    map[string]any
	match    func(schema.Object) bool
	matchErr error // a $match the evaluator cannot run alone (subqueries)

	group   *groupSpec
	project *projectSpec
	sort    []SortKey
	n       int // $limit, $skip, $sample size
	unwind  *unwindSpec
	count   string
}

// Pipeline is a compiled pipeline. It is immutable and safe for
// concurrent use.
type Pipeline struct {
	stages []stage
}

// Compile validates and compiles stages. Unknown stages, operators and
// accumulators are refused with 102.
func Compile(stages []Stage) (*Pipeline, error) {
	if len(stages) > MaxStages {
		return nil, errorf("an aggregate pipeline has at most %d stages", MaxStages)
	}
	p := &Pipeline{stages: make([]stage, 0, len(stages))}
	for _, st := range stages {
		c, err := compileStage(st)
		if err != nil {
			return nil, err
		}
		p.stages = append(p.stages, c)
	}
	return p, nil
}

func compileStage(st Stage) (stage, error) {
	name := strings.TrimPrefix(st.Name, "$")
	k, ok := stageKinds[name]
	if !ok {
		return stage{}, errorf("Invalid aggregate stage '%s'.", st.Name)
	}
	out := stage{kind: k, name: "$" + name}
	var err error
	switch k {
	case kindMatch:
		m, ok := st.Spec.(map[string]any)
		if !ok {
			return out, errorf("$match needs an object")
		}
		tree, err := where.Parse(m, where.Options{})
		if err != nil {
			return out, err
		}
		out.where = m
		compiled, err := matcher.Compile(tree, nil)
		if err != nil {
			out.matchErr = err
		} else {
			out.match = compiled.Match
		}
		return out, nil
	case kindGroup:
		out.group, err = compileGroup(st.Spec)
	case kindProject:
		out.project, err = compileProject(st.Spec)
	case kindSort:
		out.sort, err = compileSort(st.Spec, st.Keys)
	case kindLimit:
		out.n, err = count(st.Spec, "$limit", 1)
	case kindSkip:
		out.n, err = count(st.Spec, "$skip", 0)
	case kindSample:
		m, ok := st.Spec.(map[string]any)
		if !ok || len(m) != 1 {
			return out, errorf("$sample needs {size: <positive integer>}")
		}
		out.n, err = count(m["size"], "$sample size", 1)
	case kindUnwind:
		out.unwind, err = compileUnwind(st.Spec)
	case kindCount:
		name, ok := st.Spec.(string)
		if !ok || !pathSegment.MatchString(name) {
			return out, errorf("$count needs a field name (letters, digits and _, starting with a letter)")
		}
		out.count = name
	}
	return out, err
}

// count reads a non-negative integer operand of at least min.
func count(v any, what string, min int) (int, error) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || f < float64(min) || f > math.MaxInt32 {
		if min > 0 {
			return 0, errorf("%s must be a positive integer", what)
		}
		return 0, errorf("%s must be a non-negative integer", what)
	}
	return int(f), nil
}

func compileSort(spec any, order []string) ([]SortKey, error) {
	if s, ok := spec.(string); ok {
		// Parse's order syntax: "-score,name".
		var keys []SortKey
		for _, part := range strings.Split(s, ",") {
			part = strings.TrimSpace(part)
			desc := strings.HasPrefix(part, "-")
			p, err := refPath("$" + strings.TrimPrefix(part, "-"))
			if err != nil {
				return nil, err
			}
			keys = append(keys, SortKey{Path: p, Desc: desc})
		}
		return keys, nil
	}
	m, ok := spec.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, errorf("$sort needs an object of fields and 1 or -1")
	}
	if len(order) != len(m) {
		order = slices.Sorted(maps.Keys(m))
	}
	keys := make([]SortKey, 0, len(m))
	for _, name := range order {
		dir, present := m[name]
		if !present {
			return nil, errorf("$sort key order does not match its fields")
		}
		p, err := refPath("$" + name)
		if err != nil {
			return nil, err
		}
		switch dir {
		case 1.0:
			keys = append(keys, SortKey{Path: p})
		case -1.0:
			keys = append(keys, SortKey{Path: p, Desc: true})
		default:
			return nil, errorf("$sort direction of %s must be 1 or -1", name)
		}
	}
	return keys, nil
}

// Prefix is the part of a pipeline a query planner runs: the leading
// $match stages (ANDed), then a $sort, then $skip and $limit.
type Prefix struct {
	Where map[string]any // nil when there is no leading $match
	Sort  []SortKey
	Skip  int
	Limit int // -1: no limit
}

// Prefix splits the pipeline into what a planner can run and the rest.
func (p *Pipeline) Prefix() (Prefix, *Pipeline) {
	pre := Prefix{Limit: -1}
	i := 0
	var wheres []any
	for i < len(p.stages) && p.stages[i].kind == kindMatch {
		wheres = append(wheres, p.stages[i].where)
		i++
	}
	switch len(wheres) {
	case 0:
	case 1:
		pre.Where = wheres[0].(map[string]any)
	default:
		pre.Where = map[string]any{"$and": wheres}
	}
	if i < len(p.stages) && p.stages[i].kind == kindSort {
		pre.Sort = p.stages[i].sort
		i++
	}
loop:
	for ; i < len(p.stages); i++ {
		st := p.stages[i]
		switch st.kind {
		case kindSkip:
			pre.Skip += st.n
			if pre.Limit >= 0 {
				pre.Limit = max(0, pre.Limit-st.n)
			}
		case kindLimit:
			if pre.Limit < 0 || st.n < pre.Limit {
				pre.Limit = st.n
			}
		default:
			break loop
		}
	}
	return pre, &Pipeline{stages: p.stages[i:]}
}

// Names lists the stages, for explain.
func (p *Pipeline) Names() []string {
	out := make([]string, len(p.stages))
	for i, st := range p.stages {
		out[i] = st.name
	}
	return out
}

// RunOptions bound one run.
type RunOptions struct {
	// MaxDocuments caps the documents of any stage (DefaultMaxDocuments
	// when zero).
	MaxDocuments int
	// Deadline, when set, bounds the run (ErrTimeout beyond it).
	Deadline time.Time
	// Rand drives $sample; nil seeds one at random.
	Rand *rand.Rand
}

type runner struct {
	opts  RunOptions
	steps int
}

func (r *runner) tick() error {
	r.steps++
	if r.steps%checkEvery == 0 && !r.opts.Deadline.IsZero() && time.Now().After(r.opts.Deadline) {
		return ErrTimeout
	}
	return nil
}

// Run evaluates the pipeline over docs, which it never modifies; the
// result may share documents (and values) with docs.
func (p *Pipeline) Run(docs []schema.Object, opts RunOptions) (out []schema.Object, err error) {
	// An operator meeting a value of the wrong type stops the whole run
	// with a 102; expressions have no error result, so valueOp.eval
	// raises it as an evalErr, caught here and nowhere else.
	defer func() {
		if v := recover(); v != nil {
			e, ok := v.(evalErr)
			if !ok {
				panic(v)
			}
			out, err = nil, e.err
		}
	}()
	if opts.MaxDocuments <= 0 {
		opts.MaxDocuments = DefaultMaxDocuments
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	r := &runner{opts: opts}
	if len(docs) > opts.MaxDocuments {
		return nil, ErrTooManyDocuments
	}
	for _, st := range p.stages {
		if docs, err = r.stage(st, docs); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

func (r *runner) stage(st stage, docs []schema.Object) ([]schema.Object, error) {
	switch st.kind {
	case kindMatch:
		if st.matchErr != nil {
			return nil, st.matchErr
		}
		out := make([]schema.Object, 0, len(docs))
		for _, d := range docs {
			if err := r.tick(); err != nil {
				return nil, err
			}
			if st.match(d) {
				out = append(out, d)
			}
		}
		return out, nil
	case kindGroup:
		return r.runGroup(st.group, docs)
	case kindProject:
		out := make([]schema.Object, len(docs))
		for i, d := range docs {
			if err := r.tick(); err != nil {
				return nil, err
			}
			out[i] = st.project.apply(d)
		}
		return out, nil
	case kindSort:
		out := append([]schema.Object(nil), docs...)
		// matcher.Compare is the planner's order too, so a $sort gives the
		// same order whether the planner or this evaluator runs it.
		sort.SliceStable(out, func(i, j int) bool { return matcher.Compare(out[i], out[j], st.sort) < 0 })
		return out, nil
	case kindLimit:
		if len(docs) > st.n {
			return docs[:st.n], nil
		}
		return docs, nil
	case kindSkip:
		if len(docs) > st.n {
			return docs[st.n:], nil
		}
		return []schema.Object{}, nil
	case kindUnwind:
		return r.runUnwind(st.unwind, docs)
	case kindCount:
		if len(docs) == 0 {
			return []schema.Object{}, nil
		}
		return []schema.Object{{st.count: float64(len(docs))}}, nil
	case kindSample:
		n := min(st.n, len(docs))
		out := make([]schema.Object, n)
		for i, j := range r.opts.Rand.Perm(len(docs))[:n] {
			out[i] = docs[j]
		}
		return out, nil
	}
	return docs, nil
}

// $project.

type projectSpec struct {
	exclude  bool
	dropID   bool
	include  []string // inclusion mode: kept paths
	computed []string // inclusion mode: computed paths …
	exprs    []expr   // … and their expressions
	remove   []string // exclusion mode
}

func compileProject(spec any) (*projectSpec, error) {
	m, ok := spec.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, errorf("$project needs an object naming at least one field")
	}
	p := &projectSpec{}
	inclusion, exclusion := false, false
	for _, name := range slices.Sorted(maps.Keys(m)) {
		v := m[name]
		path, err := refPath("$" + name)
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case bool, float64:
			on := x == true || (x != false && x != 0.0)
			switch {
			case path == "objectId" && !on:
				p.dropID = true
			case path == "objectId":
			case on:
				inclusion = true
				p.include = append(p.include, path)
			default:
				exclusion = true
				p.remove = append(p.remove, path)
			}
			continue
		case map[string]any:
			if _, _, isOp := operator(x); !isOp {
				return nil, errorf("$project of %s: nested projections are not supported; use dot paths", name)
			}
		}
		e, err := compileExpr(v, 1)
		if err != nil {
			return nil, err
		}
		inclusion = true
		p.computed = append(p.computed, path)
		p.exprs = append(p.exprs, e)
	}
	if inclusion && exclusion {
		return nil, errorf("$project cannot mix inclusion and exclusion (objectId aside)")
	}
	p.exclude = !inclusion
	return p, nil
}

func (p *projectSpec) apply(doc schema.Object) schema.Object {
	if p.exclude {
		out := schema.CopyObject(doc)
		if p.dropID {
			delete(out, "objectId")
		}
		for _, path := range p.remove {
			removePath(out, path)
		}
		return out
	}
	out := schema.Object{}
	if id, ok := doc["objectId"]; ok && !p.dropID {
		out["objectId"] = id
	}
	for _, path := range p.include {
		if v, ok := rawGet(doc, path); ok {
			setPath(out, path, v)
		}
	}
	for i, path := range p.computed {
		if v, ok := p.exprs[i].eval(doc); ok {
			setPath(out, path, v)
		}
	}
	return out
}

// $unwind.

type unwindSpec struct {
	path     string
	index    string
	preserve bool
}

func compileUnwind(spec any) (*unwindSpec, error) {
	u := &unwindSpec{}
	var path any = spec
	if m, ok := spec.(map[string]any); ok {
		path = m["path"]
		for k, v := range m {
			switch k {
			case "path":
			case "includeArrayIndex":
				name, ok := v.(string)
				if !ok || !pathSegment.MatchString(name) {
					return nil, errorf("$unwind includeArrayIndex must be a field name")
				}
				u.index = name
			case "preserveNullAndEmptyArrays":
				b, ok := v.(bool)
				if !ok {
					return nil, errorf("$unwind preserveNullAndEmptyArrays must be a boolean")
				}
				u.preserve = b
			default:
				return nil, errorf("Unsupported $unwind option %s", k)
			}
		}
	}
	s, ok := path.(string)
	if !ok || !strings.HasPrefix(s, "$") {
		return nil, errorf("$unwind needs a field path starting with $")
	}
	p, err := refPath(s)
	if err != nil {
		return nil, err
	}
	u.path = p
	return u, nil
}

func (r *runner) runUnwind(u *unwindSpec, docs []schema.Object) ([]schema.Object, error) {
	out := make([]schema.Object, 0, len(docs))
	emit := func(d schema.Object) error {
		if len(out) >= r.opts.MaxDocuments {
			return ErrTooManyDocuments
		}
		out = append(out, d)
		return r.tick()
	}
	for _, d := range docs {
		v, present := rawGet(d, u.path)
		arr, isArray := v.([]any)
		switch {
		case isArray && len(arr) > 0:
			for i, e := range arr {
				cp := schema.CopyObject(d)
				setPath(cp, u.path, e)
				if u.index != "" {
					cp[u.index] = float64(i)
				}
				if err := emit(cp); err != nil {
					return nil, err
				}
			}
		case present && v != nil && !isArray:
			cp := d
			if u.index != "" {
				cp = schema.CopyObject(d)
				cp[u.index] = nil
			}
			if err := emit(cp); err != nil {
				return nil, err
			}
		case u.preserve:
			cp := d
			if isArray || u.index != "" {
				cp = schema.CopyObject(d)
				if isArray {
					removePath(cp, u.path)
				}
				if u.index != "" {
					cp[u.index] = nil
				}
			}
			if err := emit(cp); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Paths in documents. Documents are never modified in place: setPath and
// removePath copy every nested object along the path.

// rawGet reads a dot path without turning createdAt/updatedAt strings into
// Dates, so that projected and unwound documents keep their stored form.
func rawGet(doc schema.Object, path string) (any, bool) {
	var cur any = map[string]any(doc)
	for _, seg := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func setPath(doc schema.Object, path string, v any) {
	segs := strings.Split(path, ".")
	m := map[string]any(doc)
	for _, seg := range segs[:len(segs)-1] {
		child, _ := m[seg].(map[string]any)
		child = schema.CopyObject(child)
		m[seg] = child
		m = child
	}
	m[segs[len(segs)-1]] = v
}

func removePath(doc schema.Object, path string) {
	segs := strings.Split(path, ".")
	m := map[string]any(doc)
	for _, seg := range segs[:len(segs)-1] {
		child, ok := m[seg].(map[string]any)
		if !ok {
			return
		}
		child = schema.CopyObject(child)
		m[seg] = child
		m = child
	}
	delete(m, segs[len(segs)-1])
}
