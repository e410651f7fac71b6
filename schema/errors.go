package schema

import (
	"errors"
	"fmt"
)

// Parse error codes used by the server. The full catalogue lives in the
// specification; only codes that Quarry raises are named here.
const (
	CodeOtherCause             = -1
	CodeInternalServerError    = 1
	CodeConnectionFailed       = 100
	CodeObjectNotFound         = 101
	CodeInvalidQuery           = 102
	CodeInvalidClassName       = 103
	CodeMissingObjectID        = 104
	CodeInvalidKeyName         = 105
	CodeInvalidPointer         = 106
	CodeInvalidJSON            = 107
	CodeCommandUnavailable     = 108
	CodeIncorrectType          = 111
	CodeObjectTooLarge         = 116
	CodeInvalidLimit           = 117
	CodeInvalidSkip            = 118
	CodeOperationForbidden     = 119
	CodeInvalidNestedKey       = 121
	CodeInvalidACL             = 123
	CodeTimeout                = 124
	CodeDuplicateValue         = 137
	CodeScriptFailed           = 141
	CodeInefficientQuery       = 154
	CodeInvalidSessionToken    = 209
	CodeInvalidSchemaOperation = 255

	// Installation, schema-option and analytics codes.
	CodeInvalidChannelName    = 112
	CodeInvalidInstallationID = 132
	CodeInvalidChannelsArray  = 134
	CodeMissingRequiredField  = 135
	CodeChangedImmutableField = 136
	CodeValidationError       = 142
	CodeInvalidEventName      = 160

	// Push codes.
	CodePushMisconfigured = 115
	CodeInvalidPushTime   = 152
)

// File codes.
const (
	CodeInvalidFileName = 122
	CodeFileTooLarge    = 129
	CodeFileSaveError   = 130
	CodeFileDeleteError = 153
)

// Error is a failure that carries its Parse error code. Internal packages
// return it (or wrap it); the transport turns it into {code, error}.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("parse error %d: %s", e.Code, e.Message) }

// Errorf builds an *Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError finds the *Error in err's chain. Errors without one are internal:
// they become code 1 at the edge with a message that leaks nothing.
func AsError(err error) (*Error, bool) {
	var pe *Error
	if errors.As(err, &pe) {
		return pe, true
	}
	return nil, false
}

// ErrObjectNotFound is the canonical "Object not found." failure.
var ErrObjectNotFound = &Error{Code: CodeObjectNotFound, Message: "Object not found."}
