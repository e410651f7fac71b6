package service

import (
	"strings"
	"unsafe"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/planner"
	"github.com/quarrydata/quarry/schema"
)

// FindParams are a query's parameters, decoded by the transport.
type FindParams struct {
	Where   map[string]any
	Order   []SortKey
	Limit   int // -1 means the default
	Skip    int
	Count   bool
	Explain bool
	// op is the CLP operation a lookup checks (get for GET by id);
	// find when empty.
	op string
	// shareGet lets a get's result be the stored object (GetResult).
	shareGet bool
	// ReplyOnly says the caller only sends the results (AppendResults)
	// and reads none of them: a result sent as its stored bytes may then
	// stay undecoded, a nil entry of Results.
	ReplyOnly bool
	// RedirectClassNameForKey runs the query on the target class of this
	// relation key of the named class (Parse's relation queries).
	RedirectClassNameForKey string
	Read                    ReadOptions
	// ReadAfterWrites makes the query wait, on an instance following a
	// shared store, until memory holds every commit that was durable when
	// it arrived (the X-Quarry-Read-After-Writes header); reads by id
	// always do.
	ReadAfterWrites bool
}

// SortKey is one element of an order list.
type SortKey struct {
	Path string
	Desc bool
}

// orderAliases are the storage names of the date fields that Parse's SDKs
// and apps send in order (Parse Server accepts them).
var orderAliases = map[string]string{"_created_at": "createdAt", "_updated_at": "updatedAt"}

