package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
)

// TestWarnMissingFunctions: every option naming a cloud function that is
// not defined is named at start-up, the pages router's included (its
// placeholders and customRoutes handlers count only with the router on).
func TestWarnMissingFunctions(t *testing.T) {
	routes := []any{map[string]any{"method": "GET", "path": "p", "handler": "routeFn"}}
	for _, tc := range []struct {
		name     string
		edit     func(*config.Options)
		defined  []string
		want     []string
		wantNone bool
	}{
		{name: "validatorCallback", edit: func(o *config.Options) { o.Accounts.PasswordPolicy.ValidatorCallback = "judge" },
			want: []string{"passwordPolicy.validatorCallback"}},
		{name: "pages functions, router on", edit: func(o *config.Options) {
			o.Pages = map[string]any{"enableRouter": true, "placeholders": "fill", "customRoutes": routes}
		}, want: []string{"pages.placeholders", "pages.customRoutes[0].handler"}},
		{name: "pages functions defined", edit: func(o *config.Options) {
			o.Pages = map[string]any{"enableRouter": true, "placeholders": "fill", "customRoutes": routes}
		}, defined: []string{"fill", "routeFn"}, wantNone: true},
		{name: "router off", edit: func(o *config.Options) {
			o.Pages = map[string]any{"placeholders": "fill", "customRoutes": routes}
		}, wantNone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &config.Options{}
			tc.edit(opts)
			var buf bytes.Buffer
			warnMissingFunctions(opts, tc.defined, slog.New(slog.NewTextHandler(&buf, nil)))
			if tc.wantNone && buf.Len() != 0 {
				t.Errorf("warned %q, want nothing", buf.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), "option="+w) {
					t.Errorf("log %q names no %s", buf.String(), w)
				}
			}
		})
	}
}
