// Package scaleout holds the black-box tests of several Quarry instances on
// one PostgreSQL database: they build cmd/quarry, run three processes on a
// fresh database, drive concurrent clients round-robin through all of them,
// record every operation's call, return and result, and check the histories
// with a linearizability checker (porcupine) against small sequential models
// of the API. It has no code of its own beside its tests, and imports
// nothing of Quarry's but the test helper that makes a database: it speaks
// HTTP, WebSocket and SQL only. docs/scaling.md ("How it is tested") says
// what each test checks.
package scaleout
