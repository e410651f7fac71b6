// Package bench measures Quarry end to end through its real HTTP layer: an
// in-process server (servertest) on loopback, an on-disk buntdb store with
// group commit, and a fasthttp client. It holds only benchmarks; see
// README.md for how to run them and the latest numbers. It never reaches
// past HTTP into the service or the store.
package bench
