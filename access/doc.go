// Package access decides who may do what: keys, object ACLs, class-level
// permissions (CLP), pointer permissions and protected fields. It is pure:
// no store, no HTTP, no clock; it never imports service, live or transport.
// Compile a class's Policy once per schema version, then ask it CheckCLP,
// Read, CheckWrite. Used by service, live and (later) graphql.
package access
