package transport

import (
	"errors"
	"html/template"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/schema"
)

// PagesOptions configure the pages the emailed links open, under
// <mount>/apps/: appName, and customPages (page name -> the operator's
// URL, which then gets a redirect instead of Quarry's page).
type PagesOptions struct {
	AppName string
	Custom  map[string]string
	// Router, when set, serves Parse Server's pages router
	// (pages.enableRouter) in place of these pages.
	Router *PagesRouterOptions
}

// The pages, by Parse Server's names (the customPages keys in comments).
const (
	pageChoosePassword          = "choose_password"           // choosePassword
	pagePasswordResetSuccess    = "password_reset_success"    // passwordResetSuccess
	pageInvalidLink             = "invalid_link"              // invalidLink
	pageVerifyEmailSuccess      = "verify_email_success"      // verifyEmailSuccess
	pageInvalidVerificationLink = "invalid_verification_link" // invalidVerificationLink
	pageLinkSendSuccess         = "link_send_success"         // linkSendSuccess
	pageLinkSendFail            = "link_send_fail"            // linkSendFail
)

// codeValidationFailed is Parse's 142.
const codeValidationFailed = 142

// servePages answers <mount>/apps/…: the links of verification and
// password reset emails, the password form and its result pages. They are
// for browsers: no keys, HTML replies, redirects between them.
func (s *Server) servePages(ctx *fasthttp.RequestCtx, path string) bool {
	rel, ok := strings.CutPrefix(path, s.mount.apps)
	if !ok {
		return false
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	// The pages carry tokens in their URLs: never pass them on.
	ctx.Response.Header.Set("Referrer-Policy", "no-referrer")
	ctx.Response.Header.Set("X-Frame-Options", "DENY")
	if s.opts.Pages.Router != nil {
		s.serveRouterPages(ctx, rel)
		return true
	}
	q := ctx.QueryArgs()
	method := string(ctx.Method())
	if page, isPage := strings.CutSuffix(rel, ".html"); isPage && method == "GET" && pageTexts[page].title != "" {
		s.renderPage(ctx, page, q)
		return true
	}
	appID, action, _ := strings.Cut(rel, "/")
	if appID != s.opts.AppID {
		s.renderStatus(ctx, fasthttp.StatusNotFound, "Unknown application", "This link belongs to no application on this server.")
		return true
	}
	switch {
	case action == "verify_email" && method == "GET":
		username, err := s.accounts.VerifyEmail(string(q.Peek("token")))
		if err != nil {
			s.pageError(ctx, pageInvalidVerificationLink, err, nil)
			return true
		}
		s.redirectPage(ctx, pageVerifyEmailSuccess, url.Values{"username": {username}})
	case action == "resend_verification_email" && method == "POST":
		if err := s.accounts.RequestVerificationEmail(string(ctx.PostArgs().Peek("email"))); err != nil {
			s.redirectPage(ctx, pageLinkSendFail, nil)
			return true
		}
		s.redirectPage(ctx, pageLinkSendSuccess, nil)
	case action == "request_password_reset" && method == "GET":
		token := string(q.Peek("token"))
		username, err := s.accounts.ResetTokenUser(token)
		if err != nil {
			s.pageError(ctx, pageInvalidLink, err, nil)
			return true
		}
		s.redirectPage(ctx, pageChoosePassword, url.Values{"token": {token}, "username": {username}})
	case action == "request_password_reset" && method == "POST":
		s.resetPassword(ctx)
	default:
		s.renderStatus(ctx, fasthttp.StatusNotFound, "Page not found", "There is no such page.")
	}
	return true
}

// resetPassword takes the choose_password form: new_password (and
// confirm_password, when the form sends it) for the token.
func (s *Server) resetPassword(ctx *fasthttp.RequestCtx) {
	form := ctx.PostArgs()
	token, password := string(form.Peek("token")), string(form.Peek("new_password"))
	xhr := string(ctx.Request.Header.Peek("X-Requested-With")) == "XMLHttpRequest"
	var err error
	var username string
	if confirm := form.Peek("confirm_password"); confirm != nil && string(confirm) != password {
		username, err = s.accounts.ResetTokenUser(token)
		if err == nil {
			err = schema.Errorf(codeValidationFailed, "The two passwords differ.")
		}
	} else {
		username, err = s.accounts.ResetPassword(token, password)
	}
	switch {
	case xhr && err != nil:
		s.writeError(ctx, err)
	case xhr:
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{})
	case err == nil:
		s.redirectPage(ctx, pagePasswordResetSuccess, url.Values{"username": {username}})
	case errors.Is(err, accounts.ErrInvalidLink):
		s.redirectPage(ctx, pageInvalidLink, nil)
	default:
		s.pageError(ctx, pageChoosePassword, err, url.Values{"token": {token}, "username": {username}})
	}
}

