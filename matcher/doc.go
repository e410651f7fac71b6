// Package matcher compiles a where constraint tree into a predicate over one
// object, with Parse's (MongoDB's) semantics, and orders objects by a sort
// list. The planner uses it as the residual filter and LiveQuery to test the
// original and the new version of a changed object.
//
// It is a pure leaf: no I/O and no globals. Subqueries and relations are
// resolved through a Resolver the caller supplies, once, at compile time.
package matcher
