// Package live is Quarry's LiveQuery front end: Parse's LiveQuery protocol
// over WebSocket (fasthttp/websocket), per-client visibility (ACL, CLP,
// protected fields, roles, session expiry), fan-out through bounded
// per-client send queues, and the feed of changes from REST servers,
// in-process or through a Redis stream for several instances.
//
// Matching itself is pure and lives in live/match. live never touches the
// store (it reads through the service, or is handed changes), and speaks
// REST only in standalone mode, to ask a REST server about session tokens,
// roles and field types.
package live
