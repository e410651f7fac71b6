package access

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// CheckQuery refuses a where, or sort keys, naming a field protected from
// the caller whatever the object: the results would reveal it. Sort keys
// are paths; "$score" and a leading "-" are allowed.
func (r *Reader) CheckQuery(where map[string]any, order []string) error {
	protected := r.Protected(nil)
	if err := CheckQueryable(r.p.class, where, protected); err != nil {
		return err
	}
	for _, k := range order {
		k = strings.TrimPrefix(k, "-")
		if k == "$score" {
			continue
		}
		if err := CheckQueryable(r.p.class, map[string]any{k: nil}, protected); err != nil {
			return err
		}
	}
	return nil
}

// CheckQueryable refuses a where that constrains one of the protected
// fields of class (by its root, for a dot path).
func CheckQueryable(class string, where map[string]any, protected []string) error {
	if len(protected) == 0 {
		return nil
	}
	return EachWhereField(where, func(k string, _ any) error {
		root, _, _ := strings.Cut(k, ".")
		for _, p := range protected {
			if p == root {
				return schema.Errorf(schema.CodeOperationForbidden, "This user is not allowed to query %s on class %s", root, class)
			}
		}
		return nil
	})
}

// EachWhereField calls fn with every field key of a where and its
// constraint, descending into $or, $and and $nor, until fn fails.
func EachWhereField(where map[string]any, fn func(key string, constraint any) error) error {
	for k, v := range where {
		switch k {
		case "$or", "$and", "$nor":
			arr, _ := v.([]any)
			for _, b := range arr {
				if m, ok := b.(map[string]any); ok {
					if err := EachWhereField(m, fn); err != nil {
						return err
					}
				}
			}
			continue
		}
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}
