package service

import (
	"crypto/rand"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
)

// Multi-factor sign-in (the auth option's mfa provider, TOTP; SMS is in
// mfa_sms.go): a user enrols by saving authData.mfa = {secret, token}; the
// token proves their authenticator app holds the secret. The secret and
// the hashes of the recovery codes are kept in internal fields, so
// authData.mfa shows only {status: "enabled"}. Once enrolled, every login
// (password or authData) must carry authData.mfa.token: a current code or
// an unused recovery code.

// Internal _User fields of an enrolled user.
const (
	fieldMFASecret   = schema.KeyMFASecret
	fieldMFARecovery = schema.KeyMFARecovery
)

// mfaEnrolment is a checked authData.mfa change: a TOTP set-up (secret),
// an SMS set-up (mobile), or an SMS code sent and waiting (pending).
type mfaEnrolment struct {
	secret   string
	recovery []any    // hashes, as stored
	codes    []string // the codes themselves, shown once
	mobile   string
	pending  map[string]any
}

// response is the enrolment's authDataResponse (nil: none).
func (e *mfaEnrolment) response() any {
	if len(e.codes) == 0 {
		return nil
	}
	return map[string]any{"recovery": strings.Join(e.codes, ", ")}
}

// apply writes the enrolment into the user being written.
func (e *mfaEnrolment) apply(d *draft, merged map[string]any) {
	switch {
	case e.pending != nil:
		d.obj[fieldMFASMS] = e.pending
	case e.mobile != "":
		merged[auth.MFA] = map[string]any{"status": "enabled"}
		d.obj[fieldMFAMobile] = e.mobile
		delete(d.obj, fieldMFASMS)
	default:
		merged[auth.MFA] = map[string]any{"status": "enabled"}
		d.obj[fieldMFASecret] = e.secret
		d.obj[fieldMFARecovery] = e.recovery
	}
}

// mfaEnrolled reports whether the user has a second factor.
func mfaEnrolled(user schema.Object) bool {
	return user[fieldMFASecret] != nil || user[fieldMFAMobile] != nil
}

func mfaError(msg string) error { return schema.Errorf(auth.CodeMFAError, "%s", msg) }

// planMFA checks an authData.mfa value a user saves: {secret, token} sets
// MFA up; the stored {status} again changes nothing (nil).
func (s *Service) planMFA(a Auth, userID string, entry map[string]any) (*mfaEnrolment, error) {
	opts, ok := s.opts.Auth.Options(auth.MFA)
	if !ok {
		return nil, auth.ErrUnsupported
	}
	if userID == "" {
		return nil, mfaError("MFA can only be set up on an existing user.")
	}
	user, _ := s.userByID(userID)
	stored, _ := user["authData"].(map[string]any)
	if reflect.DeepEqual(stored[auth.MFA], any(entry)) {
		return nil, nil
	}
	if mobile, ok := entry["mobile"].(string); ok {
		return s.planSMS(a, user, opts, mobile, entry) // mfa_sms.go
	}
	if totp, _ := auth.MFAMethods(opts); !totp {
		return nil, mfaError("TOTP is not enabled.")
	}
	secret, _ := entry["secret"].(string)
	token, _ := entry["token"].(string)
	if secret == "" || token == "" {
		return nil, mfaError("Invalid MFA data")
	}
	if mfaEnrolled(user) && !a.Master {
		return nil, mfaError("MFA is already set up on this account.")
	}
	if !auth.ValidSecret(secret) {
		return nil, mfaError("Invalid MFA secret")
	}
	if !auth.TOTPOf(opts).Valid(token, secret, s.opts.Now()) {
		return nil, mfaError("Invalid MFA token")
	}
	codes := auth.NewRecoveryCodes()
	hashes := make([]any, len(codes))
	for i, c := range codes {
		hashes[i] = auth.HashRecoveryCode(c)
	}
	return &mfaEnrolment{secret: secret, recovery: hashes, codes: codes}, nil
}

