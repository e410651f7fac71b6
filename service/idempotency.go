package service

import (
	"hash/maphash"
	"time"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

// ClassIdempotency remembers request ids (idempotencyOptions): reqId and
// the time the entry expires.
const ClassIdempotency = "_Idempotency"

// CodeDuplicateRequest is Parse's error for a request id seen before.
const CodeDuplicateRequest = 159

// idempotencySweep is the most expired entries one claim deletes, so the
// class stays near its live size without a background job.
const idempotencySweep = 16

// ClaimRequest records a request id for ttl; a second claim of an id that
// has not expired is refused with 159 "Duplicate request". The caller
// releases the claim (ReleaseRequest) when the request fails, so a retry
// of a failed request is not refused.
func (s *Service) ClaimRequest(reqID string, ttl time.Duration) error {
	mu := &s.idemLocks[maphash.String(s.seed, reqID)%uint64(len(s.idemLocks))]
	mu.Lock()
	defer mu.Unlock()
	now := s.opts.Now()
	var ops []WriteOp
	if old, found := s.findOne(ClassIdempotency, "reqId", reqID); found {
		iso, _ := old["expire"].(map[string]any)["iso"].(string)
		if expire, ok := schema.ParseTime(iso); ok && expire.After(now) {
			return schema.Errorf(CodeDuplicateRequest, "Duplicate request")
		}
		ops = append(ops, WriteOp{Method: MethodDelete, Class: ClassIdempotency, ID: old["objectId"].(string)})
	}
	ops = append(ops, s.expiredRequests(now, deleted(ops))...)
	ops = append(ops, WriteOp{Method: MethodCreate, Class: ClassIdempotency, Body: map[string]any{
		"reqId": reqID, "expire": schema.Date(schema.FormatTime(now.Add(ttl)))}})
	_, err := s.write(Auth{Master: true, internal: true}, ops, true)
	return err
}

// ReleaseRequest forgets a claimed request id.
func (s *Service) ReleaseRequest(reqID string) error {
	mu := &s.idemLocks[maphash.String(s.seed, reqID)%uint64(len(s.idemLocks))]
	mu.Lock()
	defer mu.Unlock()
	old, found := s.findOne(ClassIdempotency, "reqId", reqID)
	if !found {
		return nil
	}
	_, err := s.write(Auth{Master: true, internal: true}, []WriteOp{{Method: MethodDelete, Class: ClassIdempotency, ID: old["objectId"].(string)}}, true)
	return err
}

// deleted lists the ids ops already delete.
func deleted(ops []WriteOp) map[string]bool {
	out := map[string]bool{}
	for _, op := range ops {
		out[op.ID] = true
	}
	return out
}

// expiredRequests are deletes of up to idempotencySweep expired entries,
// oldest first, skipping those in skip.
func (s *Service) expiredRequests(now time.Time, skip map[string]bool) []WriteOp {
	c := s.data.Collection(ClassIdempotency, false)
	if c == nil {
		return nil
	}
	var ops []WriteOp
	r := index.Range{Hi: schema.Date(schema.FormatTime(now)), HasHi: true}
	_ = c.ScanRange("expire", r, false, time.Time{}, func(ref index.Ref) bool {
		if id := ref.ID(); !skip[id] {
			ops = append(ops, WriteOp{Method: MethodDelete, Class: ClassIdempotency, ID: id})
		}
		return len(ops) < idempotencySweep
	})
	return ops
}
