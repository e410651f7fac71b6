package service

import (
	"maps"
	"reflect"
	"slices"
	"strings"
)

// logInAsStored is a log-in with authData under allowExpiredAuthDataToken:
// when every provider's entry is exactly what the linked user has stored,
// the user logs in without the providers being asked again (their tokens
// may have expired since). done is false when the log-in must take the
// checked path: an entry differs, a provider is off, or no user is linked.
func (s *Service) logInAsStored(a Auth, logins map[string]any, mfa any) (out AuthDataSignUp, done bool, err error) {
	plan := &authPlan{set: map[string]map[string]any{}}
	for p, v := range logins {
		entry, ok := v.(map[string]any)
		if !ok || !s.opts.Auth.Enabled(p) {
			return out, false, nil
		}
		plan.set[p] = entry
	}
	user, err := s.linkedUser(plan)
	if err != nil || user == nil {
		return out, false, nil
	}
	stored, _ := user["authData"].(map[string]any)
	for p, entry := range plan.set {
		if !reflect.DeepEqual(stored[p], any(entry)) {
			return out, false, nil
		}
	}
	out, err = s.logInWithAuthData(a, user, plan, mfa, strings.Join(slices.Sorted(maps.Keys(plan.set)), ","))
	return out, true, err
}
