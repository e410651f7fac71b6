package transport

import "github.com/valyala/fasthttp"

// SecurityReport is the security option's check report, made by the
// server from its configuration: GET /security answers it (master key).
type SecurityReport struct {
	Version string          `json:"version"`
	State   string          `json:"state"` // "success" or "fail"
	Groups  []SecurityGroup `json:"groups"`
}

// SecurityGroup is a named group of checks.
type SecurityGroup struct {
	Name   string          `json:"name"`
	State  string          `json:"state"`
	Checks []SecurityCheck `json:"checks"`
}

// SecurityCheck is one check: its state, what is at risk, what to do.
type SecurityCheck struct {
	Title    string `json:"title"`
	State    string `json:"state"`
	Warning  string `json:"warning"`
	Solution string `json:"solution"`
}

func securityRoutes() []route {
	return []route{{method: "GET", pattern: "/security", fn: getSecurity}}
}

// errSecurityOff is Parse Server's answer while security.enableCheck is off.
var errSecurityOff = errHTTP{fasthttp.StatusConflict, "Enable Parse Server option `security.enableCheck` to run security check."}

func getSecurity(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	if s.opts.Security == nil {
		return nil, errSecurityOff
	}
	return map[string]any{"report": s.opts.Security}, nil
}
