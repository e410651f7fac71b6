package transport

import (
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// schemaRoutes are the schemas API and purge; every route needs the
// master key (a read-only master key reads, and its writes fail with 119).
func schemaRoutes() []route {
	return []route{
		{method: "GET", pattern: "/schemas", fn: listSchemas},
		{method: "GET", pattern: "/schemas/{className}", fn: getSchema},
		{method: "POST", pattern: "/schemas", fn: createSchema},
		{method: "POST", pattern: "/schemas/{className}", fn: createSchema},
		{method: "PUT", pattern: "/schemas/{className}", fn: updateSchema},
		{method: "DELETE", pattern: "/schemas/{className}", fn: deleteSchema},
		{method: "DELETE", pattern: "/purge/{className}", fn: purgeClass},
	}
}

func listSchemas(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	return map[string]any{"results": s.svc.Schemas()}, nil
}

func getSchema(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	return s.svc.Schema(c.params.get("className"))
}

func createSchema(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	if s.opts.LockSchemas {
		return nil, errSchemasLocked
	}
	class, err := service.SchemaClassName(c.params.get("className"), c.body)
	if err != nil {
		return nil, err
	}
	return s.svc.CreateSchema(c.auth, class, c.body)
}

func updateSchema(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	if s.opts.LockSchemas {
		return nil, errSchemasLocked
	}
	class, err := service.SchemaClassName(c.params.get("className"), c.body)
	if err != nil {
		return nil, err
	}
	return s.svc.UpdateSchema(c.auth, class, c.body)
}

func deleteSchema(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	if s.opts.LockSchemas {
		return nil, errSchemasLocked
	}
	return map[string]any{}, s.svc.DeleteSchema(c.auth, c.params.get("className"))
}

func purgeClass(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	return map[string]any{}, s.svc.Purge(c.auth, c.params.get("className"))
}

// errSchemasLocked refuses schema changes under the schema option's
// lockSchemas, with Parse Server's message.
var errSchemasLocked = schema.Errorf(schema.CodeOperationForbidden, "Cannot perform this operation when schemas options is used.")
