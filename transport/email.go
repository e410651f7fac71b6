package transport

// emailRoutes are the two email requests of the REST API; the pages the
// emailed links open are in pages.go.
func emailRoutes() []route {
	return []route{
		{method: "POST", pattern: "/verificationEmailRequest", fn: verificationEmailRequest},
		{method: "POST", pattern: "/requestPasswordReset", fn: requestPasswordReset},
	}
}

func verificationEmailRequest(s *Server, c *call) (any, error) {
	if err := s.accounts.RequestVerificationEmail(c.allParams()["email"]); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

func requestPasswordReset(s *Server, c *call) (any, error) {
	if err := s.accounts.RequestPasswordReset(c.allParams()["email"]); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}
