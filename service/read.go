package service

import (
	"maps"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// Get returns one object as the client sees it: through the same guarded
// read path as a find (CLP get, ACL, pointer permissions, protected
// fields), so nothing is visible here that a query would hide.
func (s *Service) Get(auth Auth, class, id string, opts ReadOptions) (schema.Object, error) {
	if !schema.ValidClassName(class) {
		return nil, schema.ClassNameError(class)
	}
	s.catchUp() // current.go
	res, err := s.Find(auth, class, FindParams{Where: map[string]any{"objectId": id}, Limit: 1, Read: opts, op: opGet})
	if err != nil {
		return nil, err
	}
	if len(res.Results) == 0 {
		return nil, schema.ErrObjectNotFound
	}
	return res.Results[0], nil
}

// ReadOptions shape what a read returns.
type ReadOptions struct {
	Keys        []string // when set, only these keys (plus the always-returned ones)
	ExcludeKeys []string
	Include     []string // pointer paths to expand ("a", "a.b", "*")
	IncludeAll  bool
}

var alwaysReturned = map[string]bool{"objectId": true, "createdAt": true, "updatedAt": true, "ACL": true}

// present copies a stored object into its reply form: relation fields
// declared by the schema appear as Relation values; projections apply.
//
// Internal fields (leading underscore: password hashes, shadow keys) never
// leave; a guard strips the fields protected from the caller.
func (s *Service) present(class string, obj schema.Object, opts ReadOptions, g *readGuard) schema.Object {
	return s.presentWithRoom(class, obj, opts, g, 0)
}

// presentWithRoom is present with room for extra keys the caller adds.
func (s *Service) presentWithRoom(class string, obj schema.Object, opts ReadOptions, g *readGuard, extra int) schema.Object {
	var out schema.Object
	if extra == 0 {
		// Cloning copies the map's groups wholesale, several times faster
		// than inserting key by key; internal keys are rare and deleted.
		out = maps.Clone(obj)
	} else {
		// A small map (up to 8 entries) is one group: a hint past that
		// allocates a table about twice the size, so size it exactly.
		out = make(schema.Object, len(obj)+extra)
		maps.Copy(out, obj)
	}
	if mayHoldInternalKeys(class) {
		for k := range out {
			if k[0] == '_' && !(g != nil && g.maintenance && maintenanceFields[k]) {
				delete(out, k)
			}
		}
	}
	var protected []string
	if g != nil && g.protected != nil {
		protected = g.protected(obj)
		for _, f := range protected {
			delete(out, f)
		}
	}
	if g.hidesAuthData(obj) {
		// authData is the user's own business (and the master key's).
		delete(out, "authData")
	}
	for _, f := range s.relationFields(class) {
		if !slices.Contains(protected, f.name) {
			out[f.name] = map[string]any{"__type": "Relation", "className": f.target}
		}
	}
	if len(opts.Keys) > 0 {
		projectKeys(out, opts.Keys, alwaysReturned)
	}
	for _, k := range opts.ExcludeKeys {
		if !alwaysReturned[k] {
			delete(out, k)
		}
	}
	s.setFileURLs(class, out)
	return out
}

// view is present for a reply nobody modifies: the stored object itself
// when its reply form would be an identical copy (no internal, protected
// or hidden field to strip, no relation field to show, no projection), a
// copy from present otherwise. Stored objects are never changed in place,
// so sharing them is safe, and a query's page costs no map per result.
// shareable is canShare's answer for the class and options.
func (s *Service) view(class string, obj schema.Object, opts ReadOptions, g *readGuard, shareable bool) schema.Object {
	if !shareable {
		return s.present(class, obj, opts, g)
	}
	if mayHoldInternalKeys(class) {
		for k := range obj {
			if k[0] == '_' {
				return s.present(class, obj, opts, g)
			}
		}
	}
	if g != nil && g.protected != nil {
		for _, f := range g.protected(obj) {
			if _, ok := obj[f]; ok {
				return s.present(class, obj, opts, g)
			}
		}
	}
	if g.hidesAuthData(obj) { // first: it rarely reads obj (a cold map)
		if _, ok := obj["authData"]; ok {
			return s.present(class, obj, opts, g)
		}
	}
	if s.holdsFiles(class, obj) {
		return s.present(class, obj, opts, g)
	}
	return obj
}

// viewedAsStored reports whether view returns every object of the class as
// it is for a shareable read guarded by g: no internal keys, protected
// fields, hidden authData or Files can be in the way, whatever the object
// holds, so the object need not be read to decide.
func (s *Service) viewedAsStored(class string, g *readGuard) bool {
	// authData is hidden only in _User, which mayHoldInternalKeys covers.
	return !mayHoldInternalKeys(class) && (g == nil || g.protected == nil) && len(s.fileFields(class)) == 0
}

// mayHoldInternalKeys reports whether the class's stored objects can hold
// internal keys (a leading underscore: password hashes, lower-cased shadow
// copies). Only the server writes such keys, and only into built-in
// classes (users.go); clients cannot (schema.ValidKeyName), so a custom
// class's objects need no scan for them.
func mayHoldInternalKeys(class string) bool { return strings.HasPrefix(class, "_") }

// canShare reports whether the class's objects may be replied as stored
// under opts, object by object (see view): no projection, and no relation
// field for present to show.
func (s *Service) canShare(class string, opts ReadOptions) bool {
	return len(opts.Keys) == 0 && len(opts.ExcludeKeys) == 0 && len(s.relationFields(class)) == 0
}

type relationField struct{ name, target string }

type relationFieldsEntry struct {
	cls    *schema.Class
	fields []relationField
}

// relationFields lists the Relation fields a reply shows for the class's
// objects (a role's users and roles relations are not shown), computed
// once per schema version: present runs for every result.
func (s *Service) relationFields(class string) []relationField {
	cls := s.Class(class)
	if cls == nil {
		return nil
	}
	if e, ok := s.relFields.Load(class); ok && e.(*relationFieldsEntry).cls == cls {
		return e.(*relationFieldsEntry).fields
	}
	var fields []relationField
	for k, f := range cls.Fields {
		if f.Type == schema.TypeRelation && !(class == classRole && (k == "users" || k == "roles")) {
			fields = append(fields, relationField{k, f.TargetClass})
		}
	}
	s.relFields.Store(class, &relationFieldsEntry{cls, fields})
	return fields
}

// projectKeys keeps only the listed keys (and the always-returned ones).
// A dot path "a.b" keeps a, and inside a plain Object (or an expanded
// pointer) keeps only b, as Parse projects sub-keys. Relation markers stay:
// Parse Server shows every Relation field of the schema whatever keys
// selects.
func projectKeys(obj map[string]any, keys []string, always map[string]bool) {
	whole := map[string]bool{}
	sub := map[string][]string{}
	for _, k := range keys {
		root, rest, dotted := strings.Cut(k, ".")
		if dotted {
			sub[root] = append(sub[root], rest)
		} else {
			whole[root] = true
		}
	}
	for k, v := range obj {
		if always[k] || whole[k] {
			continue
		}
		rest, ok := sub[k]
		if !ok {
			if !isRelationMarker(v) {
				delete(obj, k)
			}
			continue
		}
		m, isMap := v.(map[string]any)
		if !isMap || (m["__type"] != nil && m["__type"] != "Object") {
			continue // a pointer not (yet) expanded, or a special value: kept whole
		}
		inner := make(map[string]any, len(rest)+4)
		for ik, iv := range m {
			inner[ik] = iv
		}
		projectKeys(inner, rest, expandedAlways)
		obj[k] = inner
	}
}

func isRelationMarker(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["__type"] == "Relation"
}

// expandedAlways are the keys an expanded pointer keeps under projection.
var expandedAlways = map[string]bool{"__type": true, "className": true, "objectId": true,
	"createdAt": true, "updatedAt": true, "ACL": true}
