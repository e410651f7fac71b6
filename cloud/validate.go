package cloud

import (
	"fmt"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// Validator states what a function's params or a trigger's object must
// hold, checked before the handler runs; a failure is error 142.
//
// As in Parse Server, master-key callers skip the checks unless
// ValidateMasterKey is set: a master-key call to a function declared
// with requireUser runs.
type Validator struct {
	RequireUser   bool
	RequireMaster bool
	// ValidateMasterKey applies the checks to master-key callers too
	// (validateMasterKey).
	ValidateMasterKey bool
	// SkipWithMasterKey lets master-key callers past every check even
	// when ValidateMasterKey is set.
	SkipWithMasterKey bool
	Fields            map[string]Field
	// RateLimit limits the requests that run the function or trigger,
	// per client address (checked by the REST front end, HTTP 429).
	RateLimit *RateLimit
}

// RateLimit is a validator's rateLimit.
type RateLimit struct {
	Window time.Duration // requestTimeWindow
	Count  int           // requestCount
	// Message is errorResponseMessage ("" is ratelimit.DefaultMessage).
	Message         string
	IncludeMaster   bool // includeMasterKey
	IncludeInternal bool // includeInternalRequests
	RedisURL        string
}

// Field is one checked param (functions) or object field (beforeSave).
type Field struct {
	// Type is the JSON type expected: String, Number, Boolean, Object,
	// Array or Any ("" is Any).
	Type     string
	Required bool
	// Default fills a missing value.
	Default any
	// Options, when set, are the values allowed.
	Options []any
}

func validationError(format string, args ...any) error {
	return schema.Errorf(schema.CodeValidationError, "Validation failed. "+format, args...)
}

// check validates a caller and (functions) params; nil v passes.
func (v *Validator) check(c *Caller, params map[string]any) error {
	if v.skips(c) {
		return nil
	}
	if v.RequireMaster && !c.Master {
		return validationError("Master key is required to complete this request.")
	}
	if v.RequireUser && c.User == nil {
		return validationError("Please login to continue.")
	}
	if params == nil {
		return nil
	}
	return v.checkFields(params, true)
}

// checkObject validates a beforeSave: defaults fill only new objects.
func (v *Validator) checkObject(c *Caller, obj map[string]any, creating bool) error {
	if err := v.check(c, nil); err != nil || v.skips(c) {
		return err
	}
	return v.checkFields(obj, creating)
}

// skips reports whether the caller passes without any check: no
// validator, or a master-key caller the validator does not apply to.
func (v *Validator) skips(c *Caller) bool {
	return v == nil || (c.Master && (v.SkipWithMasterKey || !v.ValidateMasterKey))
}

func (v *Validator) checkFields(values map[string]any, fillDefaults bool) error {
	for name, f := range v.Fields {
		val, ok := values[name]
		if !ok || val == nil {
			if f.Default != nil && fillDefaults {
				values[name] = f.Default
				continue
			}
			if f.Required {
				return validationError("Please specify data for %s.", name)
			}
			continue
		}
		if !typeMatches(f.Type, val) {
			return validationError("Invalid type for %s. Expected: %s", name, strings.ToLower(f.Type))
		}
		if len(f.Options) > 0 && !oneOf(val, f.Options) {
			opts := make([]string, len(f.Options))
			for i, o := range f.Options {
				opts[i] = fmt.Sprint(o)
			}
			return validationError("Invalid option for %s. Expected: %s", name, strings.Join(opts, ", "))
		}
	}
	return nil
}

func typeMatches(want string, v any) bool {
	switch strings.ToLower(want) {
	case "", "any":
		return true
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		switch v.(type) {
		case float64, int, int64:
			return true
		}
		return false
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

func oneOf(v any, options []any) bool {
	for _, o := range options {
		if fmt.Sprint(o) == fmt.Sprint(v) {
			return true
		}
	}
	return false
}
