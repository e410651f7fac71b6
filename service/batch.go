package service

import "github.com/quarrydata/quarry/schema"

// BatchSize is the most commands one batch may hold.
func (s *Service) BatchSize() int { return s.opts.BatchSize }

// WriteAll runs ops all-or-nothing in the given order: later ops see the
// effects of earlier ones, and the whole set commits in one durable unit.
// On failure the error names the failing item and nothing is written.
func (s *Service) WriteAll(auth Auth, ops []WriteOp) ([]WriteResult, error) {
	if len(ops) > s.opts.BatchSize {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "batch holds %d requests; the limit is %d", len(ops), s.opts.BatchSize)
	}
	return s.write(auth, ops, true)
}

// CreateEach creates one object of class per body, as the creates of a
// batch without transaction: each succeeds or fails on its own, with the
// error it would have alone, and runs its own beforeSave and afterSave.
// Those that pass share one store commit (one fsync) instead of one each.
// Classes whose creates claim unique values (the built-in ones) or are
// kept out of memory are created one after the other.
func (s *Service) CreateEach(auth Auth, class string, bodies []map[string]any) []WriteResult {
	results := make([]WriteResult, len(bodies))
	if schema.IsBuiltinClass(class) || s.isSQLClass(class) || len(bodies) < 2 {
		for i, body := range bodies {
			results[i].Create, results[i].Err = s.Create(auth, class, body)
		}
		return results
	}
	ops := make([]WriteOp, len(bodies))
	triggers := make([][]preparedTrigger, len(bodies))
	pending := make([]int, 0, len(bodies)) // the ops still to commit
	for i, body := range bodies {
		ops[i] = WriteOp{Method: MethodCreate, Class: class, Body: body}
		if !auth.internal {
			if err := s.checkDenylist(body); err != nil { // denylist.go
				results[i].Err = err
				continue
			}
		}
		// cloud code (hooks.go), before any lock, one op at a time
		t, err := s.beforeTriggers(auth, ops[i:i+1])
		if err != nil {
			results[i].Err = err
			continue
		}
		triggers[i] = t
		pending = append(pending, i)
	}
	if len(pending) == 0 {
		return results
	}
	var drafts []*draft // of the ops committed, by index in ops
	err := s.decideAgain(maxDecideAttempts, func() (err error) {
		drafts, err = s.createEachLocked(auth, ops, pending, results)
		return err
	})
	committed := make([]*draft, 0, len(pending))
	for _, i := range pending {
		if err != nil {
			results[i].Err = err
		} else if drafts[i] != nil {
			committed = append(committed, drafts[i])
		}
	}
	s.mailAfterWrite(committed)
	for _, i := range pending {
		if err == nil && drafts[i] != nil {
			s.afterTriggers(auth, triggers[i], ops[i:i+1], results[i:i+1], drafts[i:i+1]) // cloud code (hooks.go)
		}
	}
	s.announce()
	return results
}

// createEachLocked decides the creates ops[pending] under their locks,
// each on its own, and commits those that pass in one unit. It sets the
// result of each pending op and returns the drafts committed, by index in
// ops; its error (a lock, the store) fails them all.
func (s *Service) createEachLocked(auth Auth, ops []WriteOp, pending []int, results []WriteResult) ([]*draft, error) {
	live := make([]int, 0, len(pending))
	keys := make([]string, 0, len(pending))
	for _, i := range pending {
		results[i] = WriteResult{} // a stale attempt's outcome is void
		id, err := s.newID(ops[i])
		if err != nil {
			results[i].Err = err
			continue
		}
		ops[i].ID = id
		keys = append(keys, ops[i].Class+"\x00"+id)
		live = append(live, i)
	}
	if len(live) == 0 {
		return make([]*draft, len(ops)), nil
	}
	unshare := s.shareClasses(ops[live[0] : live[0]+1]) // one class
	defer unshare()
	unlock, err := s.lockObjectsOrOutage(keys)
	if err != nil {
		return nil, err
	}
	defer unlock()
	base, err := s.baseFor(ops[live[0] : live[0]+1])
	if err != nil {
		return nil, err
	}
	now := schema.FormatTime(s.opts.Now())
	// Custom objectIds of earlier creates are taken for later ones.
	taken := make(map[string]schema.Object, len(live))
	drafts := make([]*draft, 0, len(live))
	owners := make([]int, 0, len(live))
	for _, i := range live {
		d, err := s.prepare(auth, ops[i], now, taken, nil)
		if err == nil {
			err = d.encode()
		}
		if err != nil {
			results[i].Err = err
			continue
		}
		taken[ops[i].Class+"\x00"+d.id] = d.obj
		drafts = append(drafts, d)
		owners = append(owners, i)
	}
	byOp := make([]*draft, len(ops))
	if len(drafts) == 0 {
		return byOp, nil
	}
	refused := make([]bool, len(drafts))
	err = s.commit(auth, drafts, base, func(j int, err error) {
		refused[j] = true
		results[owners[j]].Err = err
	})
	if err != nil {
		return nil, err
	}
	for j, d := range drafts {
		if refused[j] {
			continue
		}
		i := owners[j]
		byOp[i] = d
		results[i].Create = CreateResult{ObjectID: d.id, CreatedAt: now, Echo: d.echo}
	}
	return byOp, nil
}