// checkLoginMFA lets an enrolled user's login through only with a second
// factor in its authData.mfa: a current TOTP code or a recovery code
// (spent), or the SMS code a challenge sent.
func (s *Service) checkLoginMFA(user schema.Object, mfa any) error {
	opts, on := s.opts.Auth.Options(auth.MFA)
	if !mfaEnrolled(user) || !on {
		return nil
	}
	if err := s.checkMFALock(user); err != nil { // mfa_limit.go
		return err
	}
	entry, _ := mfa.(map[string]any)
	token, _ := entry["token"].(string)
	if token == "" {
		return schema.Errorf(auth.CodeMFATokenRequired, "Missing additional authData mfa")
	}
	secret, _ := user[fieldMFASecret].(string)
	if secret == "" {
		return s.checkSMSLogin(user, token) // mfa_sms.go
	}
	if auth.TOTPOf(opts).Valid(token, secret, s.opts.Now()) {
		return s.mfaPassed(user)
	}
	hash := auth.HashRecoveryCode(token)
	recovery, _ := user[fieldMFARecovery].([]any)
	if !slices.ContainsFunc(recovery, func(h any) bool { return auth.SameHash(str(h), hash) }) {
		return s.mfaFailed(user)
	}
	// Spent under the user's lock: two logins with one code, one wins.
	if _, err := s.write(Auth{Master: true, internal: true}, []WriteOp{{Method: MethodUpdate, Class: classUser,
		ID: user["objectId"].(string), Body: map[string]any{}, authPlan: &authPlan{spendRecovery: hash}}}, true); err != nil {
		return err
	}
	return s.mfaPassed(user)
}

// spendRecoveryCode removes a recovery code's hash from the user being
// written; a code spent meanwhile fails.
func spendRecoveryCode(d *draft, hash string) error {
	recovery, _ := d.original[fieldMFARecovery].([]any)
	i := slices.IndexFunc(recovery, func(h any) bool { return auth.SameHash(str(h), hash) })
	if i < 0 {
		return mfaError("Invalid MFA token")
	}
	d.obj[fieldMFARecovery] = slices.Delete(slices.Clone(recovery), i, i+1)
	return nil
}

// clearMFA removes an enrolment (authData.mfa unlinked).
func clearMFA(d *draft) {
	delete(d.obj, fieldMFASecret)
	delete(d.obj, fieldMFARecovery)
	delete(d.obj, fieldMFAMobile)
	delete(d.obj, fieldMFASMS)
	clearMFALimit(d.obj)
}

// loginFactors is LogIn's check of a second factor (the mfa token in the
// login's authData) before it opens a session.
func (s *Service) loginFactors(a Auth, user schema.Object) error {
	return s.checkLoginMFA(user, a.LoginAuthData[auth.MFA])
}

// Challenge answers POST /challenge: the caller proves who they are (a
// username or email with the password, or authData) and asks the
// providers named in challengeData for a challenge; a provider with
// nothing to send (TOTP) answers true.
func (s *Service) Challenge(a Auth, body map[string]any) (map[string]any, error) {
	challenge, ok := body["challengeData"].(map[string]any)
	if !ok || len(challenge) == 0 {
		return nil, schema.Errorf(-1, "Nothing to challenge.")
	}
	username, email, password := body["username"], body["email"], body["password"]
	var user schema.Object
	switch ad, hasAuthData := body["authData"].(map[string]any); {
	case username != nil || email != nil:
		shown, err := s.LogIn(a, username, email, password, true)
		if err != nil {
			return nil, err
		}
		user, _ = s.userByID(str(shown["objectId"]))
	case hasAuthData:
		var err error
		if user, err = s.userByAuthData(a, ad); err != nil {
			return nil, err
		}
	default:
		return nil, schema.Errorf(-1, "You need to provide username/email or authData to login.")
	}
	out := map[string]any{}
	for _, p := range slices.Sorted(maps.Keys(challenge)) {
		if !s.opts.Auth.Enabled(p) {
			return nil, auth.ErrUnsupported
		}
		if p == auth.MFA && mfaEnrolled(user) {
			if err := s.checkMFALock(user); err != nil { // mfa_limit.go
				return nil, err
			}
		}
		if p == auth.MFA && user[fieldMFAMobile] != nil {
			if err := s.challengeSMS(user); err != nil { // mfa_sms.go
				return nil, err
			}
		}
		out[p] = true
	}
	return map[string]any{"challengeData": out}, nil
}

// userByAuthData finds the user that checked authData is linked to.
func (s *Service) userByAuthData(a Auth, ad map[string]any) (schema.Object, error) {
	logins := map[string]any{}
	for p, v := range ad {
		if v != nil && p != auth.MFA {
			logins[p] = v
		}
	}
	if len(logins) == 0 {
		return nil, auth.ErrUnsupported
	}
	plan, err := s.planAuthData(a, "", logins, nil)
	if err != nil {
		return nil, err
	}
	user, err := s.linkedUser(plan)
	if err != nil {
		return nil, err
	}
	if user == nil {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "User not found.")
	}
	return user, nil
}

func randRead(b []byte) {
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
}
