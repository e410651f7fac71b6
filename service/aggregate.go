package service

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/quarrydata/quarry/aggregate"
	"github.com/quarrydata/quarry/planner"
	"github.com/quarrydata/quarry/schema"
)

// AggregateParams are a GET /aggregate/<C> request's parameters, decoded by
// the transport.
type AggregateParams struct {
	// Distinct names the field whose distinct values are returned; when
	// set, Stages must be empty and Where filters the objects.
	Distinct string
	// Where filters the objects (a leading $match for a pipeline).
	Where map[string]any
	// Stages is the pipeline.
	Stages []aggregate.Stage
	// Explain returns the plan instead of the results.
	Explain bool
}

// AggregateResult is the reply: the results, or the plan when asked for.
type AggregateResult struct {
	Results []any
	Explain map[string]any
	// plain holds the same results as a find's when the pipeline was only
	// a planner prefix ($match, $sort, $skip, $limit): each a copy of a
	// stored object, encoded from its stored bytes (AppendResults).
	plain *FindResult
}

// AppendResults appends the results to dst as a JSON array, byte for byte
// what encoding/json's Marshal makes of Results.
func (r *AggregateResult) AppendResults(dst []byte) ([]byte, error) {
	if r.plain != nil {
		return r.plain.AppendResults(dst)
	}
	b, err := json.Marshal(r.Results)
	return append(dst, b...), err
}

// Aggregate runs a distinct or an aggregate pipeline over a class; the
// master key only. A pipeline's leading $match, $sort, $skip and $limit
// run through the planner, so the class's indexes serve them; the rest
// runs in memory. Results never hold internal fields.
func (s *Service) Aggregate(auth Auth, class string, p AggregateParams) (AggregateResult, error) {
	if !auth.Master {
		return AggregateResult{}, schema.Errorf(schema.CodeOperationForbidden, "aggregate needs the master key")
	}
	if !schema.ValidClassName(class) && class != AnalyticsClass {
		return AggregateResult{}, schema.ClassNameError(class)
	}
	if p.Distinct != "" {
		if len(p.Stages) > 0 {
			return AggregateResult{}, schema.Errorf(schema.CodeInvalidQuery, "distinct cannot be combined with pipeline stages")
		}
		return s.distinct(auth, class, p)
	}
	stages := p.Stages
	if len(p.Where) > 0 {
		stages = append([]aggregate.Stage{{Name: "$match", Spec: p.Where}}, stages...)
	}
	pipe, err := aggregate.Compile(stages)
	if err != nil {
		return AggregateResult{}, err
	}
	pre, rest := pipe.Prefix()
	q := planner.Query{Class: class, Where: pre.Where, Skip: pre.Skip, Limit: pre.Limit,
		Exempt: !s.opts.ScanBudgetForMaster}
	for _, k := range pre.Sort {
		q.Order = append(q.Order, planner.SortKey{Path: k.Path, Desc: k.Desc})
	}
	plan, res, err := s.runPlan(q, pre.Limit < 0)
	if err != nil {
		return AggregateResult{}, err
	}
	if p.Explain {
		return AggregateResult{Explain: map[string]any{"plan": explainPlan(plan, res), "pipeline": rest.Names()}}, nil
	}
	timeout := s.opts.QueryTimeout
	if timeout <= 0 {
		timeout = planner.DefaultTimeout
	}
	docs, err := rest.Run(res.Objects, aggregate.RunOptions{Deadline: time.Now().Add(timeout)})
	if err != nil {
		return AggregateResult{}, err
	}
	out := make([]any, len(docs))
	var plain *FindResult
	if len(rest.Names()) == 0 {
		plain = &FindResult{Results: make([]schema.Object, len(docs)), coll: s.data.Collection(class, false)}
	}
	for i, d := range docs {
		c := withoutHidden(d)
		out[i] = c
		if plain != nil {
			plain.Results[i] = c
			plain.noteSource(i, d)
		}
	}
	if plain != nil && samePage(docs, res.Objects) {
		plain.refs = res.Refs // the planner's page as it read it
	}
	return AggregateResult{Results: out, plain: plain}, nil
}

// samePage reports whether docs are the objects of page themselves, in
// its order.
func samePage(docs, page []schema.Object) bool {
	if len(docs) != len(page) {
		return false
	}
	for i := range docs {
		if !sameObject(docs[i], page[i]) {
			return false
		}
	}
	return true
}

// withoutHidden copies a result without internal fields (leading
// underscore: password hashes, shadow keys), as Parse strips them.
func withoutHidden(d schema.Object) map[string]any {
	out := make(map[string]any, len(d))
	for k, v := range d {
		if !strings.HasPrefix(k, "_") {
			out[k] = v
		}
	}
	return out
}

// distinct returns the distinct values of a field over the objects
// matching Where: array values count element by element, null and missing
// values are left out, and the values come in Parse's sort order.
func (s *Service) distinct(auth Auth, class string, p AggregateParams) (AggregateResult, error) {
	path := p.Distinct
	for i, seg := range strings.Split(path, ".") {
		if !schema.ValidKeyName(seg) && !(i == 0 && schema.IsReservedKey(seg)) {
			return AggregateResult{}, schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", path)
		}
	}
	q := planner.Query{Class: class, Where: p.Where, Exempt: auth.Master && !s.opts.ScanBudgetForMaster}
	plan, res, err := s.runPlan(q, true)
	if err != nil {
		return AggregateResult{}, err
	}
	if p.Explain {
		return AggregateResult{Explain: map[string]any{"plan": explainPlan(plan, res), "distinct": path}}, nil
	}
	var values []any
	add := func(v any) {
		if v == nil {
			return
		}
		values = append(values, v)
	}
	for _, o := range res.Objects {
		v, ok := schema.Get(o, path)
		if !ok {
			continue
		}
		if arr, isArray := v.([]any); isArray {
			for _, e := range arr {
				add(e)
			}
			continue
		}
		add(v)
	}
	sort.SliceStable(values, func(i, j int) bool { return schema.Compare(values[i], values[j]) < 0 })
	out := make([]any, 0, len(values))
	for _, v := range values {
		if len(out) == 0 || !schema.Equal(out[len(out)-1], v) {
			out = append(out, v)
		}
	}
	return AggregateResult{Results: out}, nil
}

// runPlan compiles and runs a query. capped reads every match, up to
// aggregate.DefaultMaxDocuments, and refuses a query that has more: the
// aggregate stages after it work in memory.
func (s *Service) runPlan(q planner.Query, capped bool) (*planner.Plan, planner.Result, error) {
	if capped {
		q.Limit = aggregate.DefaultMaxDocuments + 1
	}
	if s.isSQLClass(q.Class) {
		// Aggregates are the master key's: the SQL page feeds the pipeline.
		res, err := s.runSQL(Auth{Master: true}, q, 0)
		if err == nil && capped && len(res.Objects) > aggregate.DefaultMaxDocuments {
			err = aggregate.ErrTooManyDocuments
		}
		return nil, res, err
	}
	plan, err := planner.Compile(s.sourceFor(Auth{Master: true}), q, s.planOptions()) // aggregates are the master key's
	if err != nil {
		return nil, planner.Result{}, err
	}
	res, err := plan.Run()
	if err != nil {
		return nil, planner.Result{}, err
	}
	if capped && len(res.Objects) > aggregate.DefaultMaxDocuments {
		return nil, planner.Result{}, aggregate.ErrTooManyDocuments
	}
	return plan, res, nil
}
