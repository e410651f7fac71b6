package transport

import (
	"net/url"

	"github.com/quarrydata/quarry/schema"
)

// analyticsRoutes count app opens and custom events; any client may send
// them.
func analyticsRoutes() []route {
	return []route{
		{method: "POST", pattern: "/events/{eventName}", fn: trackEvent, batchable: true},
	}
}

func trackEvent(s *Server, c *call) (any, error) {
	// The JS SDK puts the name into the path as it is ("Button Click"),
	// so it arrives percent-encoded.
	name, err := url.PathUnescape(c.params.get("eventName"))
	if err != nil {
		return nil, schema.Errorf(schema.CodeInvalidEventName, "Invalid event name: %q.", c.params.get("eventName"))
	}
	if err := s.svc.TrackEvent(c.auth, name, c.body); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}
