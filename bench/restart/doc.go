// Package restart benchmarks a start on existing data: opening the embedded
// store and loading every object into memory with its indexes (service.Open),
// the time during which /health answers "initialized" and data requests
// get 503. Its figure is seconds per million objects on this machine.
package restart
