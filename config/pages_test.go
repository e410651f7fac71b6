package config

import (
	"errors"
	"strings"
	"testing"
)

// TestPagesOption: a Parse Server config file's pages object starts
// Quarry; every setting that has no effect says why at start-up, and a
// malformed one is refused.
func TestPagesOption(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		warn       string // a warning containing this; "" for none
		failOn     string // the option refused; "" for none
	}{
		{name: "router off", file: `{"pages": {"enableRouter": false}}`},
		{name: "router on", file: `{"pages": {"enableRouter": true, "enableLocalization": true, "forceRedirect": false,
			"localizationFallbackLocale": "de", "placeholders": {"title": "T"}, "encodePageParamHeaders": true}}`},
		{name: "router with customUrls", file: `{"pages": {"enableRouter": true, "customUrls": {"passwordReset": "https://x.example/r"}}}`},
		{name: "placeholders as a cloud function", file: `{"pages": {"enableRouter": true, "placeholders": "pagePlaceholders"}}`},
		{name: "placeholders neither", file: `{"pages": {"enableRouter": true, "placeholders": 3}}`, failOn: "pages.placeholders"},
		{name: "customRoutes", file: `{"pages": {"enableRouter": true, "customRoutes": [{"method": "GET", "path": "custom_route", "handler": "route"}]}}`},
		{name: "customRoutes with a bad method", file: `{"pages": {"enableRouter": true, "customRoutes": [{"method": "PUT", "path": "x", "handler": "route"}]}}`,
			failOn: "pages.customRoutes[0].method"},
		{name: "customRoutes without a handler", file: `{"pages": {"enableRouter": true, "customRoutes": [{"method": "GET", "path": "x"}]}}`,
			failOn: "pages.customRoutes[0].handler"},
		{name: "customRoutes not an array", file: `{"pages": {"enableRouter": true, "customRoutes": {}}}`, failOn: "pages.customRoutes"},
		{name: "forceRedirect not a bool", file: `{"pages": {"enableRouter": true, "forceRedirect": "yes"}}`, failOn: "pages.forceRedirect"},
		{name: "pagesPath missing", file: `{"pages": {"enableRouter": true, "pagesPath": "/nonexistent/pages"}}`, failOn: "pages.pagesPath"},
		{name: "localizationJsonPath missing", file: `{"pages": {"enableRouter": true, "localizationJsonPath": "/nonexistent/t.json"}}`,
			failOn: "pages.localizationJsonPath"},
		{name: "pagesEndpoint is not built", file: `{"pages": {"enableRouter": true, "pagesEndpoint": "pages"}}`,
			warn: "pages.pagesEndpoint ignored: not built"},
		{name: "customUrls with an unknown page", file: `{"pages": {"enableRouter": true, "customUrls": {"nope": "https://x.example/r"}}}`,
			failOn: "pages.customUrls.nope"},
		{name: "customUrls with a bad URL", file: `{"pages": {"enableRouter": true, "customUrls": {"passwordReset": "x.example/r"}}}`,
			failOn: "pages.customUrls.passwordReset"},
		{name: "router keys without the router", file: `{"pages": {"customUrls": {"passwordReset": "https://x.example/r"}, "forceRedirect": true}}`,
			warn: "pages: [customUrls forceRedirect] ignored: they take effect only with pages.enableRouter"},
		{name: "enableRouter not a bool", file: `{"pages": {"enableRouter": "yes"}}`, failOn: "pages.enableRouter"},
		{name: "unknown key", file: `{"pages": {"enableRoutr": true}}`, failOn: "pages.enableRoutr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warns, err := loadCase{name: tc.name, args: []string{"$FILE"}, file: tc.file}.load(t)
			if tc.failOn != "" {
				var oe *OptionError
				if !errors.As(err, &oe) || oe.Option != tc.failOn {
					t.Fatalf("Load: %v, want an error on %s", err, tc.failOn)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			joined := strings.Join(warns, "\n")
			if tc.warn == "" && len(warns) != 0 {
				t.Errorf("warnings %q, want none", warns)
			}
			if tc.warn != "" && !strings.Contains(joined, tc.warn) {
				t.Errorf("warnings %q, want one containing %q", warns, tc.warn)
			}
		})
	}
}

// TestEveryIgnoredOptionSaysWhy: each Parse Server option Quarry accepts
// and ignores warns with a reason, never "not supported yet".
func TestEveryIgnoredOptionSaysWhy(t *testing.T) {
	for _, name := range unsupported {
		if why := whyIgnored(name); why == "not supported yet" || why == "" {
			t.Errorf("%s is ignored without a reason", name)
		}
	}
}
