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
	for _, key := range []string{"maxAttempts", "attemptWindow", "lockoutDuration"} {
		if v, set := opts.Raw[key]; set {
			if n, ok := number(v); !ok || n < 0 || n != float64(int64(n)) {
				return fmt.Errorf("mfa.%s: want a whole number of 0 or more, got %v", key, v)
			}
		}
	}
	if l := MFALimitOf(opts); l.MaxAttempts > 0 && (l.Window <= 0 || l.Duration <= 0) {
		return errors.New("mfa: attemptWindow and lockoutDuration must be at least 1 second while maxAttempts is on")
	}
	return nil
}

// Defaults of the limit on wrong second factors: five wrong codes within
// 15 minutes lock the account's MFA logins for 15 minutes, so that a
// six-digit code cannot be guessed by trying them all.
const (
	DefaultMFAMaxAttempts     = 5
	DefaultMFAAttemptWindow   = 15 * time.Minute
	DefaultMFALockoutDuration = 15 * time.Minute
)

// MFALimit bounds wrong second factors (TOTP, recovery and SMS codes):
// MaxAttempts wrong ones within Window lock the account's MFA logins for
// Duration. MaxAttempts 0 turns the limit off.
type MFALimit struct {
	MaxAttempts      int
	Window, Duration time.Duration
}

// MFALimitOf reads the limit from the mfa options maxAttempts,
// attemptWindow and lockoutDuration (seconds).
func MFALimitOf(opts Options) MFALimit {
	l := MFALimit{MaxAttempts: DefaultMFAMaxAttempts, Window: DefaultMFAAttemptWindow, Duration: DefaultMFALockoutDuration}
	if n, ok := number(opts.Raw["maxAttempts"]); ok {
		l.MaxAttempts = int(n)
	}
	if n, ok := number(opts.Raw["attemptWindow"]); ok {
		l.Window = time.Duration(n) * time.Second
	}
	if n, ok := number(opts.Raw["lockoutDuration"]); ok {
		l.Duration = time.Duration(n) * time.Second
	}
	return l
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