// pageError redirects to page with the error's message (a Parse error's
// own text; anything else is logged and shown as a general failure).
func (s *Server) pageError(ctx *fasthttp.RequestCtx, page string, err error, v url.Values) {
	if v == nil {
		v = url.Values{}
	}
	v.Set("error", s.pageErrorText(err))
	s.redirectPage(ctx, page, v)
}

// redirectPage sends the browser to page, Quarry's or the operator's
// (customPages), with the app's id and name beside v.
func (s *Server) redirectPage(ctx *fasthttp.RequestCtx, page string, v url.Values) {
	if v == nil {
		v = url.Values{}
	}
	v.Set("id", s.opts.AppID)
	v.Set("app", s.appName())
	target := s.baseURL(ctx) + "/apps/" + page + ".html"
	if custom := s.opts.Pages.Custom[page]; custom != "" {
		target = custom
	}
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	ctx.Redirect(target+sep+v.Encode(), fasthttp.StatusFound)
}

func (s *Server) appName() string {
	if s.opts.Pages.AppName != "" {
		return s.opts.Pages.AppName
	}
	return s.opts.AppID
}

// pageData is what the page template shows. PasswordForm shows the new
// password form (posting Token to Action), ResendForm the form asking for
// a new verification link (posting to Action).
type pageData struct {
	Title, Message, Error string
	AppName, Username     string
	Action, Token         string
	PasswordForm          bool
	ResendForm            bool
}

var pageTexts = map[string]struct{ title, message string }{
	pageChoosePassword:          {"Choose a new password", "Type the new password of your account twice."},
	pagePasswordResetSuccess:    {"Password changed", "Your password was changed. You can now sign in with it."},
	pageInvalidLink:             {"Invalid link", "This password reset link is invalid or has expired. Ask the app for a new one."},
	pageVerifyEmailSuccess:      {"Email verified", "Thank you: your email address is now verified."},
	pageInvalidVerificationLink: {"Invalid link", "This verification link is invalid or has expired. Type your email address to get a new one."},
	pageLinkSendSuccess:         {"Link sent", "If an unverified account has this address, a new verification link is on its way."},
	pageLinkSendFail:            {"Link not sent", "No new verification link could be sent. Please try again later."},
}

func (s *Server) renderPage(ctx *fasthttp.RequestCtx, page string, q *fasthttp.Args) {
	t := pageTexts[page]
	d := pageData{Title: t.title, Message: t.message, Error: string(q.Peek("error")), AppName: s.appName(),
		Username: string(q.Peek("username"))}
	switch page {
	case pageChoosePassword:
		d.PasswordForm = true
		d.Token = string(q.Peek("token"))
		d.Action = s.baseURL(ctx) + "/apps/" + s.opts.AppID + "/request_password_reset"
	case pageInvalidVerificationLink:
		d.ResendForm = true
		d.Action = s.baseURL(ctx) + "/apps/" + s.opts.AppID + "/resend_verification_email"
	}
	s.writePage(ctx, fasthttp.StatusOK, d)
}

func (s *Server) renderStatus(ctx *fasthttp.RequestCtx, status int, title, msg string) {
	s.writePage(ctx, status, pageData{Title: title, Message: msg, AppName: s.appName()})
}

func (s *Server) writePage(ctx *fasthttp.RequestCtx, status int, d pageData) {
	ctx.SetStatusCode(status)
	ctx.SetContentType("text/html; charset=utf-8")
	if err := pageTemplate.Execute(ctx, d); err != nil {
		s.log.Error("rendering a page", "err", err)
	}
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · {{.AppName}}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; color: #222; }
h1 { font-size: 1.4rem; }
.error { color: #a00; }
label { display: block; margin-top: 1rem; }
input { width: 100%; padding: .4rem; box-sizing: border-box; }
button { margin-top: 1rem; padding: .5rem 1rem; }
</style>
</head>
<body>
<p>{{.AppName}}</p>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" id="error">{{.Error}}</p>{{end}}
<p>{{.Message}}</p>
{{if .Username}}<p>Account: <strong id="username">{{.Username}}</strong></p>{{end}}
{{if .PasswordForm}}<form method="POST" action="{{.Action}}">
<input type="hidden" name="token" value="{{.Token}}">
<input type="hidden" name="username" value="{{.Username}}">
<label>New password <input type="password" name="new_password" required autocomplete="new-password"></label>
<label>Repeat it <input type="password" name="confirm_password" required autocomplete="new-password"></label>
<button type="submit">Change password</button>
</form>{{end}}
{{if .ResendForm}}<form method="POST" action="{{.Action}}">
<label>Email address <input type="email" name="email" required autocomplete="email"></label>
<button type="submit">Send a new link</button>
</form>{{end}}
</body>
</html>
`))
