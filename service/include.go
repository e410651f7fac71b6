package service

import (
	"slices"
	"sort"
	"strings"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

// MaxIncludeDepth bounds the dot levels of one include path.
const MaxIncludeDepth = 10

// MaxIncludePaths bounds how many include paths one query may name.
const MaxIncludePaths = 50

// parseIncludes turns "a,a.b,*" into sorted paths (each prefix included
// once). includeAll or "*" adds every Pointer and Array field of the class.
func (s *Service) parseIncludes(class string, list []string, all bool) ([][]string, error) {
	if len(list) == 0 && !all {
		return nil, nil
	}
	set := map[string]bool{}
	for _, p := range list {
		if p == "*" {
			all = true
			continue
		}
		parts := strings.Split(p, ".")
		if len(parts) > MaxIncludeDepth {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "include path %q is deeper than %d levels", p, MaxIncludeDepth)
		}
		for i := range parts {
			if !schema.ValidKeyName(parts[i]) {
				return nil, schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", p)
			}
			set[strings.Join(parts[:i+1], ".")] = true
		}
	}
	if all {
		if cls := s.Class(class); cls != nil {
			for k, f := range cls.Fields {
				if f.Type == schema.TypePointer || f.Type == schema.TypeArray {
					set[k] = true
				}
			}
		}
	}
	if len(set) > MaxIncludePaths {
		return nil, schema.Errorf(schema.CodeInvalidQuery, "include names more than %d paths", MaxIncludePaths)
	}
	paths := make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	// Shorter paths first: a level is expanded before the levels below it.
	sort.Slice(paths, func(i, j int) bool {
		di, dj := strings.Count(paths[i], "."), strings.Count(paths[j], ".")
		if di != dj {
			return di < dj
		}
		return paths[i] < paths[j]
	})
	out := make([][]string, len(paths))
	for i, p := range paths {
		out[i] = strings.Split(p, ".")
	}
	return out, nil
}

// expandIncludes replaces pointers at each include path with the objects
// they point to. Each path is one batched lookup for all results, through
// the same read path as any get. Missing targets drop the key (or the
// array element), as Parse does.
// note, when set, learns each included object and its stored source.
// splice, when set (the caller only sends the reply, see spliceable),
// learns the included objects whose reply is their stored bytes as they
// are: those get a stub in the results, not a decoded copy.
func (s *Service) expandIncludes(auth Auth, results []schema.Object, paths [][]string,
	note func(exp, src schema.Object, ref index.Ref, coll *index.Collection),
	splice func(stub schema.Object, ref index.Ref, class string)) {
	for pi, path := range paths {
		// Collect the holders of the last segment: objects reached by
		// walking the already-expanded prefix.
		holders := results
		for _, seg := range path[:len(path)-1] {
			holders = children(holders, seg)
		}
		last := path[len(path)-1]
		want := map[string]map[string]bool{} // class -> ids
		n := 0
		for _, h := range holders {
			forEachPointer(h[last], func(p map[string]any) {
				ref := refOf(p)
				if want[ref.class] == nil {
					want[ref.class] = make(map[string]bool, len(holders))
				}
				want[ref.class][ref.id] = true
				n++
			})
		}
		found := make(map[pointerRef]schema.Object, n)
		for class, ids := range want {
			coll := s.data.Collection(class, false)
			sqlClass := s.isSQLClass(class)
			if coll == nil && !sqlClass {
				continue
			}
			// Included objects pass the same checks as a get of each.
			g, err := s.guardRead(auth, class, opGet)
			if err != nil {
				continue
			}
			visible := s.queryVisible(g, class)
			if sqlClass {
				visible = g.visible // no flag counts without memory (aclFilters)
			}
			if splice != nil && !sqlClass && coll != nil && s.spliceable(class, g, visible, paths, pi) {
				// Nothing to decide on the object and nothing to take out
				// of it: found by id is seen as stored.
				for id := range ids {
					if ref, ok := coll.Lookup(id); ok {
						stub := schema.Object{"__type": "Object", "className": class, "objectId": id}
						found[pointerRef{class, id}] = stub
						splice(stub, ref, class)
					}
				}
				continue
			}
			for id := range ids {
				obj, ref, ok := s.storedVersion(class, coll, id)
				if ok && (visible == nil || visible(obj)) && g.scope.Allows(obj) {
					exp := s.presentWithRoom(class, obj, ReadOptions{}, g, 2)
					exp["__type"] = "Object"
					exp["className"] = class
					found[pointerRef{class, id}] = exp
					if note != nil {
						note(exp, obj, ref, coll)
					}
				}
			}
		}
		for _, h := range holders {
			v, ok := h[last]
			if !ok {
				continue
			}
			switch x := v.(type) {
			case map[string]any:
				if x["__type"] != "Pointer" {
					continue
				}
				if exp, ok := found[refOf(x)]; ok {
					h[last] = exp
				} else {
					delete(h, last)
				}
			case []any:
				out := make([]any, 0, len(x))
				for _, e := range x {
					p, isPtr := e.(map[string]any)
					if !isPtr || p["__type"] != "Pointer" {
						out = append(out, e)
						continue
					}
					if exp, ok := found[refOf(p)]; ok {
						out = append(out, exp)
					}
				}
				h[last] = out
			}
		}
	}
}

// spliceable reports whether the objects of class included at paths[pi]
// are replied as their stored bytes plus __type and className: every
// object the caller may get is visible (visible is nil: the master key, or
// no object of the class withholds public read), no pointer permission
// narrows the get, the reply shows the object as stored (no internal
// key, protected field, File url or Relation field to add), and no deeper
// include path writes into it.
func (s *Service) spliceable(class string, g *readGuard, visible func(schema.Object) bool, paths [][]string, pi int) bool {
	if visible != nil || !g.scope.Unrestricted() || !s.viewedAsStored(class, g) || !s.canShare(class, ReadOptions{}) {
		return false
	}
	path := paths[pi]
	for _, q := range paths[pi+1:] {
		if len(q) > len(path) && slices.Equal(q[:len(path)], path) {
			return false
		}
	}
	return true
}

// storedVersion is storedObject with the version an in-memory class
// holds (coll, nil for a class kept out of memory, whose ref is zero).
func (s *Service) storedVersion(class string, coll *index.Collection, id string) (schema.Object, index.Ref, bool) {
	if coll == nil || s.isSQLClass(class) {
		obj, ok := s.storedObject(class, id)
		return obj, index.Ref{}, ok
	}
	ref, ok := coll.Lookup(id)
	if !ok {
		return nil, ref, false
	}
	return ref.Object(), ref, true
}

// pointerRef names the object a Pointer points to.
type pointerRef struct{ class, id string }

func refOf(p map[string]any) pointerRef {
	c, _ := p["className"].(string)
	id, _ := p["objectId"].(string)
	return pointerRef{c, id}
}

func forEachPointer(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		if x["__type"] == "Pointer" {
			fn(x)
		}
	case []any:
		for _, e := range x {
			if p, ok := e.(map[string]any); ok && p["__type"] == "Pointer" {
				fn(p)
			}
		}
	}
}

// children returns the expanded objects found at key in each holder. The
// results are reply copies (from present), so expanding in place is safe.
func children(holders []schema.Object, key string) []schema.Object {
	var out []schema.Object
	for _, h := range holders {
		switch x := h[key].(type) {
		case map[string]any:
			if x["__type"] == "Object" {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				if m, ok := e.(map[string]any); ok && m["__type"] == "Object" {
					out = append(out, m)
				}
			}
		}
	}
	return out
}
