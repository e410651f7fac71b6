// Package engine benchmarks Quarry's query engine in-process: a service
// over an in-memory store holding 100,000 objects, queried through
// service.Find exactly as the REST layer calls it (planner, indexes,
// matcher, include, presentation), without HTTP. Results are in
// ../README.md.
package engine
