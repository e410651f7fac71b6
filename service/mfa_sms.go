package service

import (
	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
)

// SMS as the second factor (mfa options ["SMS"]): the code is sent by the
// cloud function named by smsFunction, called with the master key and
// params {mobile, code}. Saving authData.mfa = {mobile} sends a code;
// saving {mobile, token} with it enrols the number. A login first asks for
// a code with POST /challenge, then logs in with authData.mfa.token. A
// sent code (its hash, number and expiry) waits in an internal field and
// is used once.

// Internal _User fields of SMS.
const (
	fieldMFAMobile = schema.KeyMFAMobile
	fieldMFASMS    = schema.KeyMFASMS
)

// sendSMSCode has the smsFunction send a new code to mobile and returns
// the waiting code as it is kept.
func (s *Service) sendSMSCode(opts auth.Options, mobile string) (map[string]any, error) {
	code := auth.NewSMSCode()
	if _, err := s.RunFunction(Auth{Master: true}, opts.String("smsFunction", ""),
		map[string]any{"mobile": mobile, "code": code}); err != nil {
		return nil, err
	}
	return map[string]any{"mobile": mobile, "hash": auth.HashRecoveryCode(code),
		"expires": float64(s.opts.Now().Add(auth.SMSCodeTTL).UnixMilli())}, nil
}

// planSMS checks an SMS enrolment step: {mobile} sends a code, {mobile,
// token} with the code sent enrols the number.
func (s *Service) planSMS(a Auth, user schema.Object, opts auth.Options, mobile string, entry map[string]any) (*mfaEnrolment, error) {
	if _, sms := auth.MFAMethods(opts); !sms {
		return nil, mfaError("SMS is not enabled.")
	}
	if mfaEnrolled(user) && !a.Master {
		return nil, mfaError("MFA is already set up on this account.")
	}
	if len(mobile) < 6 {
		return nil, mfaError("Invalid mobile number.")
	}
	token, _ := entry["token"].(string)
	if token == "" {
		pending, err := s.sendSMSCode(opts, mobile)
		if err != nil {
			return nil, err
		}
		return &mfaEnrolment{pending: pending}, nil
	}
	if !s.smsCodeValid(user[fieldMFASMS], mobile, token) {
		return nil, mfaError("Invalid MFA token")
	}
	return &mfaEnrolment{mobile: mobile}, nil
}

// smsCodeValid reports whether token is the unexpired code sent to mobile.
func (s *Service) smsCodeValid(pending any, mobile, token string) bool {
	p, _ := pending.(map[string]any)
	expires, _ := p["expires"].(float64)
	return p != nil && str(p["mobile"]) == mobile && s.opts.Now().UnixMilli() < int64(expires) &&
		auth.SameHash(str(p["hash"]), auth.HashRecoveryCode(token))
}

// checkSMSLogin lets a login through with the code the user's challenge
// sent, which is spent.
func (s *Service) checkSMSLogin(user schema.Object, token string) error {
	if !s.smsCodeValid(user[fieldMFASMS], str(user[fieldMFAMobile]), token) {
		return s.mfaFailed(user) // mfa_limit.go
	}
	if _, err := s.write(Auth{Master: true, internal: true}, []WriteOp{{Method: MethodUpdate, Class: classUser,
		ID: user["objectId"].(string), Body: map[string]any{}, authPlan: &authPlan{spendSMS: auth.HashRecoveryCode(token)}}}, true); err != nil {
		return err
	}
	return s.mfaPassed(user)
}

// spendSMSCode removes the waiting code a login used; a code used
// meanwhile fails.
func spendSMSCode(d *draft, hash string) error {
	p, _ := d.original[fieldMFASMS].(map[string]any)
	if p == nil || !auth.SameHash(str(p["hash"]), hash) {
		return mfaError("Invalid MFA token")
	}
	delete(d.obj, fieldMFASMS)
	return nil
}

// challengeSMS sends an SMS-enrolled user a login code.
func (s *Service) challengeSMS(user schema.Object) error {
	opts, _ := s.opts.Auth.Options(auth.MFA)
	pending, err := s.sendSMSCode(opts, str(user[fieldMFAMobile]))
	if err != nil {
		return err
	}
	_, err = s.write(Auth{Master: true, internal: true}, []WriteOp{{Method: MethodUpdate, Class: classUser,
		ID: user["objectId"].(string), Body: map[string]any{}, authPlan: &authPlan{mfa: &mfaEnrolment{pending: pending}}}}, true)
	return err
}
