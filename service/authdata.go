package service

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
)

// Third-party sign-in: a _User's authData holds one entry per linked
// provider ({id, credential…}). A write naming authData has its entries
// checked by the provider adapters (auth) before any lock is taken, since
// that asks the provider over the network; the checked entries are then
// merged into the stored authData under the write's locks, where an id
// already linked to another user fails with 208.

// authPlan is a _User write's authData, checked before the write's locks.
type authPlan struct {
	set      map[string]map[string]any // provider -> entry to store
	unlink   []string                  // providers set to null
	clearAll bool                      // the master key deleted authData
	mfa      *mfaEnrolment             // authData.mfa set up
	response map[string]any            // authDataResponse of the reply
	// spendRecovery is the hash of an MFA recovery code a login used.
	spendRecovery string
	// spendSMS is the hash of an SMS code a login used.
	spendSMS string
}

// respond adds a provider's part of authDataResponse.
func (p *authPlan) respond(provider string, v any) {
	if p.response == nil {
		p.response = map[string]any{}
	}
	p.response[provider] = v
}

var errAuthAlreadyUsed = schema.Errorf(auth.CodeAccountAlreadyLinked, "this auth is already used")

// checkAuthData plans the authData of every _User write in ops (the ones
// SignUpWithAuthData planned already excepted).
func (s *Service) checkAuthData(a Auth, ops []WriteOp) error {
	for i := range ops {
		op := &ops[i]
		if op.Class != classUser || op.Method == MethodDelete || op.authPlan != nil {
			continue
		}
		for k := range op.Body {
			if strings.HasPrefix(k, "authData.") {
				return schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", k)
			}
		}
		raw, has := op.Body["authData"]
		if !has {
			continue
		}
		var stored map[string]any
		if op.Method == MethodUpdate {
			u, _ := s.userByID(op.ID)
			stored, _ = u["authData"].(map[string]any)
		}
		plan, err := s.planAuthData(a, op.ID, raw, stored)
		if err != nil {
			return err
		}
		op.authPlan = plan
	}
	return nil
}

// planAuthData validates a body's authData value against the stored one.
// Entries equal to the stored ones are not asked about again.
func (s *Service) planAuthData(a Auth, userID string, raw any, stored map[string]any) (*authPlan, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, auth.ErrUnsupported
	}
	plan := &authPlan{set: map[string]map[string]any{}}
	if op, isOp := m["__op"]; isOp {
		if op == "Delete" && a.Master {
			plan.clearAll = true
			return plan, nil
		}
		return nil, auth.ErrUnsupported
	}
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if m[p] == nil {
			plan.unlink = append(plan.unlink, p)
			continue
		}
		entry, ok := m[p].(map[string]any)
		if !ok {
			return nil, schema.Errorf(auth.CodeInvalidAuthData, "authData.%s must be an object.", p)
		}
		if p == auth.MFA {
			enrol, err := s.planMFA(a, userID, entry)
			if err != nil {
				return nil, err
			}
			plan.mfa = enrol
			if enrol != nil && enrol.response() != nil {
				plan.respond(auth.MFA, enrol.response())
			}
			continue
		}
		if a.Master && !a.internal {
			// The master key writes authData as given (imports, migrations).
			plan.set[p] = entry
			continue
		}
		if !s.opts.Auth.Enabled(p) {
			return nil, auth.ErrUnsupported
		}
		if old, ok := stored[p]; ok && reflect.DeepEqual(old, entry) {
			plan.set[p] = entry
			continue
		}
		res, err := s.opts.Auth.Validate(context.Background(), p, entry)
		if err != nil {
			return nil, err
		}
		plan.set[p] = entry
		if res.Store != nil {
			plan.set[p] = res.Store
		}
		if res.Response != nil {
			plan.respond(p, res.Response)
		}
	}
	return plan, nil
}

// authDataRules merges a write's planned authData into the stored one,
// under the write's locks, and turns an anonymous user who sets a password
// into a regular one.
func (s *Service) authDataRules(d *draft, plan *authPlan, body map[string]any) error {
	orig, _ := d.original["authData"].(map[string]any)
	_, setsPassword := body["password"]
	upgrade := setsPassword && orig[auth.Anonymous] != nil && (plan == nil || plan.set[auth.Anonymous] == nil)
	if plan == nil && !upgrade {
		return nil
	}
	merged := maps.Clone(orig)
	if merged == nil {
		merged = map[string]any{}
	}
	if upgrade {
		delete(merged, auth.Anonymous) // the anonymous user signed up
	}
	if plan != nil {
		if err := s.applyAuthPlan(d, plan, merged); err != nil {
			return err
		}
	}
	if len(merged) > 0 {
		d.obj["authData"] = merged
	} else {
		delete(d.obj, "authData")
	}
	return nil
}

