package service

import (
	"reflect"
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

// clearMFA removes an enrolment (authData.mfa unlinked).
func clearMFA(d *draft) {
	delete(d.obj, fieldMFASecret)
	delete(d.obj, fieldMFARecovery)
	delete(d.obj, fieldMFAMobile)
	delete(d.obj, fieldMFASMS)
	clearMFALimit(d.obj)
}
