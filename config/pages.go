package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// pagesOption is pages, Parse Server's experimental pages router. Without
// enableRouter (Parse Server's default) Parse Server ignores every other
// key, and so does Quarry, which serves the classic pages under
// <mount>/apps/ (customPages sets their URLs). With enableRouter, Quarry
// serves the router's pages as Parse Server does: its page files (Quarry's
// own, or pagesPath's), localized by the locale parameter (subfolders and
// localizationJsonPath), placeholders filled in, customUrls, forceRedirect
// and customRoutes. Only pagesEndpoint is not built (the links stay
// under apps/).
var pagesOption = &option{name: "pages", group: groupAccounts, env: []string{"PARSE_SERVER_PAGES"},
	def:   `{"enableRouter": false}`,
	usage: "with enableRouter, Parse Server's pages router (localization, placeholders, customRoutes...)",
	field: func(o *Options) any { return &o.Pages }}

// PagesRouterPageIDs are the page ids of pages.customUrls.
var PagesRouterPageIDs = []string{"passwordReset", "passwordResetSuccess", "passwordResetLinkInvalid",
	"emailVerificationSuccess", "emailVerificationSendFail", "emailVerificationSendSuccess",
	"emailVerificationLinkInvalid", "emailVerificationLinkExpired"}

// DefaultPagesFallbackLocale is Parse Server's localizationFallbackLocale.
const DefaultPagesFallbackLocale = "en"

// PagesRoute is one of pages.customRoutes: a page served at
// <mount>/apps/<appId>/<Path> for Method. Handler names the cloud
// function that stands for Parse Server's handler: it answers
// {file, query} (no file: 404).
type PagesRoute struct {
	Method, Path, Handler string
}

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

// PagesSwitch reads one of the router's boolean keys (forceRedirect,
// enableLocalization, encodePageParamHeaders); false unset.
func (o *Options) PagesSwitch(name string) bool {
	on, _ := o.Pages[name].(bool)
	return on
}

// PagesString reads one of the router's string keys (pagesPath,
// localizationJsonPath, localizationFallbackLocale); localizationFallbackLocale
// defaults to DefaultPagesFallbackLocale.
func (o *Options) PagesString(name string) string {
	s, _ := o.Pages[name].(string)
	if s == "" && name == "localizationFallbackLocale" {
		return DefaultPagesFallbackLocale
	}
	return s
}

// PagesPlaceholders are pages.placeholders: fixed values (an object), or
// the name of a cloud function that answers them for a page's parameters
// (Parse Server's function form).
func (o *Options) PagesPlaceholders() (fixed map[string]any, function string) {
	switch v := o.Pages["placeholders"].(type) {
	case map[string]any:
		return v, ""
	case string:
		return nil, v
	}
	return nil, ""
}

// PagesCustomRoutes are pages.customRoutes.
func (o *Options) PagesCustomRoutes() []PagesRoute {
	raw, _ := o.Pages["customRoutes"].([]any)
	var out []PagesRoute
	for _, r := range raw {
		m, _ := r.(map[string]any)
		method, _ := m["method"].(string)
		path, _ := m["path"].(string)
		handler, _ := m["handler"].(string)
		out = append(out, PagesRoute{Method: strings.ToUpper(method), Path: strings.Trim(path, "/"), Handler: handler})
	}
	return out
}

// pagesRouterKeys are the pages keys that matter only with enableRouter.
var pagesRouterKeys = []string{"customRoutes", "customUrls", "enableLocalization", "encodePageParamHeaders",
	"forceRedirect", "localizationFallbackLocale", "localizationJsonPath", "pagesEndpoint", "pagesPath", "placeholders"}

// pagesRouterNotBuilt are the router keys Quarry accepts and ignores.
var pagesRouterNotBuilt = []string{"pagesEndpoint"}

// checkPages refuses a malformed pages object, and warns when router
// keys are set without the router (Parse Server ignores them then, as
// Quarry does) or name what Quarry does not build.
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
	checkPagesCustomURLs(pages, check)
	checkPagesValues(pages, check)
	if !router {
		if len(routerOnly) > 0 {
			warn("pages: %v ignored: they take effect only with pages.enableRouter, as in Parse Server", routerOnly)
		}
		return
	}
	for _, k := range pagesRouterNotBuilt {
		if _, set := pages[k]; set {
			warn("pages.%s ignored: not built (the emailed links and pages stay under <mount>/apps/)", k)
		}
	}
}

func checkPagesCustomURLs(pages map[string]any, check func(string, error)) {
	urls, ok := pages["customUrls"]
	if !ok {
		return
	}
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

// checkPagesValues checks the types of the router's other keys, and that
// pagesPath is a folder and localizationJsonPath a readable file (Parse
// Server stops at start-up when it cannot load the file).
func checkPagesValues(pages map[string]any, check func(string, error)) {
	for _, k := range []string{"forceRedirect", "enableLocalization", "encodePageParamHeaders"} {
		if v, ok := pages[k]; ok {
			if _, isBool := v.(bool); !isBool {
				check("pages."+k, fmt.Errorf("want true or false, got %v", v))
			}
		}
	}
	for _, k := range []string{"pagesPath", "localizationJsonPath", "localizationFallbackLocale", "pagesEndpoint"} {
		if v, ok := pages[k]; ok {
			if s, isString := v.(string); !isString || s == "" {
				check("pages."+k, fmt.Errorf("want a non-empty string, got %v", v))
			}
		}
	}
	if p, ok := pages["pagesPath"].(string); ok && p != "" {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			check("pages.pagesPath", fmt.Errorf("%q is not a folder", p))
		}
	}
	if p, ok := pages["localizationJsonPath"].(string); ok && p != "" {
		var translations map[string]any
		if b, err := os.ReadFile(p); err != nil || json.Unmarshal(b, &translations) != nil {
			check("pages.localizationJsonPath", fmt.Errorf("failed to load JSON file %q (want {locale: {translation: {...}}})", p))
		}
	}
	if v, ok := pages["placeholders"]; ok {
		switch p := v.(type) {
		case map[string]any:
		case string:
			if p == "" {
				check("pages.placeholders", errors.New("want an object, or the name of a cloud function"))
			}
		default:
			check("pages.placeholders", fmt.Errorf("want an object, or the name of a cloud function, got %v", v))
		}
	}
	if v, ok := pages["customRoutes"]; ok {
		checkPagesCustomRoutes(v, check)
	}
}

func checkPagesCustomRoutes(v any, check func(string, error)) {
	routes, ok := v.([]any)
	if !ok {
		check("pages.customRoutes", fmt.Errorf("want an array of {method, path, handler}, got %v", v))
		return
	}
	for i, r := range routes {
		name := fmt.Sprintf("pages.customRoutes[%d]", i)
		m, _ := r.(map[string]any)
		method, _ := m["method"].(string)
		path, _ := m["path"].(string)
		handler, _ := m["handler"].(string)
		switch {
		case m == nil:
			check(name, fmt.Errorf("want {method, path, handler}, got %v", r))
		case strings.ToUpper(method) != "GET" && strings.ToUpper(method) != "POST":
			check(name+".method", fmt.Errorf("want GET or POST, got %v", m["method"]))
		case strings.Trim(path, "/") == "" || strings.Contains(path, ".."):
			check(name+".path", fmt.Errorf("want a path under <mount>/apps/<appId>/, got %v", m["path"]))
		case handler == "":
			check(name+".handler", fmt.Errorf("want the name of a cloud function, got %v", m["handler"]))
		}
	}
}
