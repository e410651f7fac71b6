// Package graphql is Quarry's GraphQL front end: it generates a schema with
// Parse Server's naming from the current class schemas, parses and
// validates requests with gqlparser, and executes them by walking the
// validated AST and calling the same service functions as REST.
// Subscriptions run over graphql-transport-ws sockets, fed by an Events
// feed the server adapts from LiveQuery (graphql never imports live).
//
// graphql imports service and never the reverse; it speaks HTTP only
// through the fasthttp handler transport hands it, never through a loopback.
package graphql
