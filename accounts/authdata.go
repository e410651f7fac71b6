package accounts

import (
	"crypto/rand"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Third-party sign-in: POST /users with authData logs in the user the
// authData is linked to, or signs a new one up. The providers check the
// entries (service.PlanAuthData, which asks them over the network before
// any lock); the core's write path links them, refusing an id already
// linked to another user (208).

// AuthDataSignUp is the outcome of POST /users with authData: a new user
// (Created), or a login of the user the authData is linked to.
type AuthDataSignUp struct {
	Created bool
	// Create is the new user's id and creation time (Created).
	Create       service.CreateResult
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

// logins are the provider entries a sign-in names (mfa excepted).
func logins(m map[string]any) map[string]any {
	out := map[string]any{}
	for p, v := range m {
		if v != nil && p != auth.MFA {
			out[p] = v
		}
	}
	return out
}

// SignUpWithAuthData signs up or logs in with third-party authData: the
// user already linked to the authData logs in, anyone else is created.
func (x *Accounts) SignUpWithAuthData(a service.Auth, body map[string]any) (AuthDataSignUp, error) {
	m, ok := body["authData"].(map[string]any)
	if !ok {
		return AuthDataSignUp{}, auth.ErrUnsupported
	}
	if _, isOp := m["__op"]; isOp {
		return AuthDataSignUp{}, auth.ErrUnsupported
	}
	given := logins(m)
	if len(given) == 0 {
		// Nothing to sign in with: an ordinary sign-up.
		rest := maps.Clone(body)
		delete(rest, "authData")
		res, token, err := x.SignUp(a, rest)
		return AuthDataSignUp{Created: true, Create: res, SessionToken: token}, err
	}
	if x.core.AllowExpiredAuthDataToken() {
		if out, done, err := x.logInAsStored(a, given, m[auth.MFA]); done {
			return out, err
		}
	}
	plan, err := x.core.PlanAuthData(a, given)
	if err != nil {
		return AuthDataSignUp{}, err
	}
	entries := plan.Entries()
	providers := strings.Join(slices.Sorted(maps.Keys(entries)), ",")
	user, err := x.linkedUser(entries)
	if err != nil {
		return AuthDataSignUp{}, err
	}
	if user != nil {
		return x.logInWithAuthData(a, user, plan, m[auth.MFA], providers)
	}
	rest := maps.Clone(body)
	out := AuthDataSignUp{Created: true, Response: plan.Response()}
	if u, _ := rest["username"].(string); u == "" {
		out.Username = randomAlnum(usernameLength)
		rest["username"] = out.Username
	}
	out.Create, err = x.core.CreateLinkedUser(a, rest, plan)
	if errors.Is(err, service.ErrAuthDataUsed) {
		// A sign-up with the same authData won the race: log into its user.
		if user, _ = x.linkedUser(entries); user != nil {
			return x.logInWithAuthData(a, user, plan, m[auth.MFA], providers)
		}
	}
	if err != nil {
		return AuthDataSignUp{}, err
	}
	sess, err := x.core.CreateSession(out.Create.ObjectID, a.InstallationID,
		map[string]any{"action": "login", "authProvider": providers}, nil)
	if err != nil {
		return AuthDataSignUp{}, err
	}
	out.SessionToken = sess["sessionToken"].(string)
	return out, nil
}

// logInAsStored is a log-in with authData under allowExpiredAuthDataToken:
// when every provider's entry is exactly what the linked user has stored,
// the user logs in without the providers being asked again (their tokens
// may have expired since). done is false when the log-in must take the
// checked path: an entry differs, a provider is off, or no user is linked.
func (x *Accounts) logInAsStored(a service.Auth, given map[string]any, mfa any) (out AuthDataSignUp, done bool, err error) {
	entries := map[string]map[string]any{}
	for p, v := range given {
		entry, ok := v.(map[string]any)
		if !ok || !x.core.AuthProviders().Enabled(p) {
			return out, false, nil
		}
		entries[p] = entry
	}
	user, err := x.linkedUser(entries)
	if err != nil || user == nil {
		return out, false, nil
	}
	stored, _ := user["authData"].(map[string]any)
	for p, entry := range entries {
		if !reflect.DeepEqual(stored[p], any(entry)) {
			return out, false, nil
		}
	}
	// Every entry is the stored one: nothing to keep, no response.
	out, err = x.logInWithAuthData(a, user, nil, mfa, strings.Join(slices.Sorted(maps.Keys(entries)), ","))
	return out, true, err
}

// linkedUser finds the one user the providers' entries are linked to
// (nil: none); providers linked to different users are 208.
func (x *Accounts) linkedUser(entries map[string]map[string]any) (schema.Object, error) {
	var user schema.Object
	for _, p := range slices.Sorted(maps.Keys(entries)) {
		id, ok := entries[p]["id"].(string)
		if !ok || id == "" {
			continue // authData without an id (a custom adapter's) links no one
		}
		u, found := x.core.FindUser("authData."+p+".id", id)
		if !found {
			continue
		}
		if user != nil && user["objectId"] != u["objectId"] {
			return nil, service.ErrAuthDataUsed
		}
		user = u
	}
	return user, nil
}

// userByAuthData finds the user that checked authData is linked to.
func (x *Accounts) userByAuthData(a service.Auth, ad map[string]any) (schema.Object, error) {
	given := logins(ad)
	if len(given) == 0 {
		return nil, auth.ErrUnsupported
	}
	plan, err := x.core.PlanAuthData(a, given)
	if err != nil {
		return nil, err
	}
	user, err := x.linkedUser(plan.Entries())
	if err != nil {
		return nil, err
	}
	if user == nil {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "User not found.")
	}
	return user, nil
}

// logInWithAuthData opens a session for the user linked to the authData,
// after the user's second factor, keeping refreshed credentials (plan nil:
// the entries are the stored ones).
func (x *Accounts) logInWithAuthData(a service.Auth, user schema.Object, plan *service.AuthPlan, mfa any, providers string) (AuthDataSignUp, error) {
	uid := user["objectId"].(string)
	if a.UserID != "" && a.UserID != uid {
		return AuthDataSignUp{}, service.ErrAuthDataUsed
	}
	if acl, isMap := user["ACL"].(map[string]any); isMap && len(acl) == 0 && !a.Master {
		return AuthDataSignUp{}, schema.Errorf(schema.CodeObjectNotFound, "Invalid username/password.")
	}
	if err := x.checkLoginMFA(user, mfa); err != nil {
		return AuthDataSignUp{}, err
	}
	var response map[string]any
	if plan != nil {
		response = plan.Response()
		stored, _ := user["authData"].(map[string]any)
		for p, entry := range plan.Entries() {
			if !reflect.DeepEqual(stored[p], any(entry)) {
				// A refreshed credential is kept (the plan is already checked).
				if err := x.core.RelinkAuthData(uid, plan); err != nil {
					return AuthDataSignUp{}, err
				}
				break
			}
		}
	}
	if err := x.core.BeforeLogin(a, x.core.Present(classUser, user)); err != nil {
		return AuthDataSignUp{}, err
	}
	sess, err := x.core.CreateSession(uid, a.InstallationID, map[string]any{"action": "login", "authProvider": providers}, nil)
	if err != nil {
		return AuthDataSignUp{}, err
	}
	fresh, ok := x.core.UserByID(uid)
	if !ok {
		return AuthDataSignUp{}, schema.ErrObjectNotFound
	}
	out := x.core.Present(classUser, fresh)
	out["sessionToken"] = sess["sessionToken"]
	x.core.AfterLogin(a, out, str(sess["sessionToken"]))
	if response != nil {
		out["authDataResponse"] = response
	}
	return AuthDataSignUp{User: out, SessionToken: sess["sessionToken"].(string), Response: response}, nil
}

// randomAlnum is n random letters and digits from crypto/rand.
func randomAlnum(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]byte, 0, n)
	var raw [64]byte
	for len(out) < n {
		if _, err := rand.Read(raw[:]); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		for _, b := range raw {
			if b < 248 && len(out) < n { // 248 = 4*62: no modulo bias
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}
