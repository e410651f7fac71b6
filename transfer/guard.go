package transfer

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// What an import refuses. A dump is data from outside: nothing in it may
// widen who can read or write what, and nothing is resolved silently.
//   - The master-only classes (_Hooks, _JobSchedule, _JobStatus,
//     _PushStatus, _Audience, _Idempotency) keep their master-only CLP
//     whatever the dump says, with or without a _SCHEMA entry.
//   - A CLP that does not validate as the schemas API would validate it
//     fails the import (ErrBadCLP): a malformed entry is never read as
//     public.
//   - A document whose objectId is not Parse-shaped (schema.ObjectIDProblem),
//     and every later document of a collection repeating an objectId, is
//     not imported and is counted in Summary.Rejected; the command exits
//     non-zero when any was.

// ErrBadCLP is returned by Import when a _SCHEMA entry's class-level
// permissions are malformed.
var ErrBadCLP = errors.New("transfer: malformed class-level permissions")

// checkObjectID says why id cannot be an objectId, or "" when it can
// (schema.ObjectIDProblem: the rule a client's own ids follow too).
func checkObjectID(id string) string { return schema.ObjectIDProblem(id) }

// quoteID shows an id from a dump in a report: quoted, control bytes
// escaped, cut to a readable length.
func quoteID(id string) string {
	const show = 40
	if len(id) > show {
		return strconv.Quote(id[:show]) + fmt.Sprintf("... (%d bytes)", len(id))
	}
	return strconv.Quote(id)
}

// fixCLP applies the import's CLP rules to a class read from _SCHEMA. It
// reports whether it replaced the dump's CLP by the built-in one.
func fixCLP(c *schema.Class) (replaced bool, err error) {
	if schema.MasterOnlyClass(c.Name) {
		replaced = c.CLP != nil
		c.CLP = schema.MasterOnlyCLP()
		return replaced, nil
	}
	if c.CLP == nil {
		return false, nil
	}
	// Validate only: the dump's CLP is kept as Parse Server stored it (an
	// operation it leaves out stays open, as Parse Server reads it).
	if _, err := schema.NormalizeCLP(c.CLP, c.Fields); err != nil {
		msg := err.Error()
		if pe, ok := schema.AsError(err); ok {
			msg = pe.Message
		}
		return false, fmt.Errorf("%w: class %s: %s; correct or remove its class_permissions in _SCHEMA", ErrBadCLP, c.Name, msg)
	}
	return false, nil
}

// clpOf reads a _SCHEMA entry's CLP value: absent or null is none; any
// other value that is not an object is refused.
func clpOf(class string, v any, present bool) (map[string]any, error) {
	if !present || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: class %s: class-level permissions must be an object, not %T", ErrBadCLP, class, v)
	}
	return m, nil
}

// reject counts a document of class refused for its objectId.
func (im *importer) reject(class string, n int64, id, why string) {
	sum := im.cp.Summary
	sum.Skipped[class+": "+why]++
	sum.Rejected++
	if len(sum.RejectedDocs) < maxRejectedShown {
		sum.RejectedDocs = append(sum.RejectedDocs, fmt.Sprintf("%s document %d: %s: %s", class, n, quoteID(id), why))
	}
}

// idSet holds the objectIds of one collection's documents, to find
// repeats. The embedded store holds every object in memory anyway; an id
// costs some fifty bytes more.
type idSet struct {
	ids map[string]struct{}
	// committed, in a resumed import, holds what the interrupted run
	// wrote: a batch committed after the last checkpoint is read again
	// and must match it byte for byte, or it repeats an id.
	committed map[string][]byte
}

// reset starts the set for collection c; resumed, it first reads the
// objects an interrupted run already committed.
func (s *idSet) reset(st store.Adapter, c Collection, resumed bool) error {
	s.ids, s.committed = map[string]struct{}{}, nil
	if !resumed {
		return nil
	}
	s.committed = map[string][]byte{}
	return st.Load(func(r store.Record) error {
		if r.Kind == store.KindObject && r.Class == c.Name {
			s.committed[r.Key] = r.Value
		}
		return nil
	})
}

// repeats reports whether an earlier document of this collection had id,
// and records it. value is the document as it would be stored.
func (s *idSet) repeats(id string, value []byte) bool {
	if _, dup := s.ids[id]; dup {
		return true
	}
	s.ids[id] = struct{}{}
	if old, ok := s.committed[id]; ok && !bytes.Equal(old, value) {
		return true
	}
	return false
}
