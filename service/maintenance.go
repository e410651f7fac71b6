package service

// maintenanceFields are the internal fields of a _User a maintenance-key
// read shows, under the names Parse Server stores them: the email and
// password-reset tokens, the lockout counters and the password history.
// Quarry's own internal keys (the password hash, lower-cased shadow
// copies, MFA secrets) never leave.
var maintenanceFields = map[string]bool{
	fieldVerifyToken: true, fieldVerifyTokenExpires: true,
	fieldResetToken: true, fieldResetTokenExpires: true,
	fieldFailedLogins: true, fieldLockoutExpires: true,
	fieldPasswordChangedAt: true, fieldPasswordHistory: true,
}
