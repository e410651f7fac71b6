package config

import (
	"errors"
	"fmt"
	"slices"
)

// pagesOption is pages, Parse Server's experimental pages router. Without
// enableRouter (Parse Server's default) Parse Server ignores every other
// key, and so does Quarry, which serves the classic pages under
// <mount>/apps/ (customPages sets their URLs). The router itself
// (localized pages, customUrls, placeholders, forceRedirect) is not built:
// enableRouter: true is accepted with a warning saying so.
var pagesOption = &option{name: "pages", group: groupAccounts, env: []string{"PARSE_SERVER_PAGES"},
	def:   `{"enableRouter": false}`,
	usage: "Parse Server's experimental pages router: not built; the classic pages are served (customPages)",
	field: func(o *Options) any { return &o.Pages }}

// pagesRouterKeys are the pages keys that matter only with enableRouter.
var pagesRouterKeys = []string{"customRoutes", "customUrls", "enableLocalization", "encodePageParamHeaders",
	"forceRedirect", "localizationFallbackLocale", "localizationJsonPath", "pagesEndpoint", "pagesPath", "placeholders"}

// checkPages refuses a non-boolean enableRouter or an unknown key, and
// warns when the router is asked for, or when router keys are set without
// it (Parse Server ignores them then, as Quarry does).
func checkPages(pages map[string]any, check func(string, error), warn func(string, ...any)) {
	if len(pages) == 0 {
		return
	}
	router, isBool := pages["enableRouter"].(bool)
	if v, ok := pages["enableRouter"]; ok && !isBool {
		check("pages.enableRouter", fmt.Errorf("want true or false, got %v", v))
		return
	}
	var routerOnly []string
	for k := range pages {
		switch {
		case k == "enableRouter":
		case slices.Contains(pagesRouterKeys, k):
			routerOnly = append(routerOnly, k)
		default:
			check("pages."+k, errors.New("not a pages option of Parse Server"))
		}
	}
	slices.Sort(routerOnly)
	if router {
		warn("pages.enableRouter: ignored (Parse Server's experimental pages router is not built: " +
			"the email links open Quarry's classic pages under <mount>/apps/, in English, " +
			"at the URLs customPages sets; localization, customUrls, placeholders and forceRedirect have no effect)")
		return
	}
	if len(routerOnly) > 0 {
		warn("pages: %v ignored: they take effect only with pages.enableRouter, as in Parse Server", routerOnly)
	}
}
