package auth

import (
	"context"
	"errors"
	"fmt"

	"github.com/quarrydata/quarry/schema"
)

// FunctionRunner runs a cloud function by name with the master key and
// returns its result (the server passes the service's RunFunction).
type FunctionRunner func(ctx context.Context, name string, params map[string]any) (any, error)

// codeScriptFailed is the code of an error thrown without one (141): such
// a refusal is answered as an invalid credential (251).
const codeScriptFailed = 141

// functionAdapter is a custom adapter written as cloud code: the provider's
// cloudFunction option names a function (Parse.Cloud.define, or
// cloud.Registry.Define in Go) that does what a Parse Server adapter's
// validateAuthData and validateAppId do. It is called with params
// {provider, authData, options, appIds}. It accepts the credential by
// returning true, nothing, or {save, response}: save replaces the
// authData stored, response is answered in authDataResponse. It refuses by
// returning false or throwing; a thrown Parse error keeps its code, any
// other throw is 251 with its message.
type functionAdapter struct {
	run FunctionRunner
}

func (f functionAdapter) ValidateOptions(opts Options) error {
	if f.run == nil {
		return errors.New("cloudFunction: cloud functions cannot be called here (no runner)")
	}
	if opts.String("cloudFunction", "") == "" {
		return errors.New("cloudFunction must name a cloud function")
	}
	return nil
}

func (f functionAdapter) ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error) {
	options := make(map[string]any, len(opts.Raw))
	for k, v := range opts.Raw {
		if k != "cloudFunction" && k != "validateOptionsFunction" {
			options[k] = v
		}
	}
	appIDs := make([]any, 0)
	for _, id := range opts.Strings("appIds") {
		appIDs = append(appIDs, id)
	}
	out, err := f.run(ctx, opts.String("cloudFunction", ""),
		map[string]any{"provider": opts.Provider, "authData": data, "options": options, "appIds": appIDs})
	if err != nil {
		if pe, ok := schema.AsError(err); ok && pe.Code != codeScriptFailed {
			return Result{}, pe
		} else if ok {
			return Result{}, schema.Errorf(CodeInvalidLinkedSession, "%s", pe.Message)
		}
		return Result{}, invalid(opts.Provider)
	}
	switch v := out.(type) {
	case bool:
		if !v {
			return Result{}, invalid(opts.Provider)
		}
	case map[string]any:
		var res Result
		if save, ok := v["save"]; ok {
			m, isMap := save.(map[string]any)
			if !isMap || m["id"] != data["id"] {
				return Result{}, fmt.Errorf("auth.%s: cloudFunction's save must be an object with the same id", opts.Provider)
			}
			res.Store = m
		}
		res.Response = v["response"]
		return res, nil
	}
	return Result{}, nil
}

// ValidateAppID is part of the function's one call.
func (functionAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}
