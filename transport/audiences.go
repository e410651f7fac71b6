package transport

import (
	"encoding/json"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// audienceRoutes serve push audiences (Parse Dashboard's saved installation
// queries): master-key CRUD on _Audience, whose query is stored as a JSON
// string and returned parsed.
func audienceRoutes() []route {
	return []route{
		{method: "GET", pattern: "/push_audiences", fn: masterOnly(parseAudienceQueries(classFind(service.ClassAudience)))},
		{method: "POST", pattern: "/push_audiences", fn: masterOnly(classCreate(service.ClassAudience, "/push_audiences/"))},
		{method: "GET", pattern: "/push_audiences/{objectId}", fn: masterOnly(parseAudienceQueries(classGet(service.ClassAudience)))},
		{method: "PUT", pattern: "/push_audiences/{objectId}", fn: masterOnly(classUpdate(service.ClassAudience))},
		{method: "DELETE", pattern: "/push_audiences/{objectId}", fn: masterOnly(classDelete(service.ClassAudience))},
	}
}

func masterOnly(fn endpoint) endpoint {
	return func(s *Server, c *call) (any, error) {
		if err := requireMaster(c); err != nil {
			return nil, err
		}
		return fn(s, c)
	}
}

// parseAudienceQueries turns each audience's stored query string into the
// object it holds, as Parse returns it.
func parseAudienceQueries(fn endpoint) endpoint {
	return func(s *Server, c *call) (any, error) {
		out, err := fn(s, c)
		if err != nil {
			return nil, err
		}
		switch b := out.(type) {
		case findBody:
			for i, o := range b.c.found.Results {
				b.c.found.Results[i] = withParsedQuery(o)
			}
			return b, nil
		case objectBody:
			b.c.found.Results[0] = withParsedQuery(b.c.found.Results[0])
			return b, nil
		}
		m, _ := out.(map[string]any)
		return withParsedQuery(m), nil
	}
}

// withParsedQuery returns o with its query string parsed (a copy: find
// results may be the stored objects).
func withParsedQuery(o schema.Object) schema.Object {
	q, ok := o["query"].(string)
	var parsed map[string]any
	if !ok || json.Unmarshal([]byte(q), &parsed) != nil {
		return o
	}
	cp := schema.CopyObject(o)
	cp["query"] = parsed
	return cp
}

// graphQLConfigRoutes keep the GraphQL configuration Parse Dashboard edits
// (its use waits for the GraphQL API).
func graphQLConfigRoutes() []route {
	return []route{
		{method: "GET", pattern: "/graphql-config", fn: masterOnly(getGraphQLConfig)},
		{method: "PUT", pattern: "/graphql-config", fn: masterOnly(putGraphQLConfig)},
	}
}

func getGraphQLConfig(s *Server, c *call) (any, error) {
	return s.svc.GraphQLConfig()
}

func putGraphQLConfig(s *Server, c *call) (any, error) {
	params, ok := c.body["params"].(map[string]any)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "graphql-config needs {\"params\": {...}}")
	}
	if err := s.svc.SetGraphQLConfig(c.auth, params); err != nil {
		return nil, err
	}
	return map[string]any{"response": map[string]any{"result": true}}, nil
}
