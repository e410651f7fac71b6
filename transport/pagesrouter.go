package transport

import (
	"embed"
	"errors"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// PagesRouterOptions are Parse Server's experimental pages router
// (pages.enableRouter): page files answered with their placeholders
// filled in, localized by the request's locale, or redirects to them.
type PagesRouterOptions struct {
	// Files holds the page files (pages.pagesPath); nil means Quarry's own
	// (routerpages/), under Parse Server's file names.
	Files fs.FS
	// CustomURLs (pages.customUrls, page id -> URL) replace a page by a
	// redirect to the operator's site.
	CustomURLs map[string]string
	// ForceRedirect answers every page with a redirect, never its content.
	ForceRedirect bool
	// Localization (enableLocalization) looks a page up in the folder of
	// the locale, then of its language, and fills in Translations.
	Localization bool
	// Translations is localizationJsonPath's content:
	// {locale: {"translation": {placeholder: text}}}.
	Translations map[string]any
	// FallbackLocale is the translation used when the locale has none.
	FallbackLocale string
	// Placeholders are values every page gets; PlaceholdersFunction names
	// a cloud function answering them for the page's parameters.
	Placeholders         map[string]any
	PlaceholdersFunction string
	// EncodeHeaders URI-encodes the x-parse-page-param-* headers
	// (encodePageParamHeaders), for values that are not ASCII.
	EncodeHeaders bool
	// CustomRoutes are pages served at <mount>/apps/<appId>/<path>.
	CustomRoutes []PagesRoute
}

// PagesRoute is one of pages.customRoutes; Handler names the cloud
// function that picks the page ({file, query}).
type PagesRoute struct {
	Method, Path, Handler string
}

// routerPageFiles are Quarry's own page files for the pages router.
//
//go:embed routerpages/*.html
var routerPageFiles embed.FS

// defaultRouterPages is the folder of Quarry's own router pages.
func defaultRouterPages() fs.FS {
	sub, _ := fs.Sub(routerPageFiles, "routerpages") // the folder is embedded
	return sub
}

// The router's pages: id (the customUrls key) and file.
type routerPage struct{ id, file string }

var (
	routerPasswordReset                = routerPage{"passwordReset", "password_reset.html"}
	routerPasswordResetSuccess         = routerPage{"passwordResetSuccess", "password_reset_success.html"}
	routerPasswordResetLinkInvalid     = routerPage{"passwordResetLinkInvalid", "password_reset_link_invalid.html"}
	routerEmailVerificationSuccess     = routerPage{"emailVerificationSuccess", "email_verification_success.html"}
	routerEmailVerificationSendFail    = routerPage{"emailVerificationSendFail", "email_verification_send_fail.html"}
	routerEmailVerificationSendSuccess = routerPage{"emailVerificationSendSuccess", "email_verification_send_success.html"}
	routerEmailVerificationLinkInvalid = routerPage{"emailVerificationLinkInvalid", "email_verification_link_invalid.html"}
	routerEmailVerificationLinkExpired = routerPage{"emailVerificationLinkExpired", "email_verification_link_expired.html"}
)

// pageParamHeaderPrefix names the response headers that repeat a page's
// parameters, for programs that read them instead of the HTML.
const pageParamHeaderPrefix = "x-parse-page-param-"

// How a page is answered: as the request's method decides (GET shows the
// page, POST redirects to it), or always one way.
type pageAnswer int

const (
	answerByMethod pageAnswer = iota
	answerRedirect
	answerContent
)

// Parse's error codes of a password form posted without a field.
const (
	codeUsernameMissing = 200
	codePasswordMissing = 201
	codeOtherCause      = -1
)

// serveRouterPages answers <mount>/apps/<rel> as Parse Server's pages
// router does.
func (s *Server) serveRouterPages(ctx *fasthttp.RequestCtx, rel string) {
	method := string(ctx.Method())
	appID, action, hasApp := strings.Cut(rel, "/")
	if rel == "choose_password" && method == "GET" {
		if string(ctx.QueryArgs().Peek("appId")) != s.opts.AppID {
			writeJSON(ctx, fasthttp.StatusForbidden, map[string]any{"error": "unauthorized"})
			return
		}
		s.routerChoosePassword(ctx)
		return
	}
	if hasApp && s.routerAction(method, action) {
		if appID != s.opts.AppID {
			writeJSON(ctx, fasthttp.StatusForbidden, map[string]any{"error": "unauthorized"})
			return
		}
		s.routerServeAction(ctx, method, action)
		return
	}
	if method != "GET" {
		routerNotFound(ctx)
		return
	}
	s.routerStatic(ctx, rel)
}

// routerAction reports whether <appId>/action is one of the router's
// routes or custom routes for method.
func (s *Server) routerAction(method, action string) bool {
	switch {
	case action == "verify_email" && method == "GET",
		action == "resend_verification_email" && method == "POST",
		action == "request_password_reset" && (method == "GET" || method == "POST"):
		return true
	}
	return s.customPageRoute(method, action) != nil
}

func (s *Server) customPageRoute(method, action string) *PagesRoute {
	for i, r := range s.opts.Pages.Router.CustomRoutes {
		if r.Method == method && r.Path == action {
			return &s.opts.Pages.Router.CustomRoutes[i]
		}
	}
	return nil
}

func (s *Server) routerServeAction(ctx *fasthttp.RequestCtx, method, action string) {
	q := ctx.QueryArgs()
	switch {
	case action == "verify_email":
		token, username := string(q.Peek("token")), string(q.Peek("username"))
		if token == "" {
			s.goToPage(ctx, routerEmailVerificationLinkInvalid, nil, answerByMethod)
			return
		}
		verified, err := s.accounts.VerifyEmail(token)
		if err != nil {
			s.goToPage(ctx, routerEmailVerificationLinkExpired, pageParams("username", username), answerByMethod)
			return
		}
		s.goToPage(ctx, routerEmailVerificationSuccess, pageParams("username", verified), answerByMethod)
	case action == "resend_verification_email":
		s.routerResendVerification(ctx)
	case action == "request_password_reset" && method == "GET":
		token := string(q.Peek("token"))
		if token == "" {
			s.goToPage(ctx, routerPasswordResetLinkInvalid, nil, answerByMethod)
			return
		}
		username, err := s.accounts.ResetTokenUser(token)
		if err != nil {
			s.goToPage(ctx, routerPasswordResetLinkInvalid, pageParams("username", string(q.Peek("username"))), answerByMethod)
			return
		}
		s.goToPage(ctx, routerPasswordReset, pageParams("token", token, "username", username), answerByMethod)
	case action == "request_password_reset":
		s.routerResetPassword(ctx)
	default:
		s.routerCustomRoute(ctx, s.customPageRoute(method, action))
	}
}

// routerChoosePassword is GET choose_password: the password form for the
// token and username of the query.
func (s *Server) routerChoosePassword(ctx *fasthttp.RequestCtx) {
	q := ctx.QueryArgs()
	s.goToPage(ctx, routerPasswordReset, pageParams("token", string(q.Peek("token")), "username", string(q.Peek("username"))), answerByMethod)
}

// routerResendVerification is the expired link page's form: a new link
// for the account named by username.
func (s *Server) routerResendVerification(ctx *fasthttp.RequestCtx) {
	username := string(ctx.PostArgs().Peek("username"))
	if username == "" {
		s.goToPage(ctx, routerEmailVerificationLinkInvalid, nil, answerByMethod)
		return
	}
	err := errors.New("no such user")
	res, findErr := s.svc.Find(service.Auth{Master: true}, "_User", service.FindParams{Where: map[string]any{"username": username}, Limit: 1})
	if findErr == nil && len(res.Results) == 1 {
		err = s.accounts.RequestVerificationEmail(res.Results[0]["email"])
	}
	if err != nil {
		s.goToPage(ctx, routerEmailVerificationSendFail, nil, answerByMethod)
		return
	}
	s.goToPage(ctx, routerEmailVerificationSendSuccess, nil, answerByMethod)
}

// routerResetPassword takes the password form: username, token and
// new_password. A browser gets the result page; a script
// (X-Requested-With: XMLHttpRequest) gets JSON.
func (s *Server) routerResetPassword(ctx *fasthttp.RequestCtx) {
	form := ctx.PostArgs()
	username, token, password := string(form.Peek("username")), string(form.Peek("token")), string(form.Peek("new_password"))
	xhr := string(ctx.Request.Header.Peek("X-Requested-With")) == "XMLHttpRequest"
	if !xhr && (username == "" || token == "" || password == "") {
		s.goToPage(ctx, routerPasswordResetLinkInvalid, nil, answerByMethod)
		return
	}
	switch {
	case username == "":
		s.writeError(ctx, schema.Errorf(codeUsernameMissing, "Missing username"))
		return
	case token == "":
		s.writeError(ctx, schema.Errorf(codeOtherCause, "Missing token"))
		return
	case password == "":
		s.writeError(ctx, schema.Errorf(codePasswordMissing, "Missing password"))
		return
	}
	err := s.resetPasswordOf(username, token, password)
	if xhr {
		if err != nil {
			s.writeError(ctx, schema.Errorf(codeOtherCause, "%s", s.pageErrorText(err)))
			return
		}
		writeJSON(ctx, fasthttp.StatusOK, "Password successfully reset")
		return
	}
	if err != nil {
		s.goToPage(ctx, routerPasswordReset, pageParams("username", username, "token", token, "error", s.pageErrorText(err)), answerContent)
		return
	}
	s.goToPage(ctx, routerPasswordResetSuccess, pageParams("username", username), answerContent)
}

// resetPasswordOf sets the password when the token is the named user's.
func (s *Server) resetPasswordOf(username, token, password string) error {
	owner, err := s.accounts.ResetTokenUser(token)
	if err != nil {
		return err
	}
	if owner != username {
		return accounts.ErrInvalidLink
	}
	_, err = s.accounts.ResetPassword(token, password)
	return err
}

// pageErrorText is what a page shows of err: a Parse error's own message;
// anything else is logged and shown as a general failure.
func (s *Server) pageErrorText(err error) string {
	if pe, ok := schema.AsError(err); ok {
		return pe.Message
	}
	s.log.Error("email page", "err", err)
	return "Something went wrong. Please try again later."
}

// routerCustomRoute runs a custom route's cloud function, which names the
// page file to show ({file, query}); none answers 404.
func (s *Server) routerCustomRoute(ctx *fasthttp.RequestCtx, r *PagesRoute) {
	query, body := map[string]any{}, map[string]any{}
	ctx.QueryArgs().VisitAll(func(k, v []byte) { query[string(k)] = string(v) })
	if string(ctx.Method()) == "POST" {
		ctx.PostArgs().VisitAll(func(k, v []byte) { body[string(k)] = string(v) })
	}
	res, err := s.svc.RunFunction(service.Auth{Master: true}, r.Handler, map[string]any{
		"method": r.Method, "path": r.Path, "query": query, "body": body, "locale": s.pageLocale(ctx)})
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	m, _ := res.(map[string]any)
	file, _ := m["file"].(string)
	if file == "" || !fs.ValidPath(file) {
		routerNotFound(ctx)
		return
	}
	params := map[string]string{}
	if q, ok := m["query"].(map[string]any); ok {
		for k, v := range q {
			params[k] = placeholderText(v)
		}
	}
	s.goToPage(ctx, routerPage{id: file, file: file}, params, answerContent)
}

// routerStatic serves a file of the pages folder; an HTML file gets its
// placeholders filled in.
func (s *Server) routerStatic(ctx *fasthttp.RequestCtx, rel string) {
	if !fs.ValidPath(rel) || rel == "" {
		routerNotFound(ctx)
		return
	}
	if !strings.HasSuffix(rel, ".html") {
		data, err := fs.ReadFile(s.routerFiles(), rel)
		if err != nil {
			routerNotFound(ctx)
			return
		}
		if ct := mime.TypeByExtension(path.Ext(rel)); ct != "" {
			ctx.SetContentType(ct)
		}
		ctx.SetBody(data)
		return
	}
	params := s.defaultPageParams(ctx)
	locale := s.pageLocale(ctx)
	if locale != "" {
		params["locale"] = locale
	}
	s.pageResponse(ctx, rel, params, s.jsonPlaceholders(locale, params))
}

// goToPage answers with page: a redirect to the operator's custom URL,
// else the page file (localized) or a redirect to it.
func (s *Server) goToPage(ctx *fasthttp.RequestCtx, page routerPage, params map[string]string, how pageAnswer) {
	r := s.opts.Pages.Router
	redirect := r.ForceRedirect || how == answerRedirect || (how == answerByMethod && string(ctx.Method()) == "POST")
	if params == nil {
		params = map[string]string{}
	}
	for k, v := range s.defaultPageParams(ctx) {
		params[k] = v
	}
	// The locale goes on to every following page.
	locale := s.pageLocale(ctx)
	params["locale"] = locale
	if custom := r.CustomURLs[page.id]; custom != "" {
		s.redirectResponse(ctx, custom, params)
		return
	}
	file, folder := page.file, ""
	if r.Localization && locale != "" {
		file, folder = s.localizedPage(page.file, locale)
	}
	if redirect {
		target := s.baseURL(ctx) + "/apps/" + page.file
		if folder != "" {
			target = s.baseURL(ctx) + "/apps/" + folder + "/" + page.file
		}
		s.redirectResponse(ctx, target, params)
		return
	}
	s.pageResponse(ctx, file, params, s.jsonPlaceholders(locale, params))
}

// localizedPage finds file in the locale's folder, else its language's,
// else the pages folder itself.
func (s *Server) localizedPage(file, locale string) (path, folder string) {
	language, _, _ := strings.Cut(locale, "-")
	for _, dir := range []string{locale, language} {
		if dir == "" || !fs.ValidPath(dir) || strings.Contains(dir, "/") {
			continue
		}
		if _, err := fs.Stat(s.routerFiles(), dir+"/"+file); err == nil {
			return dir + "/" + file, dir
		}
	}
	return file, ""
}

func (s *Server) routerFiles() fs.FS {
	if f := s.opts.Pages.Router.Files; f != nil {
		return f
	}
	return defaultRouterPages()
}

func (s *Server) defaultPageParams(ctx *fasthttp.RequestCtx) map[string]string {
	return map[string]string{"appId": s.opts.AppID, "appName": s.appName(), "publicServerUrl": s.baseURL(ctx)}
}

// pageLocale is the request's locale: the locale query or form field,
// else the x-parse-page-param-locale header.
func (s *Server) pageLocale(ctx *fasthttp.RequestCtx) string {
	if v := ctx.QueryArgs().Peek("locale"); len(v) > 0 {
		return string(v)
	}
	if string(ctx.Method()) == "POST" {
		if v := ctx.PostArgs().Peek("locale"); len(v) > 0 {
			return string(v)
		}
	}
	return string(ctx.Request.Header.Peek(pageParamHeaderPrefix + "locale"))
}

// jsonPlaceholders are the locale's translation (its language's, else the
// fallback locale's), its own placeholders filled with params.
func (s *Server) jsonPlaceholders(locale string, params map[string]string) map[string]any {
	r := s.opts.Pages.Router
	if !r.Localization || r.Translations == nil {
		return nil
	}
	if locale == "" {
		locale = r.FallbackLocale
	}
	language, _, _ := strings.Cut(locale, "-")
	var resource map[string]any
	for _, key := range []string{locale, language, r.FallbackLocale} {
		if m, ok := r.Translations[key].(map[string]any); ok {
			resource = m
			break
		}
	}
	translation, _ := resource["translation"].(map[string]any)
	values := make(map[string]any, len(params))
	for k, v := range params {
		values[k] = v
	}
	return fillTranslation(translation, values).(map[string]any)
}

func fillTranslation(v any, params map[string]any) any {
	switch v := v.(type) {
	case string:
		return fillPlaceholders(v, params)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = fillTranslation(x, params)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = fillTranslation(x, params)
		}
		return out
	case nil:
		return map[string]any{}
	}
	return v
}

