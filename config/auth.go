package config

import "github.com/quarrydata/quarry/auth"

// AuthOptions are third-party sign-in's options (docs/auth.md).
type AuthOptions struct {
	// Providers is auth: provider name -> its settings, as Parse Server
	// takes them ({"google": {"clientId": "..."}, ...}).
	Providers map[string]any
	// EnableAnonymousUsers is enableAnonymousUsers: the anonymous
	// provider is on (the default).
	EnableAnonymousUsers bool
	// EnableInsecureAuthAdapters is enableInsecureAuthAdapters: accept the
	// deprecated payloads (access tokens where the provider offers a code)
	// of every provider that does not set its own enableInsecureAuth.
	EnableInsecureAuthAdapters bool
	// Adapters are auth adapters written in Go, by provider name: set by a
	// program that embeds Quarry, not an option. A provider named in
	// Providers uses its Go adapter before a built-in one.
	Adapters map[string]auth.Adapter
}
