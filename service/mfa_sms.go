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

// SendSMSCode has the smsFunction send a new login code to mobile and
// returns the waiting code as schema.KeyMFASMS keeps it.
func (s *Service) SendSMSCode(mobile string) (map[string]any, error) {
	opts, _ := s.opts.Auth.Options(auth.MFA)
	return s.sendSMSCode(opts, mobile)
}

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
	if !s.SMSCodeValid(user[fieldMFASMS], mobile, token) {
		return nil, mfaError("Invalid MFA token")
	}
	return &mfaEnrolment{mobile: mobile}, nil
}

// SMSCodeValid reports whether token is the unexpired code sent to
// mobile, as pending (the user's schema.KeyMFASMS) keeps it.
func (s *Service) SMSCodeValid(pending any, mobile, token string) bool {
	p, _ := pending.(map[string]any)
	expires, _ := p["expires"].(float64)
	return p != nil && str(p["mobile"]) == mobile && s.opts.Now().UnixMilli() < int64(expires) &&
		auth.SameHash(str(p["hash"]), auth.HashRecoveryCode(token))
}
