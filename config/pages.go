package config

import (
	"errors"
	"fmt"
	"slices"
)

// pagesOption is pages, Parse Server's experimental pages router. Without
// enableRouter (Parse Server's default) Parse Server ignores every other
// key, and so does Quarry, which serves the classic pages under
// <mount>/apps/ (customPages sets their URLs). With enableRouter, the
// operator's customUrls replace Quarry's pages and the redirects carry
// the router's page parameters; the rest of the router (localized pages,
// placeholders, forceRedirect, its own paths) is not built and warns.
var pagesOption = &option{name: "pages", group: groupAccounts, env: []string{"PARSE_SERVER_PAGES"},
	def:   `{"enableRouter": false}`,
	usage: "with enableRouter, customUrls (page id -> URL) replace Quarry's pages; localization etc. warn",
	field: func(o *Options) any { return &o.Pages }}

// PagesRouterPageIDs are the page ids of pages.customUrls.
var PagesRouterPageIDs = []string{"passwordReset", "passwordResetSuccess", "passwordResetLinkInvalid",
	"emailVerificationSuccess", "emailVerificationSendFail", "emailVerificationSendSuccess",
	"emailVerificationLinkInvalid", "emailVerificationLinkExpired"}

// PagesRouter reports pages.enableRouter.
func (o *Options) PagesRouter() bool {
	on, _ := o.Pages["enableRouter"].(bool)
	return on
}

// PagesCustomURLs are pages.customUrls (page id -> URL) when the router
// is on, nil otherwise (Parse Server ignores them then).
func (o *Options) PagesCustomURLs() map[string]string {
	if !o.PagesRouter() {
		return nil
	}
	raw, _ := o.Pages["customUrls"].(map[string]any)
	out := map[string]string{}
	for id, u := range raw {
		if s, ok := u.(string); ok && s != "" {
			out[id] = s
		}
	}
	return out
}

// pagesRouterBuilt are the router keys Quarry acts on.
var pagesRouterBuilt = []string{"customUrls"}

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
	if urls, ok := pages["customUrls"]; ok {
		m, isMap := urls.(map[string]any)
		if !isMap {
			check("pages.customUrls", fmt.Errorf("want an object of page id -> URL, got %v", urls))
		}
		for id, u := range m {
			s, _ := u.(string)
			switch {
			case !slices.Contains(PagesRouterPageIDs, id):
				check("pages.customUrls."+id, fmt.Errorf("not a page id; want one of %v", PagesRouterPageIDs))
			case s == "":
				check("pages.customUrls."+id, fmt.Errorf("want a URL, got %v", u))
			default:
				check("pages.customUrls."+id, checkHTTPURL(s))
			}
		}
	}
	if router {
		var notBuilt []string
		for _, k := range routerOnly {
			if !slices.Contains(pagesRouterBuilt, k) {
				notBuilt = append(notBuilt, k)
			}
		}
		why := "the email links open Quarry's pages under <mount>/apps/, in English"
		warn("pages.enableRouter: customUrls and the redirects' page parameters are served; the rest of Parse Server's " +
			"experimental pages router (localization, placeholders, forceRedirect, pagesPath, pagesEndpoint, customRoutes) is not built: " + why)
		if len(notBuilt) > 0 {
			warn("pages: %v ignored: not built (%s)", notBuilt, why)
		}
		return
	}
	if len(routerOnly) > 0 {
		warn("pages: %v ignored: they take effect only with pages.enableRouter, as in Parse Server", routerOnly)
	}
}
