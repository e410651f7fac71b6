// Package fuzz owns Quarry's cross-package fuzzers: the whole query engine
// (service -> planner -> matcher -> index) against Reference, a plain
// evaluator of where clauses written from the specification alone, and
// fuzzers of HTTP bodies and LiveQuery frames against a real server.
//
// The reference must never import where, matcher or planner: it is the
// oracle that catches their bugs. Only the tests import the engine.
package fuzz
