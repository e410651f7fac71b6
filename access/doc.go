// Package access decides who may do what: the caller's keys, object ACLs,
// class-level permissions (CLP), pointer permissions and protected fields.
// It is pure: functions of (class policy, caller, object) with no store,
// no HTTP and no clock; it never imports service, live or transport.
// Used by service, live (standalone LiveQuery included) and, later, graphql.
package access
