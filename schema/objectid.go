package schema

import (
	"fmt"
	"regexp"
)

// MaxObjectIDLength bounds an objectId that comes from outside (a dump,
// or a client's own id under allowCustomObjectId): Parse Server makes ids
// of 10 characters (objectIdSize may raise that); 64 leaves room for UUIDs.
const MaxObjectIDLength = 64

// objectIDShape is what such an objectId may hold: letters, digits, '-'
// and '_'. Nothing that means something in a path, a store key
// ("Class:id", "owning:related") or a URL.
var objectIDShape = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ObjectIDProblem says why id cannot be an objectId, or "" when it can.
func ObjectIDProblem(id string) string {
	switch {
	case id == "":
		return "objectId is empty"
	case len(id) > MaxObjectIDLength:
		return fmt.Sprintf("objectId is longer than %d characters", MaxObjectIDLength)
	case !objectIDShape.MatchString(id):
		return "objectId holds characters other than letters, digits, - and _"
	}
	return ""
}
