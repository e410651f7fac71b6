package transport

import (
	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/installations"
)

// installationRoutes serve /installations; /classes/_Installation reaches
// the same handlers through the object routes.
func installationRoutes() []route {
	bind := func(fn endpoint) endpoint {
		return func(s *Server, c *call) (any, error) {
			c.params.set("className", "_Installation")
			return fn(s, c)
		}
	}
	return []route{
		{method: "GET", pattern: "/installations", fn: bind(findInstallations), batchable: true},
		{method: "POST", pattern: "/installations", fn: bind(createInstallation), batchable: true},
		{method: "GET", pattern: "/installations/{objectId}", fn: bind(getObject), batchable: true},
		{method: "PUT", pattern: "/installations/{objectId}", fn: bind(updateInstallation), batchable: true},
		{method: "DELETE", pattern: "/installations/{objectId}", fn: bind(deleteInstallation), batchable: true},
	}
}

// createInstallation answers a create: 201 with a Location for a new
// installation; 200 {objectId, updatedAt} when the save named an existing
// one (Parse answers {updatedAt}; the objectId tells SDKs which object
// they now hold).
func createInstallation(s *Server, c *call) (any, error) {
	res, err := s.installs.SaveInstallation(c.auth, "", c.body)
	if err != nil {
		return nil, err
	}
	return installationReply(c, res), nil
}

func updateInstallation(s *Server, c *call) (any, error) {
	res, err := s.installs.SaveInstallation(c.auth, c.params.get("objectId"), c.body)
	if err != nil {
		return nil, err
	}
	out := installationReply(c, res)
	if res.ObjectID == c.params.get("objectId") {
		delete(out, "objectId") // a plain update answers {updatedAt}
	}
	return out, nil
}

func installationReply(c *call, res installations.InstallationResult) map[string]any {
	if res.Created {
		c.status = fasthttp.StatusCreated
		c.location = c.base + "/classes/_Installation/" + res.ObjectID
		out := map[string]any{"objectId": res.ObjectID, "createdAt": res.CreatedAt}
		for k, v := range res.Echo {
			out[k] = v
		}
		return out
	}
	out := map[string]any{"objectId": res.ObjectID}
	for k, v := range res.Reply {
		out[k] = v
	}
	return out
}

func findInstallations(s *Server, c *call) (any, error) {
	p, err := findParams(c.allParams())
	if err != nil {
		return nil, err
	}
	p.ReadAfterWrites = c.readAfterWrites
	res, err := s.installs.FindInstallations(c.auth, p)
	if err != nil {
		return nil, err
	}
	return c.findReply(res), nil
}

func deleteInstallation(s *Server, c *call) (any, error) {
	return map[string]any{}, s.installs.DeleteInstallation(c.auth, c.params.get("objectId"))
}
