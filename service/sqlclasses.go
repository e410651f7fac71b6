package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/planner"
	"github.com/quarrydata/quarry/planner/sqlplan"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/where"
)

// Classes kept out of memory (Options.SQLClasses) live only in a store
// that answers queries (store.Querier, PostgreSQL): their objects are not
// loaded nor kept by the follower, reads are queries planner/sqlplan
// translates, and writes read the object they change from the store.
// Their relations, schemas and everything else stay in memory.

// ErrSQLClassesNeedQuerier refuses sqlClasses on a store that cannot run
// queries.
var ErrSQLClassesNeedQuerier = schema.Errorf(schema.CodeInternalServerError,
	"sqlClasses needs a PostgreSQL databaseURI: the embedded store cannot answer queries itself")

// keepOut checks Options.SQLClasses and tells the store, before loading.
func (s *Service) keepOut() error {
	if len(s.opts.SQLClasses) == 0 && s.opts.SQLClassesOver <= 0 {
		return nil
	}
	q, ok := s.store.(store.Querier)
	if !ok {
		return ErrSQLClassesNeedQuerier
	}
	s.sqlClasses = map[string]bool{}
	for _, c := range s.opts.SQLClasses {
		if !schema.ValidClassName(c) || strings.HasPrefix(c, "_") {
			return schema.Errorf(schema.CodeInvalidClassName, "sqlClasses: %q is not a custom class (built-in classes stay in memory)", c)
		}
		s.sqlClasses[c] = true
	}
	if s.opts.SQLClassesOver > 0 {
		sizes, err := q.Sizes(context.Background())
		if err != nil {
			return err
		}
		for class, n := range sizes {
			if n > float64(s.opts.SQLClassesOver) && !strings.HasPrefix(class, "_") && schema.ValidClassName(class) {
				s.sqlClasses[class] = true
			}
		}
	}
	s.querier = q
	q.KeepOut(slices.Collect(maps.Keys(s.sqlClasses)))
	return nil
}

// SQLClasses lists the classes kept out of memory, sorted.
func (s *Service) SQLClasses() []string { return slices.Sorted(maps.Keys(s.sqlClasses)) }

// isSQLClass reports whether class is kept out of memory.
func (s *Service) isSQLClass(class string) bool { return s.sqlClasses[class] }

// getSQL reads one object of a class kept out of memory.
func (s *Service) getSQL(ctx context.Context, class, id string) (schema.Object, bool, error) {
	t, ok := s.querier.Table(class)
	if !ok {
		return nil, false, nil
	}
	sel := store.Select{Where: `"` + t.ID + `" = $1`, Args: []any{id}, Limit: 1}
	var obj schema.Object
	err := s.querier.Select(ctx, class, sel, func(_ string, b []byte) error {
		return json.Unmarshal(b, &obj)
	})
	if err != nil {
		return nil, false, fmt.Errorf("reading %s/%s: %w", class, id, err)
	}
	return obj, obj != nil, nil
}

// readers are the ACL entries that let auth read; nil for the master key.
func readers(auth Auth) []string {
	if auth.Master || auth.internal {
		return nil
	}
	out := []string{"*"}
	if auth.UserID != "" {
		out = append(out, auth.UserID)
	}
	return append(out, auth.Roles...)
}

// runSQL is runPlan for a class kept out of memory: the guard's CLP check
// and pointer-permission where, the translation, the 154 rule on
// PostgreSQL's estimate, then the page and the count.
func (s *Service) runSQL(auth Auth, q planner.Query, depth int) (planner.Result, error) {
	res, _, err := s.runSQLStatement(auth, q, depth)
	return res, err
}

