// Package sqlplan translates a query on a class kept out of memory into
// parameterised PostgreSQL over the class's table (store.Querier): the same
// where language the in-memory planner runs, with the matcher's semantics
// (equality that reaches into arrays, ranges within one type rank, missing
// keys as null), the caller's ACL, the order with objectId as tie-break,
// and the 154 rule judged on PostgreSQL's own estimate.
//
// Values never enter the SQL text: they are bound as arguments. What has
// no exact SQL form ($text, word boundaries, Polygons, some orders) makes
// the statement a prefilter whose rows Go finishes with the in-memory
// matcher and order (Statement.Run); the rest that cannot be translated is
// refused with a Parse error naming it. It imports
// where, matcher (geo regions), geo, schema and store, never service; the
// service runs what it builds through store.Querier.
package sqlplan
