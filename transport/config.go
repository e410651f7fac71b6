package transport

// configRoutes serve Parse Config: any client reads it (master-only
// parameters hidden), the master key changes it.
func configRoutes() []route {
	return []route{
		{method: "GET", pattern: "/config", fn: getConfig},
		{method: "PUT", pattern: "/config", fn: putConfig},
	}
}

func getConfig(s *Server, c *call) (any, error) {
	return s.svc.Config(c.auth), nil
}

func putConfig(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	if err := s.svc.UpdateConfig(c.auth, c.body); err != nil {
		return nil, err
	}
	return map[string]any{"result": true}, nil
}
