// Package config owns the server's options and how they are read: built-in
// defaults, a JSON config file (Parse Server's option names), environment
// variables (QUARRY_* and Parse Server's PARSE_SERVER_*) and command-line flags,
// merged in that order into one Options value by Load.
//
// It imports nothing of Quarry's and does no I/O besides reading the config file.
package config
