package sqlplan

import (
	"github.com/quarrydata/quarry/where"
)

// geoOp translates a geo operator on a GeoPoint column.
func (b *builder) geoOp(path string, t typed, op *where.Op) (string, error) {
	if op.Code == where.OpExists {
		if op.Exists {
			return b.present(t), nil
		}
		return not(b.present(t)), nil
	}
	return "", unsupported(b.class, "%s on %q", op.Code, path)
}

// nearOf is the distance order of a $nearSphere, "" when there is none.
func nearOf(tree *where.Node) string { return "" }
