package accounts

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// codeValidation is Parse's VALIDATION_ERROR: a password the policy refuses.
const codeValidation = 142

// CheckNewPassword applies passwordPolicy to the password a _User write
// sets (userID "" for a new user): the pattern, the validator function,
// the username rule and the history. The core calls it before the write
// takes any lock (service.PasswordPolicy), since the history compares
// bcrypt hashes and the validator runs cloud code.
func (x *Accounts) CheckNewPassword(userID string, body map[string]any, password string) error {
	acc := x.core.AccountOptions()
	if acc.PasswordPattern == nil && acc.PasswordValidator == "" && !acc.DoNotAllowUsername && acc.MaxPasswordHistory == 0 {
		return nil
	}
	var current schema.Object
	if userID != "" {
		current, _ = x.core.UserByID(userID)
	}
	username, ok := body["username"].(string)
	if !ok {
		username = str(current["username"])
	}
	if acc.PasswordPattern != nil && !acc.PasswordPattern.MatchString(password) {
		return x.policyRefusal()
	}
	if acc.PasswordValidator != "" && !x.passwordValidated(password, username) {
		return x.policyRefusal()
	}
	if acc.DoNotAllowUsername {
		if username != "" && strings.Contains(password, username) {
			return schema.Errorf(codeValidation, "Password cannot contain your username.")
		}
	}
	if acc.MaxPasswordHistory > 0 && current != nil {
		for _, hash := range recentHashes(current, acc.MaxPasswordHistory) {
			if service.PasswordMatches(hash, password) {
				return schema.Errorf(codeValidation, "New password should not be the same as last %d passwords.", acc.MaxPasswordHistory)
			}
		}
	}
	return nil
}

// policyRefusal is the answer to a password the pattern or the validator
// refuses.
func (x *Accounts) policyRefusal() error {
	msg := x.core.AccountOptions().PasswordPatternError
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
func (x *Accounts) passwordValidated(password, username string) bool {
	acc := x.core.AccountOptions()
	name := acc.PasswordValidator
	res, err := x.core.RunFunction(service.Auth{Master: true}, name, map[string]any{"password": password, "username": username})
	if err != nil {
		if warn := acc.Warn; warn != nil {
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
	hist, _ := user[schema.KeyPasswordHistory].([]any)
	for i := len(hist) - 1; i >= 0 && len(out) < n; i-- {
		if h, ok := hist[i].(string); ok {
			out = append(out, h)
		}
	}
	return out
}
