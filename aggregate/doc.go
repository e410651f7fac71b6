// Package aggregate compiles and evaluates Parse aggregate pipelines
// ($match, $group, $project, $sort, $limit, $skip, $unwind, $count,
// $sample) over objects in memory, with Parse's spelling: the group key is
// objectId (MongoDB's _id is accepted too) and stage names may omit the $.
//
// It is pure: no I/O, no globals; it imports only schema, matcher and
// where. The service hands a pipeline's leading $match, $sort,
// $skip and $limit (see Pipeline.Prefix) to the planner, so indexes serve
// them, and runs the rest here.
package aggregate
