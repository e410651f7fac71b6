// Package durability holds black-box crash tests: they build cmd/quarry, run
// it as a child process on an on-disk database, SIGKILL it mid-load, restart
// it and check that every acknowledged write survived. It imports nothing of
// Quarry's and speaks only HTTP. Limit: SIGKILL leaves the kernel's page cache
// intact, so these tests catch acks sent before the data reaches write(2), not
// acks sent between write(2) and fsync; that needs a real power cut (a VM
// reset, or a dm-flakey / dm-log-writes device that drops unsynced blocks).
package durability
