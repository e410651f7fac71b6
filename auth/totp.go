package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// Multi-factor limits.
const (
	// MinSecretLength is the shortest TOTP secret accepted (base32
	// characters: 20 encode 100 bits).
	MinSecretLength = 20
	// RecoveryCodes is how many single-use recovery codes an enrolment
	// gives, each RecoveryCodeLength characters long.
	RecoveryCodes      = 2
	RecoveryCodeLength = 20
)

// TOTP is the mfa provider's time-based one-time password setting:
// auth.mfa.digits (6), period (30 seconds) and algorithm (SHA1).
type TOTP struct {
	Digits    int
	Period    uint
	Algorithm string
}

// TOTPOf reads the TOTP setting from the mfa provider's options.
func TOTPOf(opts Options) TOTP {
	t := TOTP{Digits: 6, Period: 30, Algorithm: "SHA1"}
	if d, ok := number(opts.Raw["digits"]); ok && d >= 6 && d <= 8 {
		t.Digits = int(d)
	}
	if p, ok := number(opts.Raw["period"]); ok && p >= 10 {
		t.Period = uint(p)
	}
	if a := opts.String("algorithm", ""); a != "" {
		t.Algorithm = strings.ToUpper(a)
	}
	return t
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case interface{ Float64() (float64, error) }:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// ValidSecret reports whether secret is base32 text long enough for TOTP.
func ValidSecret(secret string) bool {
	if len(secret) < MinSecretLength {
		return false
	}
	_, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.TrimRight(strings.ToUpper(secret), "="))
	return err == nil
}

// Valid reports whether code is the secret's one-time password at now, or
// one period before or after (clock drift between phone and server).
func (t TOTP) Valid(code, secret string, now time.Time) bool {
	alg := otp.AlgorithmSHA1
	switch t.Algorithm {
	case "SHA256":
		alg = otp.AlgorithmSHA256
	case "SHA512":
		alg = otp.AlgorithmSHA512
	}
	ok, err := totp.ValidateCustom(code, secret, now, totp.ValidateOpts{
		Period: t.Period, Skew: 1, Digits: otp.Digits(t.Digits), Algorithm: alg,
	})
	return err == nil && ok
}

// Code is the secret's one-time password at now (for tests and tools).
func (t TOTP) Code(secret string, now time.Time) (string, error) {
	alg := otp.AlgorithmSHA1
	switch t.Algorithm {
	case "SHA256":
		alg = otp.AlgorithmSHA256
	case "SHA512":
		alg = otp.AlgorithmSHA512
	}
	return totp.GenerateCodeCustom(secret, now, totp.ValidateOpts{Period: t.Period, Digits: otp.Digits(t.Digits), Algorithm: alg})
}

// NewRecoveryCodes makes an enrolment's single-use recovery codes.
func NewRecoveryCodes() []string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" // 32: no modulo bias
	codes := make([]string, RecoveryCodes)
	for i := range codes {
		raw := make([]byte, RecoveryCodeLength)
		if _, err := rand.Read(raw); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		for j, b := range raw {
			raw[j] = alphabet[int(b)%len(alphabet)]
		}
		codes[i] = string(raw)
	}
	return codes
}

// HashRecoveryCode is how a recovery code is stored: its SHA-256, so the
// stored form cannot be used to log in.
func HashRecoveryCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// SameHash compares two stored hashes in constant time.
func SameHash(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
