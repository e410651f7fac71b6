package service

import (
	"encoding/json"
	"strings"

	"github.com/quarrydata/quarry/access"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

// GetResult is Get for a caller that only sends the object: its one result
// may be the stored object itself, as a find's results may (see view), so
// the caller must not modify it, and AppendResult encodes it from the
// bytes kept with the stored version. A not-found is ErrObjectNotFound.
func (s *Service) GetResult(auth Auth, class, id string, opts ReadOptions) (FindResult, error) {
	var res FindResult
	err := s.GetResultInto(auth, class, id, opts, &res)
	return res, err
}

// GetResultInto is GetResult filling *into, which may hold the one result
// itself: a get served with no allocation for its result list. into is
// reset first; after an error it holds nothing.
func (s *Service) GetResultInto(auth Auth, class, id string, opts ReadOptions, into *FindResult) error {
	*into = FindResult{}
	if !schema.ValidClassName(class) {
		return schema.ClassNameError(class)
	}
	s.catchUp() // current.go
	if done, err := s.getDirect(auth, class, id, opts, into); done {
		if err != nil {
			*into = FindResult{}
		}
		return err
	}
	res, err := s.Find(auth, class, FindParams{Where: map[string]any{"objectId": id}, Limit: 1, Read: opts,
		op: opGet, shareGet: true})
	if err != nil {
		return err
	}
	if len(res.Results) == 0 {
		return schema.ErrObjectNotFound
	}
	*into = res
	return nil
}

// getDirect is GetResult without the planner, when only the CLP and the
// ACL decide what the caller sees: no find trigger, no include, no
// pointer permission or protected field for the caller. done is false
// when the full path must answer instead.
func (s *Service) getDirect(auth Auth, class, id string, opts ReadOptions, res *FindResult) (done bool, err error) {
	if h := s.opts.Hooks; h != nil && (h.Has(BeforeFind, class) || h.Has(AfterFind, class)) {
		return false, nil
	}
	if s.isSQLClass(class) || auth.Maintenance {
		return false, nil
	}
	if len(opts.Include) > 0 || opts.IncludeAll || dotted(opts.Keys) {
		return false, nil
	}
	// The guard guardRead would make, without its allocations: the
	// reader alone decides here.
	var g readGuard
	if !auth.Master && !auth.internal {
		r, err := s.policy(class).Read(auth.caller(), access.Op(opGet))
		if err != nil {
			return true, err
		}
		if r.Scope().Where() != nil || r.HasProtected() {
			return false, nil
		}
		g.reader = r
	}
	coll := s.data.Collection(class, false)
	if coll == nil {
		return true, schema.ErrObjectNotFound
	}
	ref, ok := coll.Lookup(id)
	if !ok {
		return true, schema.ErrObjectNotFound
	}
	obj := ref.Object()
	if g.reader != nil && s.aclFilters(class) && !g.reader.CanRead(obj) {
		return true, schema.ErrObjectNotFound
	}
	res.one[0] = s.view(class, obj, opts, &g, s.canShare(class, opts))
	res.Results, res.Plan, res.Examined, res.coll = res.one[:], "id_lookup", 1, coll
	if s.derivedBy(class) {
		// res is the caller's (GetResultInto): its inline slots will do.
		res.oneSrc[0], res.oneRef[0] = obj, ref
		res.srcs, res.refs = res.oneSrc[:], res.oneRef[:]
	}
	return true, nil
}

// dotted reports whether a key names a path inside a field ("a.b").
func dotted(keys []string) bool {
	for _, k := range keys {
		if strings.Contains(k, ".") {
			return true
		}
	}
	return false
}

// AppendResults appends the results to dst as a JSON array, byte for byte
// what encoding/json's Marshal makes of Results. A result that is a stored
// object as it is (see view) costs only a copy of the bytes kept with its
// version, which the scan that found it handed on (index.Ref), or which
// index.Collection.Encoding finds; the others, copies shaped for the
// caller, are encoded here, from their source's bytes where they can be.
func (r *FindResult) AppendResults(dst []byte) ([]byte, error) {
	if r.Results == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range r.Results {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = r.AppendResult(dst, i); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// AppendResult appends result i to dst as AppendResults does.
func (r *FindResult) AppendResult(dst []byte, i int) ([]byte, error) {
	if r.Results[i] == nil && r.refs != nil && r.refs[i].Valid() {
		// Left undecoded (FindParams.ReplyOnly): sent as stored.
		enc, err := r.refs[i].Encoding()
		return append(dst, enc...), err
	}
	if r.srcs != nil && r.srcs[i] != nil {
		src := r.srcs[i]
		var ref index.Ref
		if r.refs != nil {
			ref = r.refs[i]
		}
		enc, err := sourceEncoding(src, ref, r.coll)
		if err != nil {
			return dst, err
		}
		if sameObject(r.Results[i], src) {
			return append(dst, enc...), nil
		}
		return r.appendDerived(dst, enc, src, r.Results[i])
	}
	b, err := encodeObject(r.coll, r.Results[i])
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// encodeObject is obj's JSON: the bytes kept with it when obj is the
// stored version in coll, a new encoding otherwise.
func encodeObject(coll *index.Collection, obj schema.Object) ([]byte, error) {
	if coll != nil {
		return coll.Encoding(obj)
	}
	return json.Marshal(obj)
}
