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
