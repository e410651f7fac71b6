package service

import "github.com/quarrydata/quarry/schema"

// Log-in and log-out triggers. Every way of logging in calls BeforeLogin
// before it opens the session and AfterLogin after; LogOut calls
// AfterLogout once the session is gone.

// BeforeLogin runs the beforeLogin trigger with the user about to log in
// (as the login reply shows it); its error refuses the log-in.
func (s *Service) BeforeLogin(a Auth, user schema.Object) error {
	if s.opts.Hooks == nil || !s.opts.Hooks.Has(BeforeLogin, classUser) {
		return nil
	}
	return s.opts.Hooks.Trigger(&TriggerRequest{Kind: BeforeLogin, Class: classUser, Object: hookView(user), Auth: a})
}

// AfterLogin runs the afterLogin trigger as the user now logged in with
// token; its error is logged, the log-in stands.
func (s *Service) AfterLogin(a Auth, user schema.Object, token string) {
	if s.opts.Hooks == nil || !s.opts.Hooks.Has(AfterLogin, classUser) {
		return
	}
	as := Auth{UserID: str(user["objectId"]), SessionToken: token, InstallationID: a.InstallationID, Request: a.Request}
	s.warnTrigger(s.opts.Hooks.Trigger(&TriggerRequest{Kind: AfterLogin, Class: classUser, Object: hookView(user), Auth: as}))
}

// AfterLogout runs the afterLogout trigger with the deleted session.
func (s *Service) AfterLogout(a Auth, session schema.Object) {
	if s.opts.Hooks == nil || !s.opts.Hooks.Has(AfterLogout, classSession) {
		return
	}
	s.warnTrigger(s.opts.Hooks.Trigger(&TriggerRequest{Kind: AfterLogout, Class: classSession, Object: hookView(session), Auth: a}))
}

func (s *Service) warnTrigger(err error) {
	if err != nil && s.opts.Warn != nil {
		s.opts.Warn("cloud trigger failed: " + err.Error())
	}
}
