package server

import (
	"fmt"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/config"
)

// openAuth builds the third-party sign-in providers from the auth option.
func openAuth(opts *config.Options) (*auth.Registry, error) {
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
		EnableInsecureAuthAdapters: opts.Auth.EnableInsecureAuthAdapters,
		Now:                        opts.Now,
	})
}
