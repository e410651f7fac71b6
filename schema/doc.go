// Package schema is Quarry's shared vocabulary: the Parse value model (objects,
// special __type values, field types), Parse errors with their codes, class and
// key name rules, and per-class schemas with type lock-in.
//
// It imports nothing of Quarry's; every other package may import it.
package schema
