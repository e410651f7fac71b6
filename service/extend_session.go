package service

import (
	"github.com/quarrydata/quarry/schema"
)

// extendSession moves a session's expiry to a full sessionLength from now
// once less than half of it is left (extendSessionOnUse): a session in
// steady use never expires, and a busy client costs one write per half
// life, not one per request. The request that finds the session past half
// its life writes the new expiry before it goes on (once per half life);
// requests arriving meanwhile do not wait for it.
func (s *Service) extendSession(sess schema.Object, expiresISO string) {
	length := s.opts.SessionLength
	if length <= 0 {
		length = SessionLength
	}
	exp, ok := schema.ParseTime(expiresISO)
	now := s.opts.Now()
	if !ok || exp.Sub(now) >= length/2 {
		return
	}
	id, _ := sess["objectId"].(string)
	if _, busy := s.extending.LoadOrStore(id, true); busy {
		return
	}
	defer s.extending.Delete(id)
	_, err := s.write(Auth{Master: true, internal: true},
		[]WriteOp{{Method: MethodUpdate, Class: classSession, ID: id, Body: map[string]any{"expiresAt": dateValue(now.Add(length))}, quiet: true}}, true)
	if err != nil && s.opts.Warn != nil {
		s.opts.Warn("extendSessionOnUse: the session's expiry was not moved: " + err.Error())
	}
}
