package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAccountOptions(t *testing.T) {
	smtp := `"emailAdapter": {"module": "smtp", "options": {"host": "127.0.0.1", "port": 2525, "fromAddress": "a@example.com"}}`
	cases := []struct {
		name    string
		file    string
		wantErr string // "" means the file loads
		check   func(t *testing.T, o *Options)
	}{
		{name: "defaults", file: `{"appId": "a"}`, check: func(t *testing.T, o *Options) {
			if !o.Accounts.ExpireInactiveSessions || !o.Accounts.RevokeSessionOnPasswordReset || !o.Accounts.EmailVerifySuccessOnInvalidEmail {
				t.Errorf("defaults %+v", o.Accounts)
			}
		}},
		{name: "full", file: `{"appId": "a", "appName": "Demo", "verifyUserEmails": true, "publicServerURL": "https://x.example/parse",
			"emailVerifyTokenValidityDuration": 7200, ` + smtp + `,
			"passwordPolicy": {"validatorPattern": "^.{8,}$", "maxPasswordHistory": 5, "resetTokenValidityDuration": 60, "doNotAllowUsername": true},
			"accountLockout": {"duration": 5, "threshold": 3, "unlockOnPasswordReset": true},
			"customPages": {"verifyEmailSuccess": "https://x.example/ok"}, "expireInactiveSessions": false}`,
			check: func(t *testing.T, o *Options) {
				a := o.Accounts
				if a.AppName != "Demo" || !a.VerifyUserEmails || a.EmailVerifyTokenValidityDuration != 2*time.Hour ||
					a.EmailAdapter.Options.Port != 2525 || a.PasswordPolicy.MaxPasswordHistory != 5 ||
					a.PasswordPolicy.ResetTokenValidityDuration != time.Minute || a.AccountLockout.Threshold != 3 ||
					a.CustomPages.VerifyEmailSuccess != "https://x.example/ok" || a.ExpireInactiveSessions {
					t.Errorf("loaded %+v", a)
				}
			}},
		{name: "verification without adapter", file: `{"appId": "a", "verifyUserEmails": true}`, wantErr: "verifyUserEmails"},
		{name: "unknown module", file: `{"appId": "a", "emailAdapter": {"module": "parse-server-mailgun"}}`, wantErr: "emailAdapter.module"},
		{name: "smtp without host", file: `{"appId": "a", "emailAdapter": {"module": "smtp", "options": {"fromAddress": "a@example.com"}}}`, wantErr: "emailAdapter.options.host"},
		{name: "bad pattern", file: `{"appId": "a", "passwordPolicy": {"validatorPattern": "(["}}`, wantErr: "passwordPolicy.validatorPattern"},
		{name: "history too long", file: `{"appId": "a", "passwordPolicy": {"maxPasswordHistory": 21}}`, wantErr: "maxPasswordHistory"},
		{name: "lockout without threshold", file: `{"appId": "a", "accountLockout": {"duration": 5}}`, wantErr: "accountLockout.threshold"},
		{name: "lockout without duration", file: `{"appId": "a", "accountLockout": {"threshold": 3}}`, wantErr: "accountLockout.duration"},
		{name: "custom page not a URL", file: `{"appId": "a", "customPages": {"invalidLink": "nope"}}`, wantErr: "customPages.invalidLink"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			o, _, err := Load([]string{path}, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, o)
		})
	}
}
