// Package accounts owns what a user does with their account: signing up,
// logging in and out (password, authData, the master key's login-as),
// sessions, the second factor (MFA) at login and its attempt limit,
// account lockout, and the email flows (verification, password reset).
// It works through the narrow Core the service offers; the service never
// imports it. The rules every _User write obeys (password hashing and
// policy, unique usernames and emails, authData linking) stay in the
// core's write path, so a write from any front end keeps them.
package accounts

import (
	"sync"
	"time"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Core is what accounts need of the service: users and sessions as
// stored, writes made as the server, login triggers and the settings.
type Core interface {
	// Users and sessions as stored, internal fields included.
	UserByID(id string) (schema.Object, bool)
	FindUser(field string, value any) (schema.Object, bool)
	SessionByToken(token string) (schema.Object, bool)
	Present(class string, obj schema.Object) schema.Object
	CatchUpForRequest()

	// Writes: as the caller, or as the server.
	Create(a service.Auth, class string, body map[string]any) (service.CreateResult, error)
	Update(a service.Auth, class, id string, body map[string]any) (service.UpdateResult, error)
	CreateSession(userID, installationID string, createdWith, extra map[string]any) (schema.Object, error)
	DeleteSession(id string) error
	SetSessionExpiry(id string, at time.Time) error
	EditUser(id string, body map[string]any, edit func(schema.Object) error, keepSessions bool) error
	TouchUser(id string, edit func(schema.Object) error) error
	SetVerifyToken(user schema.Object, token string)

	// authData: checked by the providers, then linked by the write path.
	PlanAuthData(a service.Auth, logins map[string]any) (*service.AuthPlan, error)
	CreateLinkedUser(a service.Auth, body map[string]any, plan *service.AuthPlan) (service.CreateResult, error)
	RelinkAuthData(userID string, plan *service.AuthPlan) error

	// Cloud code, emails and SMS codes.
	RunFunction(a service.Auth, name string, params map[string]any) (any, error)
	BeforeLogin(a service.Auth, user schema.Object) error
	AfterLogin(a service.Auth, user schema.Object, token string)
	AfterLogout(a service.Auth, session schema.Object)
	MailLink(user schema.Object, page, token string, reset bool)
	SendSMSCode(mobile string) (map[string]any, error)
	SMSCodeValid(pending any, mobile, token string) bool

	// Settings.
	AccountOptions() *service.AccountOptions
	AuthProviders() *auth.Registry
	LowercaseUsernames() bool
	AllowExpiredAuthDataToken() bool
	SessionLength() time.Duration
	Now() time.Time
	Warn(msg string)
}

// Accounts serves the account operations over a Core. Their state lives
// in the core's objects, so any number of front ends may each hold one;
// the one the server registers for extendSessionOnUse also keeps the
// sessions being extended.
type Accounts struct {
	core Core
	// extending holds the ids of sessions whose expiry is being moved
	// (ExtendSession), so a burst of requests writes once.
	extending sync.Map
}

// New returns the account operations served through core.
func New(core Core) *Accounts { return &Accounts{core: core} }

const (
	classUser    = "_User"
	classSession = "_Session"
)

// Parse error codes of the account flows.
const (
	codeOtherCause            = -1
	codeInternal              = 1
	codeInvalidEmail          = 125
	codeMissingInstallationID = 135
	codeInvalidValue          = 162
	codeUsernameMissing       = 200
	codePasswordMissing       = 201
	codeEmailMissing          = 204
	codeEmailNotFound         = 205
)

func str(v any) string { s, _ := v.(string); return s }

// dateField reads a stored Date.
func dateField(obj schema.Object, key string) (time.Time, bool) {
	m, ok := obj[key].(map[string]any)
	if !ok {
		return time.Time{}, false
	}
	iso, _ := m["iso"].(string)
	return schema.ParseTime(iso)
}

func dateValue(t time.Time) map[string]any { return schema.Date(schema.FormatTime(t)) }

// intField reads a stored count.
func intField(obj schema.Object, key string) int {
	switch v := obj[key].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case int64:
		return int(v)
	}
	return 0
}
