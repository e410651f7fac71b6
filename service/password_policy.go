package service

import (
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/quarrydata/quarry/schema"
)

// checkNewPassword applies passwordPolicy to the password a _User write
// sets: the pattern, the username rule and the history. It runs before
// write takes any lock, since the history compares bcrypt hashes.
func (s *Service) checkNewPassword(op WriteOp, password string) error {
	acc := &s.opts.Accounts
	if acc.PasswordPattern == nil && acc.PasswordValidator == "" && !acc.DoNotAllowUsername && acc.MaxPasswordHistory == 0 {
		return nil
	}
	var current schema.Object
	if op.Method == MethodUpdate {
		current, _ = s.userByID(op.ID)
	}
	username, ok := op.Body["username"].(string)
	if !ok {
		username = str(current["username"])
	}
	if acc.PasswordPattern != nil && !acc.PasswordPattern.MatchString(password) {
		return s.policyRefusal()
	}
	if acc.PasswordValidator != "" && !s.passwordValidated(password, username) {
		return s.policyRefusal()
	}
	if acc.DoNotAllowUsername {
		if username != "" && strings.Contains(password, username) {
			return schema.Errorf(codeValidation, "Password cannot contain your username.")
		}
	}
	if acc.MaxPasswordHistory > 0 && current != nil {
		for _, hash := range recentHashes(current, acc.MaxPasswordHistory) {
			if bcrypt.CompareHashAndPassword([]byte(hash), bcryptInput(password)) == nil {
				return schema.Errorf(codeValidation, "New password should not be the same as last %d passwords.", acc.MaxPasswordHistory)
			}
		}
	}
	return nil
}

// policyRefusal is the answer to a password the pattern or the validator
// refuses.
func (s *Service) policyRefusal() error {
	msg := s.opts.Accounts.PasswordPatternError
	if msg == "" {
		msg = "Password does not meet the Password Policy requirements."
	}
	return schema.Errorf(codeValidation, "%s", msg)
}

// passwordValidated asks passwordPolicy's validator function, with the
// master key, whether it accepts a password: only a true result does. An
// error (a throw, or no such function) refuses it too, so that a
// misconfigured validator never lets weak passwords through; it is
// logged, without the password.
func (s *Service) passwordValidated(password, username string) bool {
	name := s.opts.Accounts.PasswordValidator
	res, err := s.RunFunction(Auth{Master: true}, name, map[string]any{"password": password, "username": username})
	if err != nil {
		if warn := s.opts.Accounts.Warn; warn != nil {
			msg := err.Error()
			if pe, ok := schema.AsError(err); ok {
				msg = pe.Message
			}
			warn("passwordPolicy.validatorCallback " + name + " refused a password with an error: " + strings.ReplaceAll(msg, password, "***"))
		}
		return false
	}
	ok, _ := res.(bool)
	return ok
}

// recentHashes are the current password hash and the older ones kept, at
// most n in all.
func recentHashes(user schema.Object, n int) []string {
	var out []string
	if h, _ := user[schema.KeyHashedPassword].(string); h != "" {
		out = append(out, h)
	}
	hist, _ := user[fieldPasswordHistory].([]any)
	for i := len(hist) - 1; i >= 0 && len(out) < n; i-- {
		if h, ok := hist[i].(string); ok {
			out = append(out, h)
		}
	}
	return out
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
