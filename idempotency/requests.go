// Package idempotency owns idempotencyOptions' request ids (_Idempotency):
// claiming a request id for a time, refusing a repeat with 159, releasing
// the id of a failed request, and sweeping expired ids as later claims
// come. It works through the narrow Core the service offers; the service
// never imports it.
package idempotency

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// ClassIdempotency remembers request ids (idempotencyOptions): reqId and
// the time the entry expires.
const ClassIdempotency = "_Idempotency"

// CodeDuplicateRequest is Parse's error for a request id seen before.
const CodeDuplicateRequest = 159

// sweepMax is the most expired entries one claim deletes, so the class
// stays near its live size without a background job.
const sweepMax = 16

// Core is what request ids need of the service: the in-memory objects
// (to look ids up by their indexes), atomic writes as the server, and
// the clock.
type Core interface {
	Data() *index.DB
	WriteAsServer(ops []service.WriteOp) ([]service.WriteResult, error)
	Now() time.Time
}

// Requests claims and releases request ids through a Core. One Requests
// per service: its locks serialize the claims of one id in this process.
type Requests struct {
	core  Core
	seed  maphash.Seed
	locks [64]sync.Mutex // striped by the id's hash
}

// New returns the request ids kept through core.
func New(core Core) *Requests { return &Requests{core: core, seed: maphash.MakeSeed()} }

func (r *Requests) lock(reqID string) *sync.Mutex {
	return &r.locks[maphash.String(r.seed, reqID)%uint64(len(r.locks))]
}

// ClaimRequest records a request id for ttl; a second claim of an id that
// has not expired is refused with 159 "Duplicate request". The caller
// releases the claim (ReleaseRequest) when the request fails, so a retry
// of a failed request is not refused.
func (r *Requests) ClaimRequest(reqID string, ttl time.Duration) error {
	mu := r.lock(reqID)
	mu.Lock()
	defer mu.Unlock()
	now := r.core.Now()
	var ops []service.WriteOp
	if old, found := r.find(reqID); found {
		iso, _ := old["expire"].(map[string]any)["iso"].(string)
		if expire, ok := schema.ParseTime(iso); ok && expire.After(now) {
			return schema.Errorf(CodeDuplicateRequest, "Duplicate request")
		}
		ops = append(ops, service.WriteOp{Method: service.MethodDelete, Class: ClassIdempotency, ID: old["objectId"].(string)})
	}
	ops = append(ops, r.expired(now, deleted(ops))...)
	ops = append(ops, service.WriteOp{Method: service.MethodCreate, Class: ClassIdempotency, Body: map[string]any{
		"reqId": reqID, "expire": schema.Date(schema.FormatTime(now.Add(ttl)))}})
	_, err := r.core.WriteAsServer(ops)
	return err
}

// ReleaseRequest forgets a claimed request id.
func (r *Requests) ReleaseRequest(reqID string) error {
	mu := r.lock(reqID)
	mu.Lock()
	defer mu.Unlock()
	old, found := r.find(reqID)
	if !found {
		return nil
	}
	_, err := r.core.WriteAsServer([]service.WriteOp{{Method: service.MethodDelete, Class: ClassIdempotency, ID: old["objectId"].(string)}})
	return err
}

// find returns the entry of a request id through the reqId index.
func (r *Requests) find(reqID string) (schema.Object, bool) {
	c := r.core.Data().Collection(ClassIdempotency, false)
	if c == nil {
		return nil, false
	}
	var found schema.Object
	_ = c.ScanRange("reqId", index.Equal(reqID), false, time.Time{}, func(ref index.Ref) bool {
		found = ref.Object()
		return false
	})
	return found, found != nil
}

// deleted lists the ids ops already delete.
func deleted(ops []service.WriteOp) map[string]bool {
	out := map[string]bool{}
	for _, op := range ops {
		out[op.ID] = true
	}
	return out
}

// expired are deletes of up to sweepMax expired entries, oldest first,
// skipping those in skip.
func (r *Requests) expired(now time.Time, skip map[string]bool) []service.WriteOp {
	c := r.core.Data().Collection(ClassIdempotency, false)
	if c == nil {
		return nil
	}
	var ops []service.WriteOp
	rng := index.Range{Hi: schema.Date(schema.FormatTime(now)), HasHi: true}
	_ = c.ScanRange("expire", rng, false, time.Time{}, func(ref index.Ref) bool {
		if id := ref.ID(); !skip[id] {
			ops = append(ops, service.WriteOp{Method: service.MethodDelete, Class: ClassIdempotency, ID: id})
		}
		return len(ops) < sweepMax
	})
	return ops
}
