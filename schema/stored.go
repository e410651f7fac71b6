package schema

// Internal keys of stored _User objects. They start with "_", so no reply
// shows them; the service writes and reads them, and an import or export
// (transfer) maps Parse Server's MongoDB layout onto them. They are the
// stored format: renaming one strands every database written before.
const (
	// KeyHashedPassword is the bcrypt hash of the password (the same name
	// and form as Parse Server's).
	KeyHashedPassword = "_hashed_password"
	// KeyUsernameLC and KeyEmailLC are username and email lower-cased,
	// kept so sign-up and log-in decide uniqueness case-insensitively.
	KeyUsernameLC = "_username_lc"
	KeyEmailLC    = "_email_lc"

	// Email flows: a pending email verification and password reset.
	KeyEmailVerifyToken          = "_email_verify_token"
	KeyEmailVerifyTokenExpiresAt = "_email_verify_token_expires_at"
	KeyPerishableToken           = "_perishable_token"
	KeyPerishableTokenExpiresAt  = "_perishable_token_expires_at"

	// Account policies: lockout counters and password history.
	KeyFailedLoginCount        = "_failed_login_count"
	KeyAccountLockoutExpiresAt = "_account_lockout_expires_at"
	KeyPasswordChangedAt       = "_password_changed_at"
	KeyPasswordHistory         = "_password_history"

	// Multi-factor authentication of an enrolled user.
	KeyMFASecret   = "_mfa_secret"
	KeyMFARecovery = "_mfa_recovery"
	KeyMFAMobile   = "_mfa_mobile" // the enrolled number
	KeyMFASMS      = "_mfa_sms"    // the SMS code sent and waiting
	// The limit on wrong second factors: the count, since when, and the
	// lock it set.
	KeyMFAFailedCount = "_mfa_failed_count"
	KeyMFAFailedSince = "_mfa_failed_since"
	KeyMFALockedUntil = "_mfa_locked_until"
)

// AccountKeys are the _User bookkeeping keys Quarry keeps under Parse
// Server's names and in its form (pending email flows, lockout counters,
// password history), so an import from Parse Server carries them as they are.
var AccountKeys = []string{
	KeyEmailVerifyToken, KeyEmailVerifyTokenExpiresAt,
	KeyPerishableToken, KeyPerishableTokenExpiresAt,
	KeyFailedLoginCount, KeyAccountLockoutExpiresAt,
	KeyPasswordChangedAt, KeyPasswordHistory,
}
