package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// SMSCodeTTL is how long a code sent by SMS may be used.
const SMSCodeTTL = 5 * time.Minute

// mfaAdapter stands in the registry for the mfa option: the service runs
// multi-factor enrolment and login itself (it needs the stored secret), so
// the adapter only checks the options: options lists "TOTP" (the default)
// and/or "SMS"; SMS needs smsFunction, the cloud function that sends a code
// ({mobile, code} as its params).
type mfaAdapter struct{}

func (mfaAdapter) ValidateOptions(opts Options) error {
	for _, o := range opts.Strings("options") {
		if o != "TOTP" && o != "SMS" {
			return fmt.Errorf(`mfa.options: %q is neither "TOTP" nor "SMS"`, o)
		}
	}
	if _, sms := MFAMethods(opts); sms && opts.String("smsFunction", "") == "" {
		return errors.New("mfa with SMS needs smsFunction, the cloud function that sends the code")
	}
	return nil
}

func (mfaAdapter) ValidateAuthData(context.Context, map[string]any, Options) (Result, error) {
	return Result{}, nil
}

func (mfaAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}

// MFAMethods reports which second factors the mfa options turn on.
func MFAMethods(opts Options) (totp, sms bool) {
	methods := opts.Strings("options")
	if len(methods) == 0 {
		return true, false
	}
	for _, m := range methods {
		totp = totp || m == "TOTP"
		sms = sms || m == "SMS"
	}
	return totp, sms
}

// NewSMSCode is a random six-digit code.
func NewSMSCode() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return fmt.Sprintf("%06d", n.Int64())
}
