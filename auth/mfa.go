package auth

import (
	"context"
	"errors"
)

// mfaAdapter stands in the registry for the mfa option: the service runs
// multi-factor enrolment and login itself (it needs the stored secret), so
// the adapter only checks the options.
type mfaAdapter struct{}

func (mfaAdapter) ValidateOptions(opts Options) error {
	for _, o := range opts.Strings("options") {
		if o != "TOTP" {
			return errors.New(`mfa.options: only "TOTP" is supported`)
		}
	}
	return nil
}

func (mfaAdapter) ValidateAuthData(context.Context, map[string]any, Options) (Result, error) {
	return Result{}, nil
}

func (mfaAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}
