package transport

import (
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Pusher sends a push (push.Sender): it validates the body, records a
// _PushStatus and returns its id; delivery happens in the background.
type Pusher interface {
	Send(auth service.Auth, body map[string]any) (string, error)
}

// pushRoutes serve POST /push (master key only). _PushStatus objects are
// read through /classes/_PushStatus like any master-only class.
func pushRoutes() []route {
	return []route{{method: "POST", pattern: "/push", fn: masterOnly(sendPush)}}
}

func sendPush(s *Server, c *call) (any, error) {
	if s.opts.Push == nil {
		return nil, schema.Errorf(schema.CodePushMisconfigured,
			"Push controller is not set: configure push.adapter (see docs/push.md).")
	}
	id, err := s.opts.Push.Send(c.auth, c.body)
	if err != nil {
		return nil, err
	}
	c.headers = append(c.headers, [2]string{"X-Parse-Push-Status-Id", id})
	return map[string]any{"result": true}, nil
}
