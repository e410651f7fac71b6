// Package planner turns a parsed where (where) plus order, skip and
// limit into a plan over the in-memory indexes: index range and point
// scans, id lookups for $relatedTo and objectId, unions for $in and $or,
// semi-joins for $inQuery and $select, then the compiled matcher as the
// residual filter, and a sort served by an index or a top-k heap. Results
// come with the index.Refs the scans read them from, so the reply sends
// their stored bytes without looking them up again.
//
// A plan that would examine more than the scan budget with no index to
// narrow it is refused with error 154 before any work. planner defines the
// Collection interface it needs; index satisfies it without importing
// planner.
package planner
