// Package schema is Quarry's shared vocabulary: the Parse value model (objects,
// special __type values, field types), Parse errors with their codes, class and
// key name rules, per-class schemas with type lock-in, and the validation of
// class-level permissions (which classes' permissions are fixed, too).
//
// It imports nothing of Quarry's; every other package may import it.
package schema