// pageResponse answers a page file with its placeholders filled in: the
// page parameters, then the configured placeholders, then the
// translation's, each overriding the one before. The parameters are also
// headers.
func (s *Server) pageResponse(ctx *fasthttp.RequestCtx, file string, params map[string]string, translated map[string]any) {
	data, err := fs.ReadFile(s.routerFiles(), file)
	if err != nil {
		routerNotFound(ctx)
		return
	}
	values := map[string]any{}
	for k, v := range params {
		values[k] = v
	}
	configured, err := s.configuredPlaceholders(params)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	for k, v := range configured {
		values[k] = v
	}
	for k, v := range translated {
		values[k] = v
	}
	s.pageParamHeaders(ctx, params)
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBodyString(fillPlaceholders(string(data), values))
}

// configuredPlaceholders are pages.placeholders: fixed, or the answer of
// the named cloud function to the page's parameters.
func (s *Server) configuredPlaceholders(params map[string]string) (map[string]any, error) {
	r := s.opts.Pages.Router
	if r.PlaceholdersFunction == "" {
		return r.Placeholders, nil
	}
	in := make(map[string]any, len(params))
	for k, v := range params {
		in[k] = v
	}
	res, err := s.svc.RunFunction(service.Auth{Master: true}, r.PlaceholdersFunction, in)
	if err != nil {
		return nil, err
	}
	m, _ := res.(map[string]any)
	return m, nil
}

