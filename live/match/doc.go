// Package match is LiveQuery's pure matching core: it compiles a
// subscription's query with the planner's parser and matcher, indexes
// subscriptions by class, equality constraints and geo cells so that a
// change is tested only against the subscriptions it could match, and
// decides which event (create, enter, update, leave, delete) a change is.
//
// It does no I/O, starts no goroutines and knows nothing of WebSockets,
// sessions or Redis; package live does.
package match
