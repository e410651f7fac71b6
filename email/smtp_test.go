package email_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/email"
	"github.com/quarrydata/quarry/email/emailtest"
)

func TestSMTPDelivers(t *testing.T) {
	link := email.Link{AppName: "Demo Ünïcode", Username: "alice", Email: "alice@example.com", URL: "http://127.0.0.1/x?token=abc"}
	cases := []struct {
		name     string
		server   emailtest.Options
		user     string
		password string
		secure   bool
		wantErr  bool
	}{
		{name: "plain, no auth", server: emailtest.Options{}},
		{name: "auth on localhost without TLS", server: emailtest.Options{Username: "u", Password: "p"}, user: "u", password: "p"},
		{name: "STARTTLS and auth", server: emailtest.Options{TLS: true, Username: "u", Password: "p"}, user: "u", password: "p"},
		{name: "implicit TLS", server: emailtest.Options{TLS: true, Implicit: true}, secure: true},
		{name: "wrong password", server: emailtest.Options{Username: "u", Password: "p"}, user: "u", password: "bad", wantErr: true},
		{name: "auth required but not given", server: emailtest.Options{Username: "u", Password: "p"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := emailtest.Start(t, tc.server)
			a, err := email.NewSMTP(email.SMTPOptions{Host: srv.Host, Port: srv.Port, Username: tc.user, Password: tc.password,
				FromAddress: "Demo <no-reply@example.com>", Secure: tc.secure, TLSConfig: srv.ClientTLS}, email.Templates{})
			if err != nil {
				t.Fatal(err)
			}
			err = a.SendPasswordResetEmail(context.Background(), link)
			if tc.wantErr {
				if err == nil {
					t.Fatal("delivery succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := srv.Next(t)
			if m.To != "alice@example.com" || m.From != "no-reply@example.com" || m.Authed != tc.user {
				t.Errorf("envelope %q -> %q (auth %q)", m.From, m.To, m.Authed)
			}
			if m.Subject != "Choose a new password for Demo Ünïcode" {
				t.Errorf("subject %q", m.Subject)
			}
			if !strings.Contains(m.Text, link.URL) || !strings.Contains(m.Text, "Hello alice") {
				t.Errorf("body %q", m.Text)
			}
			if m.Header.Get("Message-ID") == "" || m.Header.Get("Date") == "" {
				t.Errorf("headers %v", m.Header)
			}
		})
	}
}

func TestSMTPRefusesHeaderInjection(t *testing.T) {
	srv := emailtest.Start(t, emailtest.Options{})
	a, err := email.NewSMTP(email.SMTPOptions{Host: srv.Host, Port: srv.Port, FromAddress: "no-reply@example.com"}, email.Templates{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []email.Message{
		{To: "a@example.com\r\nBcc: b@example.com", Subject: "x", Text: "x"},
		{To: "a@example.com", Subject: "x\r\nBcc: b@example.com", Text: "x"},
		{To: "not an address", Subject: "x", Text: "x"},
	} {
		if err := a.SendMail(context.Background(), m); !errors.Is(err, email.ErrBadAddress) {
			t.Errorf("%q / %q: err %v, want ErrBadAddress", m.To, m.Subject, err)
		}
	}
}

func TestTemplates(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, text  string
		wantErr     bool
		wantSubject string
		wantBody    string
	}{
		{name: "custom", text: "Subject: Welcome to {{.AppName}}\n\nClick {{.URL}}, {{.Username}}.\n",
			wantSubject: "Welcome to Demo", wantBody: "Click http://x/, bob.\n"},
		{name: "CRLF file", text: "Subject: Hi\r\n\r\nBody {{.Email}}\r\n", wantSubject: "Hi", wantBody: "Body bob@example.com\n"},
		{name: "no subject line", text: "Hello {{.URL}}\n", wantErr: true},
		{name: "unknown field", text: "Subject: x\n\n{{.Password}}\n", wantErr: true},
		{name: "syntax error", text: "Subject: {{.AppName\n\nx\n", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := email.LoadTemplates(write(tc.name+".txt", tc.text), "")
			if tc.wantErr {
				if err == nil {
					t.Fatal("template accepted, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := tpl.Verification.Render(email.Link{AppName: "Demo", Username: "bob", Email: "bob@example.com", URL: "http://x/"})
			if err != nil {
				t.Fatal(err)
			}
			if m.Subject != tc.wantSubject || m.Text != tc.wantBody || m.To != "bob@example.com" {
				t.Errorf("got %+v", m)
			}
		})
	}
	if _, err := email.LoadTemplates("", filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("a missing template file was accepted")
	}
}
