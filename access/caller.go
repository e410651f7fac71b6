package access

import "github.com/quarrydata/quarry/schema"

// Caller is who asks: a key holder or a user with their roles.
type Caller struct {
	// Master is the master key, or the server acting on its own behalf:
	// every rule in this package is waived.
	Master bool
	// ReadOnly marks the read-only master key: it reads as Master, and
	// every write is refused.
	ReadOnly bool
	// UserID is the session's user; "" for public callers.
	UserID string
	// Roles are the user's role names ("role:Admin"), inherited ones
	// included.
	Roles []string
}

// Op is a class-level permission operation.
type Op string

// The operations of a class-level permission.
const (
	OpGet      Op = "get"
	OpFind     Op = "find"
	OpCount    Op = "count"
	OpCreate   Op = "create"
	OpUpdate   Op = "update"
	OpDelete   Op = "delete"
	OpAddField Op = "addField"
)

// Perm is what an ACL entry grants.
type Perm string

// The two ACL permissions.
const (
	PermRead  Perm = "read"
	PermWrite Perm = "write"
)

// Built-in classes with rules of their own.
const (
	ClassUser         = "_User"
	ClassSession      = "_Session"
	ClassInstallation = "_Installation"
)

// codeSessionMissing is Parse's 206 (no or wrong session for a user write).
const codeSessionMissing = 206

// ErrReadOnly refuses a write by the read-only master key.
var ErrReadOnly = schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to perform the write operation.")

// ACLAllows reports whether obj's ACL grants perm to the caller. An object
// without an ACL is open to everyone. It does not look at Master.
func ACLAllows(c Caller, obj schema.Object, perm Perm) bool {
	acl, ok := obj["ACL"].(map[string]any)
	if !ok {
		return true
	}
	if aclGrants(acl, "*", perm) || (c.UserID != "" && aclGrants(acl, c.UserID, perm)) {
		return true
	}
	for _, r := range c.Roles {
		if aclGrants(acl, r, perm) {
			return true
		}
	}
	return false
}

func aclGrants(acl map[string]any, who string, perm Perm) bool {
	e, _ := acl[who].(map[string]any)
	return e[string(perm)] == true
}

// PublicRead reports whether anyone at all may read obj by its ACL.
func PublicRead(obj schema.Object) bool {
	acl, ok := obj["ACL"].(map[string]any)
	if !ok {
		return true
	}
	return aclGrants(acl, "*", PermRead)
}
