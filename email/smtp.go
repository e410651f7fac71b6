package email

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strconv"
	"strings"
	"time"
)

// DefaultSMTPTimeout bounds one delivery (connect to QUIT) when the
// context sets no deadline.
const DefaultSMTPTimeout = 30 * time.Second

// SMTPOptions configure the SMTP adapter (emailAdapter.options).
type SMTPOptions struct {
	// Host and Port are the relay's address (port 587 by default, 465
	// when Secure).
	Host string
	Port int
	// Username and Password authenticate with AUTH PLAIN when Username is
	// set. Go's SMTP client sends them only over TLS or to localhost.
	Username string
	Password string
	// FromAddress is the sender, e.g. "My App <no-reply@example.com>".
	FromAddress string
	// Secure speaks TLS from the first byte (SMTPS, port 465). Otherwise
	// the connection is upgraded with STARTTLS whenever the relay offers it.
	Secure bool
	// TLSConfig, when set, replaces the default TLS settings (the relay's
	// certificate checked against the system roots for Host).
	TLSConfig *tls.Config
	// Timeout bounds one delivery; 0 means DefaultSMTPTimeout.
	Timeout time.Duration
}

// SMTP sends through an SMTP relay. It opens one connection per message.
type SMTP struct {
	linkSender
	opts SMTPOptions
	from *mail.Address
}

// NewSMTP returns an SMTP adapter; it checks the options but does not
// connect.
func NewSMTP(opts SMTPOptions, templates Templates) (*SMTP, error) {
	if opts.Host == "" {
		return nil, errors.New("email: the SMTP host is required")
	}
	if opts.Port == 0 {
		opts.Port = 587
		if opts.Secure {
			opts.Port = 465
		}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultSMTPTimeout
	}
	from, err := mail.ParseAddress(opts.FromAddress)
	if err != nil {
		return nil, fmt.Errorf("email: fromAddress %q: %w", opts.FromAddress, err)
	}
	if templates.Verification == nil || templates.PasswordReset == nil {
		def := DefaultTemplates()
		if templates.Verification == nil {
			templates.Verification = def.Verification
		}
		if templates.PasswordReset == nil {
			templates.PasswordReset = def.PasswordReset
		}
	}
	s := &SMTP{opts: opts, from: from}
	s.linkSender = linkSender{templates: templates, send: s.SendMail}
	return s, nil
}

// SendMail delivers one message.
func (s *SMTP) SendMail(ctx context.Context, m Message) error {
	to, err := mail.ParseAddress(m.To)
	if err != nil || strings.ContainsAny(m.To+m.Subject, "\r\n") {
		return ErrBadAddress
	}
	data := s.compose(to, m)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
		defer cancel()
	}
	addr := net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("email: connecting to %s: %w", addr, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if s.opts.Secure {
		conn = tls.Client(conn, s.tlsConfig())
	}
	c, err := smtp.NewClient(conn, s.opts.Host)
	if err != nil {
		return fmt.Errorf("email: %s: %w", addr, err)
	}
	defer c.Close()
	if err := s.deliver(c, to.Address, data); err != nil {
		return fmt.Errorf("email: %s: %w", addr, err)
	}
	return nil
}

func (s *SMTP) deliver(c *smtp.Client, to string, data []byte) error {
	if ok, _ := c.Extension("STARTTLS"); ok && !s.opts.Secure {
		if err := c.StartTLS(s.tlsConfig()); err != nil {
			return err
		}
	}
	if s.opts.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.opts.Username, s.opts.Password, s.opts.Host)); err != nil {
			return err
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

func (s *SMTP) tlsConfig() *tls.Config {
	if s.opts.TLSConfig != nil {
		return s.opts.TLSConfig
	}
	return &tls.Config{ServerName: s.opts.Host, MinVersion: tls.VersionTLS12}
}

// compose writes the message in RFC 5322 form: UTF-8 text, quoted-printable.
func (s *SMTP) compose(to *mail.Address, m Message) []byte {
	var b bytes.Buffer
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	header("From", s.from.String())
	header("To", to.String())
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", time.Now().Format(time.RFC1123Z))
	header("Message-ID", "<"+randomID()+"@"+domainOf(s.from.Address)+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}

func randomID() string {
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	return hex.EncodeToString(raw[:])
}

func domainOf(addr string) string {
	if _, d, ok := strings.Cut(addr, "@"); ok && d != "" {
		return d
	}
	return "localhost"
}
