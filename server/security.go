package server

import (
	"log/slog"
	"strings"
	"unicode"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/transport"
)

// Check states, as Parse Server names them.
const (
	checkSuccess = "success"
	checkFail    = "fail"
)

// securityReport runs the security option's checks over the
// configuration; nil when security.enableCheck is off. With enableCheck
// the failed checks are logged at start-up when enableCheckLog is set.
func securityReport(opts *config.Options, log *slog.Logger) *transport.SecurityReport {
	sec, _ := opts.Security["enableCheck"].(bool)
	if !sec {
		return nil
	}
	logIt, _ := opts.Security["enableCheckLog"].(bool)
	check := func(ok bool, title, warning, solution string) transport.SecurityCheck {
		state := checkSuccess
		if !ok {
			state = checkFail
		}
		return transport.SecurityCheck{Title: title, State: state, Warning: warning, Solution: solution}
	}
	groups := []transport.SecurityGroup{
		{Name: "Parse Server Configuration", Checks: []transport.SecurityCheck{
			check(strongKey(opts.MasterKey), "Secure master key",
				"The master key is short or simple: it is open to guessing.",
				"Choose a master key of at least 14 characters mixing upper and lower case letters, digits and other characters."),
			check(!logIt, "Security log disabled",
				"Security checks in the log tell anyone who reads the log where the server is weak.",
				"Set security.enableCheckLog to false."),
			check(!opts.AllowClientClassCreation, "Client class creation disabled",
				"Clients may create classes by writing to them, without the master key.",
				"Set allowClientClassCreation to false."),
			check(opts.EnforcePrivateUsers, "Users are created without public access",
				"New users are readable by everyone.",
				"Set enforcePrivateUsers to true."),
		}},
		{Name: "Database", Checks: []transport.SecurityCheck{
			check(!opts.AllowPublicExplain(), "Public database explain disabled",
				"Clients without the master key may explain queries, which tells them about the data and its indexes.",
				"Set databaseOptions.allowPublicExplain to false."),
		}},
	}
	report := &transport.SecurityReport{Version: "1.0.0", State: checkSuccess, Groups: groups}
	for i := range groups {
		groups[i].State = checkSuccess
		for _, c := range groups[i].Checks {
			if c.State == checkFail {
				groups[i].State, report.State = checkFail, checkFail
				if logIt {
					log.Warn("security check failed", "group", groups[i].Name, "check", c.Title, "warning", c.Warning, "solution", c.Solution)
				}
			}
		}
	}
	return report
}

// strongKey reports whether a key is at least 14 characters long and
// mixes upper and lower case letters, digits and other characters.
func strongKey(k string) bool {
	var upper, lower, digit, other bool
	for _, r := range k {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		default:
			other = true
		}
	}
	return len(k) >= 14 && upper && lower && digit && other && strings.TrimSpace(k) == k
}
