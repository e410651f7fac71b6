// Package where parses a Parse `where` JSON object once into a validated,
// typed constraint tree (Node): field constraints with typed operators,
// $or/$and/$nor, $relatedTo and the subquery operators, with the error codes
// and messages Parse Server gives for malformed queries.
//
// Geo operands are geo.Points, the one GeoPoint type of the engine. Imports
// run one way: where <- matcher <- planner; where imports only schema and geo.
//
// It is pure: no I/O, no globals that change. It never resolves subqueries or
// relations (the planner does) and never evaluates anything (the matcher does).
package where