// applyAuthPlan applies a checked plan to the authData being written.
func (s *Service) applyAuthPlan(d *draft, plan *authPlan, merged map[string]any) error {
	if plan.clearAll {
		clear(merged)
		clearMFA(d)
	}
	for _, p := range plan.unlink {
		delete(merged, p)
		if p == auth.MFA {
			clearMFA(d)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(plan.set)) {
		entry := plan.set[p]
		if id, ok := linkID(entry); ok {
			if other, taken := s.findOne(classUser, "authData."+p+".id", id); taken && other["objectId"] != d.id {
				return errAuthAlreadyUsed
			}
		}
		merged[p] = entry
	}
	if plan.mfa != nil {
		plan.mfa.apply(d, merged)
	}
	if plan.response != nil {
		d.setEcho("authDataResponse", plan.response)
	}
	if plan.spendRecovery != "" {
		return spendRecoveryCode(d, plan.spendRecovery)
	}
	if plan.spendSMS != "" {
		return spendSMSCode(d, plan.spendSMS)
	}
	return nil
}

// authDataKeys are the lock keys of the provider ids a _User write links,
// so two sign-ups with one new id run one after the other.
func authDataKeys(op WriteOp) []string {
	var keys []string
	if op.authPlan != nil {
		for p, entry := range op.authPlan.set {
			if id, ok := entry["id"].(string); ok {
				keys = append(keys, "\x01auth\x00"+p+"\x00"+id)
			}
		}
		return keys
	}
	ad, _ := op.Body["authData"].(map[string]any)
	for p, v := range ad {
		entry, _ := v.(map[string]any)
		if id, ok := entry["id"].(string); ok {
			keys = append(keys, "\x01auth\x00"+p+"\x00"+id)
		}
	}
	return keys
}

// AuthDataSignUp is the outcome of POST /users with authData: a new user
// (Created), or a login of the user the authData is linked to.
type AuthDataSignUp struct {
	Created bool
	// Create is the new user's id and creation time (Created).
	Create       CreateResult
	SessionToken string
	// Username is the name made up for a new user whose body gave none.
	Username string
	// User is the logged-in user as login shows it, with sessionToken
	// (!Created).
	User schema.Object
	// Response is authDataResponse (nil: none).
	Response map[string]any
}

// usernameLength is the length of the username made up for a user who
// signs up with authData alone.
const usernameLength = 25

// SignUpWithAuthData signs up or logs in with third-party authData: the
// user already linked to the authData logs in, anyone else is created.
func (s *Service) SignUpWithAuthData(a Auth, body map[string]any) (AuthDataSignUp, error) {
	m, ok := body["authData"].(map[string]any)
	if !ok {
		return AuthDataSignUp{}, auth.ErrUnsupported
	}
	if _, isOp := m["__op"]; isOp {
		return AuthDataSignUp{}, auth.ErrUnsupported
	}
	logins := map[string]any{}
	for p, v := range m {
		if v != nil && p != auth.MFA {
			logins[p] = v
		}
	}
	if len(logins) == 0 {
		// Nothing to sign in with: an ordinary sign-up.
		rest := maps.Clone(body)
		delete(rest, "authData")
		res, token, err := s.SignUp(a, rest)
		return AuthDataSignUp{Created: true, Create: res, SessionToken: token}, err
	}
	if s.opts.AllowExpiredAuthDataToken {
		if out, done, err := s.logInAsStored(a, logins, m[auth.MFA]); done { // authdata_expired.go
			return out, err
		}
	}
	plan, err := s.planAuthData(a, "", logins, nil)
	if err != nil {
		return AuthDataSignUp{}, err
	}
	providers := strings.Join(slices.Sorted(maps.Keys(plan.set)), ",")
	user, err := s.linkedUser(plan)
	if err != nil {
		return AuthDataSignUp{}, err
	}
	if user != nil {
		return s.logInWithAuthData(a, user, plan, m[auth.MFA], providers)
	}
	rest := maps.Clone(body)
	out := AuthDataSignUp{Created: true, Response: plan.response}
	if u, _ := rest["username"].(string); u == "" {
		out.Username = randomAlnum(usernameLength)
		rest["username"] = out.Username
	}
	res, err := s.write(a, []WriteOp{{Method: MethodCreate, Class: classUser, Body: rest, authPlan: plan}}, true)
	if err == nil {
		err = res[0].Err
	}
	if errors.Is(err, errAuthAlreadyUsed) {
		// A sign-up with the same authData won the race: log into its user.
		if user, _ = s.linkedUser(plan); user != nil {
			return s.logInWithAuthData(a, user, plan, m[auth.MFA], providers)
		}
	}
	if err != nil {
		return AuthDataSignUp{}, err
	}
	out.Create = res[0].Create
	sess, err := s.createSession(out.Create.ObjectID, a.InstallationID,
		map[string]any{"action": "login", "authProvider": providers}, nil)
	if err != nil {
		return AuthDataSignUp{}, err
	}
	out.SessionToken = sess["sessionToken"].(string)
	return out, nil
}

// linkedUser finds the one user a plan's providers are linked to (nil:
// none); providers linked to different users are 208.
func (s *Service) linkedUser(plan *authPlan) (schema.Object, error) {
	var user schema.Object
	for _, p := range slices.Sorted(maps.Keys(plan.set)) {
		id, ok := linkID(plan.set[p])
		if !ok {
			continue // authData without an id (a custom adapter's) links no one
		}
		u, found := s.findOne(classUser, "authData."+p+".id", id)
		if !found {
			continue
		}
		if user != nil && user["objectId"] != u["objectId"] {
			return nil, errAuthAlreadyUsed
		}
		user = u
	}
	return user, nil
}

// logInWithAuthData opens a session for the user linked to the authData,
// after the user's second factor, keeping refreshed credentials.
func (s *Service) logInWithAuthData(a Auth, user schema.Object, plan *authPlan, mfa any, providers string) (AuthDataSignUp, error) {
	uid := user["objectId"].(string)
	if a.UserID != "" && a.UserID != uid {
		return AuthDataSignUp{}, errAuthAlreadyUsed
	}
	if acl, isMap := user["ACL"].(map[string]any); isMap && len(acl) == 0 && !a.Master {
		return AuthDataSignUp{}, schema.Errorf(schema.CodeObjectNotFound, "Invalid username/password.")
	}
	if err := s.checkLoginMFA(user, mfa); err != nil {
		return AuthDataSignUp{}, err
	}
	stored, _ := user["authData"].(map[string]any)
	for p, entry := range plan.set {
		if !reflect.DeepEqual(stored[p], any(entry)) {
			// A refreshed credential is kept (the plan is already checked).
			keep := &authPlan{set: plan.set}
			if _, err := s.write(Auth{Master: true, internal: true},
				[]WriteOp{{Method: MethodUpdate, Class: classUser, ID: uid, Body: map[string]any{}, authPlan: keep}}, true); err != nil {
				return AuthDataSignUp{}, err
			}
			break
		}
	}
	if err := s.BeforeLogin(a, s.present(classUser, user, ReadOptions{}, nil)); err != nil {
		return AuthDataSignUp{}, err
	}
	sess, err := s.createSession(uid, a.InstallationID, map[string]any{"action": "login", "authProvider": providers}, nil)
	if err != nil {
		return AuthDataSignUp{}, err
	}
	fresh, ok := s.userByID(uid)
	if !ok {
		return AuthDataSignUp{}, schema.ErrObjectNotFound
	}
	out := s.present(classUser, fresh, ReadOptions{}, nil)
	out["sessionToken"] = sess["sessionToken"]
	s.AfterLogin(a, out, str(sess["sessionToken"]))
	if plan.response != nil {
		out["authDataResponse"] = plan.response
	}
	return AuthDataSignUp{User: out, SessionToken: sess["sessionToken"].(string), Response: plan.response}, nil
}

// authDataIndexes are the paths of the provider ids users are found by.
func authDataIndexes(r *auth.Registry) []string {
	var paths []string
	for _, p := range r.Providers() {
		if p != auth.MFA {
			paths = append(paths, "authData."+p+".id")
		}
	}
	return paths
}

// randomAlnum is n random letters and digits from crypto/rand.
func randomAlnum(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]byte, 0, n)
	var raw [64]byte
	for len(out) < n {
		randRead(raw[:])
		for _, b := range raw {
			if b < 248 && len(out) < n { // 248 = 4*62: no modulo bias
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// linkID is the provider id an authData entry links by: a non-empty
// string, or none (a custom adapter's authData may have no id, and must
// then never match users that have none either).
func linkID(entry map[string]any) (string, bool) {
	id, ok := entry["id"].(string)
	return id, ok && id != ""
}
