package service

import "github.com/quarrydata/quarry/schema"

// checkNewPassword has the registered PasswordPolicy (package accounts)
// judge the password a _User write sets, before write takes any lock.
func (s *Service) checkNewPassword(op WriteOp, password string) error {
	if s.passwordPolicy == nil {
		return nil
	}
	userID := ""
	if op.Method == MethodUpdate {
		userID = op.ID
	}
	return s.passwordPolicy.CheckNewPassword(userID, op.Body, password)
}

// rememberPassword records a password change on the draft: when it
// happened (maxPasswordAge) and the replaced hash (maxPasswordHistory,
// which keeps n-1 old hashes beside the current one).
func (s *Service) rememberPassword(d *draft) {
	acc := &s.opts.Accounts
	d.obj[fieldPasswordChangedAt] = dateValue(s.opts.Now())
	if acc.MaxPasswordHistory <= 1 {
		delete(d.obj, fieldPasswordHistory)
		return
	}
	old, _ := d.original[schema.KeyHashedPassword].(string)
	if old == "" {
		return
	}
	prev, _ := d.original[fieldPasswordHistory].([]any)
	hist := append(append([]any{}, prev...), old)
	if keep := acc.MaxPasswordHistory - 1; len(hist) > keep {
		hist = hist[len(hist)-keep:]
	}
	d.obj[fieldPasswordHistory] = hist
}
