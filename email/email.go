// Package email owns the messages the server sends by email: the Adapter
// interface the service calls (verification and password reset links,
// plain messages), the built-in SMTP adapter, the retry queue in front of
// it, and the text/template templates operators may override.
//
// email imports nothing of Quarry's; service calls it, never the reverse.
package email

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/template"
)

// Message is one plain-text email.
type Message struct {
	To      string
	Subject string
	Text    string
}

// Link is what a verification or password reset email says: whose account,
// which app, and the link to follow. Templates see these fields.
type Link struct {
	AppName  string
	Username string
	Email    string
	// URL is the link the user follows (a page under publicServerURL).
	URL string
}

// Adapter sends the server's emails. The service calls it outside any
// lock; an error is logged, never shown to the client (so that a reply
// does not tell whether an email address is known).
type Adapter interface {
	SendVerificationEmail(ctx context.Context, l Link) error
	SendPasswordResetEmail(ctx context.Context, l Link) error
	SendMail(ctx context.Context, m Message) error
}

// ErrBadAddress is returned for an address or subject that holds a line
// break or no "@": it would let a value rewrite the message's headers.
var ErrBadAddress = errors.New("email: invalid address or header value")

// Template is a message template: a subject line and a body, both Go
// text/template over a Link.
type Template struct {
	subject *template.Template
	body    *template.Template
}

// ParseTemplate reads a template: its first line is "Subject: <subject
// template>", then an empty line, then the body template.
func ParseTemplate(name, text string) (*Template, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	first, body, ok := strings.Cut(text, "\n\n")
	subject, hasSubject := strings.CutPrefix(first, "Subject:")
	if !ok || !hasSubject || strings.Contains(first, "\n") {
		return nil, fmt.Errorf("email template %s: want a first line \"Subject: ...\", an empty line, then the body", name)
	}
	st, err := template.New(name + " subject").Option("missingkey=error").Parse(strings.TrimSpace(subject))
	if err != nil {
		return nil, fmt.Errorf("email template %s: %w", name, err)
	}
	bt, err := template.New(name).Option("missingkey=error").Parse(body)
	if err != nil {
		return nil, fmt.Errorf("email template %s: %w", name, err)
	}
	t := &Template{subject: st, body: bt}
	if _, err := t.Render(Link{AppName: "app", Username: "user", Email: "user@example.com", URL: "https://example.com/"}); err != nil {
		return nil, err // a template naming an unknown field fails at start, not at the first sign-up
	}
	return t, nil
}

// LoadTemplate reads a template file (see ParseTemplate).
func LoadTemplate(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("email template: %w", err)
	}
	return ParseTemplate(path, string(data))
}

// Render fills the template for one link; the message goes to l.Email.
func (t *Template) Render(l Link) (Message, error) {
	var subject, body bytes.Buffer
	if err := t.subject.Execute(&subject, l); err != nil {
		return Message{}, fmt.Errorf("email subject: %w", err)
	}
	if err := t.body.Execute(&body, l); err != nil {
		return Message{}, fmt.Errorf("email body: %w", err)
	}
	return Message{To: l.Email, Subject: strings.TrimSpace(subject.String()), Text: body.String()}, nil
}

// Templates are the two link emails.
type Templates struct {
	Verification  *Template
	PasswordReset *Template
}

// The built-in texts.
const (
	defaultVerification = `Subject: Please verify your email address for {{.AppName}}

Hello {{.Username}},

someone, probably you, gave {{.Email}} as the email address of an account
on {{.AppName}}. To confirm that this address is yours, open this link:

{{.URL}}

If you did not ask for this, you can ignore this message.
`
	defaultPasswordReset = `Subject: Choose a new password for {{.AppName}}

Hello {{.Username}},

a new password was requested for your account on {{.AppName}}.
Open this link to choose one:

{{.URL}}

If you did not ask for a new password, ignore this message: your current
password keeps working.
`
)

// DefaultTemplates returns the built-in templates.
func DefaultTemplates() Templates {
	v, err := ParseTemplate("verification", defaultVerification)
	if err != nil {
		panic(err)
	}
	r, err := ParseTemplate("passwordReset", defaultPasswordReset)
	if err != nil {
		panic(err)
	}
	return Templates{Verification: v, PasswordReset: r}
}

// LoadTemplates returns the built-in templates with those named by a
// non-empty path replaced by the file's.
func LoadTemplates(verificationPath, passwordResetPath string) (Templates, error) {
	t := DefaultTemplates()
	var err error
	if verificationPath != "" {
		if t.Verification, err = LoadTemplate(verificationPath); err != nil {
			return Templates{}, err
		}
	}
	if passwordResetPath != "" {
		if t.PasswordReset, err = LoadTemplate(passwordResetPath); err != nil {
			return Templates{}, err
		}
	}
	return t, nil
}

// linkSender gives any SendMail the two link emails through templates.
type linkSender struct {
	templates Templates
	send      func(ctx context.Context, m Message) error
}

func (s linkSender) SendVerificationEmail(ctx context.Context, l Link) error {
	m, err := s.templates.Verification.Render(l)
	if err != nil {
		return Permanent(err)
	}
	return s.send(ctx, m)
}

func (s linkSender) SendPasswordResetEmail(ctx context.Context, l Link) error {
	m, err := s.templates.PasswordReset.Render(l)
	if err != nil {
		return Permanent(err)
	}
	return s.send(ctx, m)
}
