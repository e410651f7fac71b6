package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/service"
)

// authFunctions lets providers written as cloud code (auth.<name>.
// cloudFunction) call the service's cloud functions: the providers are
// built before the service, which is set once it exists.
type authFunctions struct {
	svc atomic.Pointer[service.Service]
}

func (f *authFunctions) run(_ context.Context, name string, params map[string]any) (any, error) {
	svc := f.svc.Load()
	if svc == nil {
		return nil, errors.New("auth: the service is not started")
	}
	return svc.RunFunction(service.Auth{Master: true}, name, params)
}

// openAuth builds the third-party sign-in providers from the auth option.
func openAuth(opts *config.Options, functions *authFunctions) (*auth.Registry, error) {
	providers := make(map[string]map[string]any, len(opts.Auth.Providers))
	for name, v := range opts.Auth.Providers {
		if v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("auth.%s: want a JSON object", name)
		}
		if enabled, set := m["enabled"].(bool); set && !enabled && name != auth.Anonymous {
			continue
		}
		providers[name] = m
	}
	return auth.New(auth.Config{
		Providers:                  providers,
		Adapters:                   opts.Auth.Adapters,
		EnableAnonymousUsers:       opts.Auth.EnableAnonymousUsers,
		AnyAnonymousID:             opts.ParseServerDefaults(),
		EnableInsecureAuthAdapters: opts.Auth.EnableInsecureAuthAdapters,
		Now:                        opts.Now,
		RunFunction:                functions.run,
	})
}

// warnMissingFunctions warns at start-up about options naming cloud
// functions that are not defined: passwordPolicy.validatorCallback (every
// new password would be refused), auth.<provider>.cloudFunction,
// auth.mfa.smsFunction, and the pages router's placeholders and
// customRoutes handlers.
func warnMissingFunctions(opts *config.Options, defined []string, log *slog.Logger) {
	named := map[string]string{}
	if f := opts.Accounts.PasswordPolicy.ValidatorCallback; f != "" {
		named["passwordPolicy.validatorCallback"] = f
	}
	for provider, v := range opts.Auth.Providers {
		m, _ := v.(map[string]any)
		for _, key := range []string{"cloudFunction", "smsFunction", "validateOptionsFunction"} {
			if f, ok := m[key].(string); ok && f != "" {
				named["auth."+provider+"."+key] = f
			}
		}
	}
	if _, f := opts.PagesPlaceholders(); f != "" && opts.PagesRouter() {
		named["pages.placeholders"] = f
	}
	for i, r := range opts.PagesCustomRoutes() {
		if opts.PagesRouter() {
			named[fmt.Sprintf("pages.customRoutes[%d].handler", i)] = r.Handler
		}
	}
	for option, f := range named {
		if !slices.Contains(defined, f) {
			log.Warn("a cloud function named by an option is not defined", "option", option, "function", f)
		}
	}
}

// validateAuthOptions runs, once at start-up, each provider's
// validateOptionsFunction: the validateOptions of a custom adapter written
// as cloud code (auth.<provider>.cloudFunction does its validateAuthData
// and validateAppId). It is called with the master key and
// {provider, options}; a throw stops the start, as a Parse Server
// adapter's validateOptions does, naming the provider and the reason.
func validateAuthOptions(opts *config.Options, svc *service.Service) error {
	for _, provider := range slices.Sorted(maps.Keys(opts.Auth.Providers)) {
		m, _ := opts.Auth.Providers[provider].(map[string]any)
		fn, _ := m["validateOptionsFunction"].(string)
		if fn == "" {
			continue
		}
		options := maps.Clone(m)
		delete(options, "cloudFunction")
		delete(options, "validateOptionsFunction")
		if _, err := svc.RunFunction(service.Auth{Master: true}, fn, map[string]any{"provider": provider, "options": options}); err != nil {
			return fmt.Errorf("auth.%s: the options were refused by %s: %w", provider, fn, err)
		}
	}
	return nil
}
