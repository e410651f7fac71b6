package access

import (
	"slices"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// defaultProtected is DefaultProtected, made once (read only).
var defaultProtected = DefaultProtected()

// protectedSets are a class's protectedFields, keyed as in the CLP ("*",
// "authenticated", a user id, "role:..." or "userField:<field>").
type protectedSets struct {
	sets       map[string][]string
	userFields []string // the <field> of each "userField:<field>" key
}

// compileProtected merges a class's CLP protectedFields into the server's
// (defaults) for that class.
func compileProtected(defaults map[string][]string, clp map[string]any) protectedSets {
	sets := defaults
	if pf, ok := clp["protectedFields"].(map[string]any); ok {
		// A stored CLP adds to the server's defaults, as Parse Server
		// merges its protectedFields option into every class's CLP: a CLP
		// set for other reasons must not unhide users' emails.
		merged := map[string][]string{}
		for k, v := range sets {
			merged[k] = slices.Clone(v)
		}
		for k, v := range pf {
			for _, f := range stringList(v) {
				if !slices.Contains(merged[k], f) {
					merged[k] = append(merged[k], f)
				}
			}
			if _, ok := merged[k]; !ok {
				merged[k] = []string{}
			}
		}
		sets = merged
	}
	ps := protectedSets{sets: sets}
	for k := range sets {
		if f, ok := strings.CutPrefix(k, "userField:"); ok {
			ps.userFields = append(ps.userFields, f)
		}
	}
	slices.Sort(ps.userFields)
	return ps
}

// forCaller returns the sets that apply to the caller whatever the object.
func (ps protectedSets) forCaller(c Caller) [][]string {
	static := [][]string{}
	add := func(key string) {
		if set, ok := ps.sets[key]; ok {
			static = append(static, set)
		}
	}
	add("*")
	if c.UserID != "" {
		add("authenticated")
		add(c.UserID)
		for _, r := range c.Roles {
			add(r)
		}
	}
	return static
}

// fields is the intersection of every set that applies to the caller for
// obj: more specific entries can only reduce protection.
func (ps protectedSets) fields(static [][]string, userID string, obj schema.Object) []string {
	applicable := static
	for _, f := range ps.userFields {
		if fieldPointsTo(obj, f, userID) {
			applicable = append(applicable[:len(applicable):len(applicable)], ps.sets["userField:"+f])
		}
	}
	return intersect(applicable)
}

func intersect(sets [][]string) []string {
	if len(sets) == 0 {
		return nil
	}
	out := slices.Clone(sets[0])
	for _, set := range sets[1:] {
		keep := out[:0]
		for _, f := range out {
			if slices.Contains(set, f) {
				keep = append(keep, f)
			}
		}
		out = keep
	}
	return out
}