// ParseOrder reads a comma list such as "-score,name".
func ParseOrder(s string) ([]SortKey, error) {
	var keys []SortKey
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k := SortKey{Path: part}
		if strings.HasPrefix(part, "-") {
			k = SortKey{Path: part[1:], Desc: true}
		}
		if alias, ok := orderAliases[k.Path]; ok {
			k.Path = alias
		}
		root, _, _ := strings.Cut(k.Path, ".")
		if !schema.ValidKeyName(root) && !schema.IsReservedKey(root) && root != "$score" {
			return nil, schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", root)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// FindResult is a page of results and, when asked, the total count.
type FindResult struct {
	// Results may be the stored objects themselves (see Service.view):
	// callers must not modify them. Get's result is always a copy. With
	// FindParams.ReplyOnly, a result sent as its stored bytes may be nil.
	Results []schema.Object
	Count   int
	Counted bool
	Explain map[string]any // the chosen plan, when asked for
	// ClassName is set when the query was redirected to a relation's target.
	ClassName string
	// Plan names the planner's access (planner.Plan.Kind) and Examined the
	// objects it looked at, for metrics and request logs.
	Plan     string
	Examined int
	// plan is kept so a slow query's log line can describe it; describing
	// costs only when asked (PlanSummary).
	plan *planner.Plan
	// coll holds the stored objects among Results, whose encodings it
	// keeps (AppendResults).
	coll *index.Collection
	// one holds a get's result, so Results needs no allocation of its own
	// (GetResultInto).
	one [1]schema.Object
	// srcs[i], when set, is the stored object result i was read from:
	// Results[i] itself, or the reply copy's source, whose bytes encode
	// what the copy kept of it (project.go). refs[i], when valid, is
	// srcs[i]'s version as the scan read it, which holds those bytes, so
	// the reply needs no lookup by objectId. oneSrc and oneRef hold a
	// get's.
	srcs   []schema.Object
	refs   []index.Ref
	oneSrc [1]schema.Object
	oneRef [1]index.Ref
	// expanded maps each included object (a copy) to its stored source.
	expanded map[unsafe.Pointer]expansion
}

// PlanSummary describes the query's plan in one line without any value of
// the query (planner.Plan.Summary), or "" when no plan ran.
func (r *FindResult) PlanSummary() string {
	if r.plan == nil {
		return ""
	}
	return r.plan.Summary()
}

// MaxSkip bounds skip so a client cannot make the server walk a huge
// class just to throw results away.
const MaxSkip = 1_000_000

func (s *Service) limits(p *FindParams) error {
	if p.Limit < 0 {
		p.Limit = s.opts.DefaultLimit
	}
	if s.opts.MaxLimit > 0 && p.Limit > s.opts.MaxLimit {
		p.Limit = s.opts.MaxLimit
	}
	if p.Skip < 0 {
		return schema.Errorf(schema.CodeInvalidSkip, "Skip must be a non-negative number.")
	}
	if p.Skip > MaxSkip {
		return schema.Errorf(schema.CodeInvalidSkip, "skip may be at most %d", MaxSkip)
	}
	return nil
}

// Find runs a query over a class through the planner.
func (s *Service) Find(auth Auth, class string, p FindParams) (FindResult, error) {
	if !schema.ValidClassName(class) {
		return FindResult{}, schema.ClassNameError(class)
	}
	if p.op != opGet && (p.ReadAfterWrites || s.opts.QueryReadAfterWrites) {
		s.catchUp() // current.go
	}
	if err := s.beforeFind(auth, class, &p); err != nil { // cloud code (hooks.go)
		return FindResult{}, err
	}
	if err := s.limits(&p); err != nil {
		return FindResult{}, err
	}
	if p.Explain && !auth.Master && !s.opts.AllowPublicExplain {
		// Refused before the query runs: a plan would tell a client what
		// the indexes hold, and the run would cost the server for nothing.
		return FindResult{}, schema.Errorf(schema.CodeOperationForbidden, "explain requires the master key")
	}
	if key := p.RedirectClassNameForKey; key != "" {
		target := source{s}.RelationTarget(class, key)
		if target == "" {
			return FindResult{}, schema.Errorf(schema.CodeInvalidQuery, "redirectClassNameForKey %q is not a relation of %s", key, class)
		}
		class = target
	}
	includes, err := s.findIncludes(class, p.Read)
	if err != nil {
		return FindResult{}, err
	}
	q := planner.Query{Class: class, Where: p.Where, Skip: p.Skip, Limit: p.Limit, Count: p.Count,
		Exempt: auth.Master && !s.opts.ScanBudgetForMaster}
	mainOp := opFind
	if p.op != "" {
		mainOp = p.op
	} else if p.Count && p.Limit == 0 {
		// Only a count is asked for: the count operation alone decides.
		mainOp = opCount
	}
	if p.Count && !auth.Master {
		if _, err := s.checkCLP(auth, class, opCount); err != nil {
			return FindResult{}, err
		}
	}
	guards := &findGuards{s: s, auth: auth, mainOp: mainOp, order: p.Order}
	q.Guard = guards.guard
	q.FlagDecides = flagDecidesVisibility
	if !auth.Master && !auth.internal {
		q.RelatedVisible = func(ownerClass, key, ownerID string) bool { return s.relatedVisible(auth, ownerClass, key, ownerID) }
	}
	for _, k := range p.Order {
		q.Order = append(q.Order, planner.SortKey{Path: k.Path, Desc: k.Desc})
	}
	if s.isSQLClass(class) {
		return s.findSQL(auth, class, p, q, guards, includes)
	}
	// Include writes the expanded objects into the results, and a get's
	// one object is the caller's to change (a user reading themselves gets
	// their token added): no sharing for either.
	scored := wantsScore(p)
	shareable := len(includes) == 0 && (p.op != opGet || p.shareGet) && s.canShare(class, p.Read) && !scored
	derived := s.derivedBy(class)
	q.Undecoded = p.ReplyOnly && shareable && derived
	plan, res, err := s.runPlanAs(auth, q)
	if err != nil {
		return FindResult{}, err
	}
	out := FindResult{Results: res.Objects, Count: res.Count, Counted: p.Count,
		Plan: plan.Kind(), Examined: res.Examined, plan: plan, coll: s.data.Collection(class, false)}
	if derived && len(res.Objects) > 0 {
		// The plan's page stays as the results' sources, with the
		// versions the scans read: the reply takes their bytes.
		out.srcs, out.refs = res.Objects, res.Refs
		out.Results = make([]schema.Object, len(res.Objects))
	} // else the plan's page is its own: the results take its place.
	g := guards.main
	asIs := q.Undecoded && s.viewedAsStored(class, g)
	for i, o := range res.Objects {
		if o == nil { // left undecoded by the plan (q.Undecoded)
			if asIs {
				continue // sent from its version's bytes (AppendResult)
			}
			o = res.Refs[i].Object()
			res.Objects[i] = o // out.srcs[i]
		}
		out.Results[i] = s.view(class, o, p.Read, g, shareable)
		if scored {
			if score, ok := plan.TextScore(o); ok {
				out.Results[i]["$score"] = score
			}
		}
	}
	var noteExpansion func(exp, src schema.Object, ref index.Ref, coll *index.Collection)
	if derived {
		noteExpansion = out.noteExpansion
	}
	s.includeAndProject(auth, class, &p, &out, includes, noteExpansion)
	if p.Explain {
		out.Explain = plan.Explain(res)
	}
	if err := s.afterFind(auth, class, &p, &out); err != nil { // cloud code (hooks.go)
		return FindResult{}, err
	}
	return out, nil
}

// includeAndProject expands a find's includes in its results, projects
// the keys asked for inside what the includes brought, and names the
// class a redirectClassNameForKey query answers in: the part of a reply
// the in-memory and the SQL paths shape alike.
func (s *Service) includeAndProject(auth Auth, class string, p *FindParams, out *FindResult, includes [][]string,
	noteExpansion func(exp, src schema.Object, ref index.Ref, coll *index.Collection)) {
	var splice func(stub schema.Object, ref index.Ref, class string)
	if p.ReplyOnly && noteExpansion != nil && len(p.Read.Keys) == 0 {
		// Nothing reads the included objects but the reply's encoding.
		splice = out.noteSplice
	}
	s.expandIncludes(auth, out.Results, includes, noteExpansion, splice)
	if len(includes) > 0 && len(p.Read.Keys) > 0 {
		for _, r := range out.Results {
			projectKeys(r, p.Read.Keys, alwaysReturned)
		}
	}
	if p.RedirectClassNameForKey != "" {
		out.ClassName = class
	}
}

func (s *Service) planOptions() planner.Options {
	return planner.Options{MaxScan: s.opts.MaxScan, WarnOnly: s.opts.ScanBudgetWarnOnly, Warn: s.opts.Warn,
		Timeout: s.opts.QueryTimeout, Now: s.opts.Now, NearSphereMaxDistance: s.opts.NearSphereMaxDistance}
}

// source lets the planner read the service's data.
type source struct{ s *Service }

func (src source) Collection(class string) planner.Collection {
	if c := src.s.data.Collection(class, false); c != nil {
		return c
	}
	return nil
}

func (src source) Related(owningClass, key, owningID string, fn func(string) bool) {
	src.s.data.Related(owningClass, key, owningID, fn)
}

// Related calls fn with the members of the relation key of the object
// (owningClass, owningID), in id order, until fn returns false: what
// $relatedTo reads (LiveQuery follows a relation's members with it).
func (s *Service) Related(owningClass, key, owningID string, fn func(relatedID string) bool) {
	s.data.Related(owningClass, key, owningID, fn)
}

func (src source) RelatedCount(owningClass, key, owningID string) int {
	return src.s.data.RelatedCount(owningClass, key, owningID)
}

func (src source) Owners(owningClass, key, relatedID string, fn func(string) bool) {
	src.s.data.Owners(owningClass, key, relatedID, fn)
}

func (src source) FieldType(class, field string) (schema.Type, bool) {
	if c := src.s.Class(class); c != nil {
		if f, ok := c.Fields[field]; ok {
			return f.Type, true
		}
	}
	return "", false
}

func (src source) RelationTarget(class, field string) string {
	if c := src.s.Class(class); c != nil {
		if f, ok := c.Fields[field]; ok && f.Type == schema.TypeRelation {
			return f.TargetClass
		}
	}
	return ""
}

// findGuards applies the read rules to the classes a query touches: its
// own class (the find, get or count operation) and its subqueries' (find).
// It remembers the main class's guard, which shapes the results.
type findGuards struct {
	s      *Service
	auth   Auth
	mainOp string
	order  []SortKey
	// main is the guard of the query's own class (a query has one; its
	// subqueries' guards are not kept).
	main *readGuard
}

// guard is planner.Query.Guard: the CLP check, the keys a where may name,
// and the visibility filter plus extra constraint of one class.
func (f *findGuards) guard(cls string, where map[string]any, sub bool) (func(schema.Object) bool, map[string]any, error) {
	op := f.mainOp
	if sub {
		op = opFind
	}
	g, err := f.s.guardRead(f.auth, cls, op)
	if err != nil {
		return nil, nil, err
	}
	if !f.auth.Master {
		if err := f.s.checkSelectKeys(f.auth, where); err != nil {
			return nil, nil, err
		}
	}
	if g.protected != nil {
		if err := checkQueryable(cls, where, g.protected(nil)); err != nil {
			return nil, nil, err
		}
		if !sub {
			// Sorting by a hidden field would reveal its order.
			for _, k := range f.order {
				if k.Path == "$score" {
					continue
				}
				if err := checkQueryable(cls, map[string]any{k.Path: nil}, g.protected(nil)); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	if !sub {
		f.main = g
	}
	return f.s.queryVisible(g, cls), g.extra, nil
}

// findIncludes parses a read's include paths; keys=b.c on a pointer b
// includes b too, to project c inside it.
func (s *Service) findIncludes(class string, r ReadOptions) ([][]string, error) {
	include := r.Include
	for _, k := range r.Keys {
		if root, _, dotted := strings.Cut(k, "."); dotted {
			if t, ok := (source{s}).FieldType(class, root); ok && t == schema.TypePointer {
				include = append(include, root)
			}
		}
	}
	return s.parseIncludes(class, include, r.IncludeAll)
}

// wantsScore says whether a find sorts by or selects its $text's
// "$score", which each result then carries.
func wantsScore(p FindParams) bool {
	for _, k := range p.Order {
		if k.Path == "$score" {
			return true
		}
	}
	for _, k := range p.Read.Keys {
		if k == "$score" {
			return true
		}
	}
	return false
}