// runSQLStatement is runSQL that also returns the statement run (nil
// when the class has no table).
func (s *Service) runSQLStatement(auth Auth, q planner.Query, depth int) (planner.Result, *sqlplan.Statement, error) {
	st, ok, err := s.translateSQL(auth, q, depth)
	if err != nil || !ok {
		return planner.Result{Objects: []schema.Object{}}, nil, err
	}
	timeout := s.opts.QueryTimeout
	if timeout <= 0 {
		timeout = planner.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(auth.Context(), timeout)
	defer cancel()
	res, err := s.selectSQL(ctx, q, st)
	if errors.Is(err, context.DeadlineExceeded) {
		return planner.Result{}, nil, planner.ErrTimeout
	}
	return res, st, err
}

// translateSQL checks q through its guard (a subquery's when depth > 0)
// and builds its statement; ok is false when the class has no table.
func (s *Service) translateSQL(auth Auth, q planner.Query, depth int) (st *sqlplan.Statement, ok bool, err error) {
	where := q.Where
	if q.Guard != nil {
		_, extra, err := q.Guard(q.Class, q.Where, depth > 0)
		if err != nil {
			return nil, false, err
		}
		if extra != nil {
			if len(where) == 0 {
				where = extra
			} else {
				where = map[string]any{"$and": []any{where, extra}}
			}
		}
	}
	t, ok := s.querier.Table(q.Class)
	if !ok {
		return nil, false, nil
	}
	sq := sqlplan.Query{Class: q.Class, Where: where, Skip: q.Skip, Limit: q.Limit, Readers: readers(auth),
		FieldType: func(name string) (schema.Type, bool) { return source{s}.FieldType(q.Class, name) },
		Now:       s.opts.Now, Internal: q.Exempt, Resolver: &sqlResolver{s: s, auth: auth, guard: q.Guard, depth: depth},
		NearSphereMax: s.nearSphereMax()}
	for _, k := range q.Order {
		sq.Order = append(sq.Order, sqlplan.SortKey{Path: k.Path, Desc: k.Desc})
	}
	st, err = sqlplan.Translate(t, sq)
	return st, err == nil, err
}

// explainSQL is explain's answer for a class kept out of memory: the
// statement (placeholders, never values), PostgreSQL's estimate, and what
// runs in Go over its rows (the residual where and the order SQL cannot
// give), if anything.
func (s *Service) explainSQL(auth Auth, q planner.Query) map[string]any {
	out := map[string]any{"plan": "sql", "class": q.Class}
	st, ok, err := s.translateSQL(auth, q, 0)
	if err != nil || !ok {
		return out
	}
	out["where"], out["orderBy"] = st.Select.Where, st.Select.OrderBy
	budget := budgetSelect(q, st)
	rows, seq, err := s.querier.Explain(auth.Context(), q.Class, budget)
	if err == nil {
		out["estimatedRows"], out["sequentialScan"] = rows, seq
	}
	// The caller holds the master key, which the 154 rule exempts; say
	// what the same request without it would get.
	if s.opts.MaxScan > 0 {
		out["maxScan"] = s.opts.MaxScan
		if err == nil && rows > float64(s.opts.MaxScan) {
			err := sqlplan.CheckBudget(auth.Context(), s.querier, q.Class, budget, s.opts.MaxScan)
			if pe, ok := schema.AsError(err); ok && pe.Code == schema.CodeInefficientQuery {
				out["refusedWithoutMasterKey"] = pe.Message
			}
		}
	}
	if !st.Exact() {
		inGo := map[string]any{"page": true}
		if st.Residual != nil {
			inGo["residual"] = st.Residual.String()
		}
		if st.Order != nil {
			order := make([]string, len(st.Order))
			for i, k := range st.Order {
				order[i] = map[bool]string{false: "", true: "-"}[k.Desc] + k.Path
			}
			inGo["order"] = order
		}
		out["go"] = inGo
	}
	return out
}

// selectSQL applies the 154 rule on PostgreSQL's estimate of the rows the
// query may read, then runs it; the rows Go examines count against the
// same budget.
func (s *Service) selectSQL(ctx context.Context, q planner.Query, st *sqlplan.Statement) (planner.Result, error) {
	goBudget := 0
	if !q.Exempt {
		if err := sqlplan.CheckBudget(ctx, s.querier, q.Class, budgetSelect(q, st), s.opts.MaxScan); err != nil {
			if !s.opts.ScanBudgetWarnOnly {
				return planner.Result{}, err
			}
			s.warn(err.Error())
		}
		if !s.opts.ScanBudgetWarnOnly {
			goBudget = s.opts.MaxScan
		}
	}
	page, err := st.Run(ctx, s.querier, q.Class, q.Count, goBudget)
	if err != nil {
		return planner.Result{}, err
	}
	return planner.Result{Objects: page.Objects, Count: page.Count, Examined: page.Examined}, nil
}

// budgetSelect is the statement the 154 rule judges: the prefilter, whole
// when no page is asked (a count alone reads every row it matches).
func budgetSelect(q planner.Query, st *sqlplan.Statement) store.Select {
	budget := st.Prefilter()
	if q.Limit == 0 {
		budget.OrderBy, budget.OrderArgs, budget.Limit, budget.Offset = "", nil, -1, 0
	}
	return budget
}

// sqlResolver answers a SQL query's relations from memory and its
// subqueries through the engine of their own class, with the caller's
// rights.
type sqlResolver struct {
	s     *Service
	auth  Auth
	guard planner.Guard
	depth int
}

func (r *sqlResolver) RelatedTo(ownerClass, ownerID, key string) ([]string, error) {
	if !r.auth.Master && !r.auth.internal && !r.s.relatedVisible(r.auth, ownerClass, key, ownerID) {
		return []string{}, nil
	}
	ids := []string{}
	r.s.data.Related(ownerClass, key, ownerID, func(id string) bool { ids = append(ids, id); return true })
	return ids, nil
}

func (r *sqlResolver) RelationOwners(class, key string, relatedIDs []string) ([]string, error) {
	seen := map[string]bool{}
	owners := []string{}
	for _, rel := range relatedIDs {
		r.s.data.Owners(class, key, rel, func(id string) bool {
			if !seen[id] {
				seen[id] = true
				owners = append(owners, id)
			}
			return true
		})
	}
	return owners, nil
}

// run runs sub on its class, capped at planner.MaxSubqueryResults.
func (r *sqlResolver) run(sub *where.Subquery) (string, []schema.Object, error) {
	if r.depth >= planner.MaxSubqueryDepth {
		return "", nil, planner.ErrSubqueryTooDeep
	}
	class := sub.ClassName
	if key := sub.RedirectClassNameForKey; key != "" {
		if class = (source{r.s}).RelationTarget(sub.ClassName, key); class == "" {
			return "", nil, schema.Errorf(schema.CodeInvalidQuery, "redirectClassNameForKey %q is not a relation of %s", key, sub.ClassName)
		}
	}
	q := planner.Query{Class: class, Where: sub.Where, Limit: planner.MaxSubqueryResults + 1, Guard: r.guard,
		Exempt: r.auth.Master && !r.s.opts.ScanBudgetForMaster}
	var res planner.Result
	var err error
	if r.s.isSQLClass(class) {
		res, err = r.s.runSQL(r.auth, q, r.depth+1)
	} else {
		var plan *planner.Plan
		if plan, err = planner.Compile(r.s.sourceFor(r.auth), q, r.s.planOptions()); err == nil {
			res, err = plan.Run()
		}
	}
	if err != nil {
		return "", nil, err
	}
	if len(res.Objects) > planner.MaxSubqueryResults {
		return "", nil, schema.Errorf(schema.CodeInefficientQuery, "a subquery matched more than %d objects; narrow it", planner.MaxSubqueryResults)
	}
	return class, res.Objects, nil
}

func (r *sqlResolver) InQuery(sub *where.Subquery) (string, []string, error) {
	class, objs, err := r.run(sub)
	if err != nil {
		return "", nil, err
	}
	ids := make([]string, 0, len(objs))
	for _, o := range objs {
		if id, ok := o["objectId"].(string); ok {
			ids = append(ids, id)
		}
	}
	return class, ids, nil
}

func (r *sqlResolver) Select(sub *where.Subquery) ([]any, error) {
	_, objs, err := r.run(sub)
	if err != nil {
		return nil, err
	}
	vals := make([]any, 0, len(objs))
	for _, o := range objs {
		if v, ok := schema.Get(o, sub.Key); ok {
			vals = append(vals, v)
		}
	}
	return vals, nil
}

// previousVersion is what d's store record carries as the object before
// the write (store.Record.Previous): no follower holds an object kept out
// of memory, so the writer, which read it, hands it on for LiveQuery.
func previousVersion(d *draft) ([]byte, error) {
	if d.original == nil {
		return []byte{}, nil // created: there was none
	}
	return json.Marshal(d.original)
}

// previousRecord is previousVersion, from the JSON memory keeps of the
// original when it has it (Options.RecordPrevious: no encoding per write).
func (s *Service) previousRecord(d *draft) ([]byte, error) {
	if d.original != nil && !s.isSQLClass(d.class) {
		if coll := s.data.Collection(d.class, false); coll != nil {
			if kept := coll.KeptEncoding(d.original); kept != nil {
				return kept, nil
			}
		}
	}
	return previousVersion(d)
}

// foreignSQLObject is another instance's write to a class kept out of
// memory: nothing to keep, only the change to announce, with the previous
// version the writer carried in the record, so that LiveQuery decides
// create, enter, update, leave and delete as it did there.
func (s *Service) foreignSQLObject(r store.Record) (Change, bool) {
	c := Change{Class: r.Class}
	if r.Value != nil {
		if err := json.Unmarshal(r.Value, &c.Object); err != nil {
			s.warn(fmt.Sprintf("following: object %s/%s is not valid JSON", r.Class, r.Key))
			return Change{}, false
		}
	}
	switch {
	case r.Previous == nil:
		return legacySQLChange(c)
	case len(r.Previous) > 0:
		if err := json.Unmarshal(r.Previous, &c.Original); err != nil {
			s.warn(fmt.Sprintf("following: the previous version of %s/%s is not valid JSON", r.Class, r.Key))
			return legacySQLChange(c)
		}
	}
	return c, c.Original != nil || c.Object != nil
}

// legacySQLChange is the change of a record that carries no previous
// version (written by an instance that kept the class in memory, or by
// an older one): an object written before (updatedAt past createdAt)
// stands in for its previous version, so LiveQuery sends an update rather
// than a create, and a deletion has nothing to announce.
func legacySQLChange(c Change) (Change, bool) {
	if c.Object == nil {
		return Change{}, false
	}
	c.Original = nil
	if c.Object["updatedAt"] != c.Object["createdAt"] {
		c.Original = c.Object
	}
	return c, true
}

// findSQL is Find's second half for a class kept out of memory.
func (s *Service) findSQL(auth Auth, class string, p FindParams, q planner.Query, guards *findGuards, includes [][]string) (FindResult, error) {
	res, st, err := s.runSQLStatement(auth, q, 0)
	if err != nil {
		return FindResult{}, err
	}
	out := FindResult{Results: res.Objects, Count: res.Count, Counted: p.Count, Plan: "sql", Examined: res.Examined}
	g := guards.main
	scored := st != nil && wantsScore(p)
	for i, o := range res.Objects {
		out.Results[i] = s.present(class, o, p.Read, g)
		if scored {
			if score, ok := st.TextScore(o); ok {
				out.Results[i]["$score"] = score
			}
		}
	}
	s.includeAndProject(auth, class, &p, &out, includes, nil)
	if p.Explain {
		out.Explain = s.explainSQL(auth, q)
	}
	if err := s.afterFind(auth, class, &p, &out); err != nil {
		return FindResult{}, err
	}
	return out, nil
}

// storedObject is one stored object, from memory or, for a class kept out
// of memory, from the store (a failed read finds nothing).
func (s *Service) storedObject(class, id string) (schema.Object, bool) {
	if s.isSQLClass(class) {
		obj, ok, err := s.getSQL(context.Background(), class, id)
		if err != nil {
			s.warn(err.Error())
		}
		return obj, ok && err == nil
	}
	c := s.data.Collection(class, false)
	if c == nil {
		return nil, false
	}
	return c.Get(id)
}

// nearSphereMax is the planner's limit on a $nearSphere without a maximum
// (Options.NearSphereMaxDistance: 0 the default, negative none).
func (s *Service) nearSphereMax() float64 {
	return geo.NearSphereLimit(s.opts.NearSphereMaxDistance)
}

// sqlIndexes has the store index what the class's schema and the
// operator's indexes option declare for a class kept out of memory.
func (s *Service) sqlIndexes(class string) error {
	var keys []string
	if cls := s.Class(class); cls != nil {
		keys = indexedPaths(cls)
	}
	keys = append(keys, s.configIndexes[class]...)
	return s.querier.EnsureIndexes(context.Background(), class, keys)
}

// errSQLFieldDrop refuses deleting a field of a class kept out of memory:
// its values would have to be rewritten out of every row first.
func errSQLFieldDrop(class, field string) error {
	return schema.Errorf(schema.CodeInvalidSchemaOperation,
		"cannot delete field %s: class %s is kept out of memory (sqlClasses), and dropping its data is not supported", field, class)
}

// sqlIDs lists the objectIds of a class kept out of memory (purge).
func (s *Service) sqlIDs(class string) ([]string, error) {
	var ids []string
	err := s.querier.Select(context.Background(), class, store.Select{OrderBy: `"objectId"`, Limit: -1}, func(id string, _ []byte) error {
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

// callerSource is the planner's source for one caller's query: the
// subqueries it makes on classes kept out of memory run in SQL with the
// caller's rights (planner.External).
type callerSource struct {
	source
	auth Auth
}

func (c callerSource) External(q planner.Query) ([]schema.Object, bool, error) {
	if !c.s.isSQLClass(q.Class) {
		return nil, false, nil
	}
	res, err := c.s.runSQL(c.auth, q, 1)
	return res.Objects, true, err
}

// runPlanAs is runPlan for a caller's find, whose subqueries may reach
// classes kept out of memory.
func (s *Service) runPlanAs(auth Auth, q planner.Query) (*planner.Plan, planner.Result, error) {
	if len(s.sqlClasses) == 0 {
		return s.runPlan(q, false)
	}
	plan, err := planner.Compile(s.sourceFor(auth), q, s.planOptions())
	if err != nil {
		return nil, planner.Result{}, err
	}
	res, err := plan.Run()
	if err != nil {
		return nil, planner.Result{}, err
	}
	return plan, res, nil
}

// explainPlan is plan's explain, or the SQL path's for a class kept out
// of memory (no plan).
func explainPlan(plan *planner.Plan, res planner.Result) map[string]any {
	if plan == nil {
		return map[string]any{"plan": "sql"}
	}
	return plan.Explain(res)
}

// sourceFor is the planner's source for auth's queries: plain when every
// class is in memory, else one whose subqueries reach the others.
func (s *Service) sourceFor(auth Auth) planner.Source {
	if len(s.sqlClasses) == 0 {
		return source{s}
	}
	return callerSource{source{s}, auth}
}
