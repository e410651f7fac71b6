// Package fuzz owns Quarry's cross-package fuzzers: the query engine and
// LiveQuery's matcher against Reference, a plain where evaluator written
// from the specification alone (it must never import where, matcher or
// planner: it is their oracle), and fuzzers of HTTP bodies and LiveQuery
// frames against a real server. Only the tests import the engine.
package fuzz