// redirectResponse sends the browser to target with params in its query
// (replacing any of the same name) and in headers: 303, as Parse Server.
func (s *Server) redirectResponse(ctx *fasthttp.RequestCtx, target string, params map[string]string) {
	u, err := url.Parse(target)
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	q := u.Query()
	for k, v := range params {
		if v != "" {
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	s.pageParamHeaders(ctx, params)
	ctx.Response.Header.Set("Location", u.String())
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

func (s *Server) pageParamHeaders(ctx *fasthttp.RequestCtx, params map[string]string) {
	for k, v := range params {
		if v == "" {
			continue
		}
		if s.opts.Pages.Router.EncodeHeaders {
			v = encodeURI(v)
		}
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			continue // a request's value never splits the response's headers
		}
		ctx.Response.Header.Set(pageParamHeaderPrefix+strings.ToLower(k), v)
	}
}

// encodeURI escapes what JavaScript's encodeURI escapes: every byte but
// letters, digits and -_.!~*'();/?:@&=+$,#.
func encodeURI(s string) string {
	const keep = "-_.!~*'();/?:@&=+$,#"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(keep, c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
	}
	return b.String()
}

func routerNotFound(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusNotFound)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetBodyString("Not found.")
}

// pageParams builds page parameters from name, value pairs.
func pageParams(kv ...string) map[string]string {
	out := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}
