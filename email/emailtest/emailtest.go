// Package emailtest runs a real SMTP server on 127.0.0.1 for tests: it
// accepts every message (optionally only after AUTH PLAIN, optionally
// over TLS) and hands each one to the test, decoded. A test can stop and
// restart it on its port (a relay that is down) and have it refuse a
// recipient with a given reply code (4xx or 5xx).
package emailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"net"
	"net/mail"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mail is one received message.
type Mail struct {
	From, To string // envelope addresses
	Subject  string // decoded
	Text     string // decoded body
	Header   mail.Header
	Authed   string // the AUTH PLAIN username, if any
}

// Options configure the server.
type Options struct {
	// Username and Password, when set, are required (AUTH PLAIN).
	Username, Password string
	// TLS serves STARTTLS (or implicit TLS with Implicit) with a fresh
	// self-signed certificate for 127.0.0.1; ClientTLS trusts it.
	TLS      bool
	Implicit bool
}

// Server is a running test SMTP server.
type Server struct {
	Host string
	Port int
	// ClientTLS trusts the server's certificate (nil without TLS).
	ClientTLS *tls.Config
	mails     chan Mail
	opts      Options
	tlsConfig *tls.Config

	mu      sync.Mutex
	srv     *smtp.Server // nil while stopped
	ln      net.Listener
	refusal map[string]refusal
}

// refusal is an SMTP reply given at RCPT to an address, times more times
// (a negative count: always).
type refusal struct {
	code  int
	times int
}

// Start serves until the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := &Server{Host: "127.0.0.1", mails: make(chan Mail, 64), opts: opts, refusal: map[string]refusal{}}
	if opts.TLS {
		cert, pool := selfSigned(tb)
		s.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		s.ClientTLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.Port = ln.Addr().(*net.TCPAddr).Port
	s.serve(ln)
	tb.Cleanup(s.Stop)
	return s
}

func (s *Server) serve(ln net.Listener) {
	be := smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{srv: s, opts: s.opts}, nil
	})
	srv := smtp.NewServer(be)
	srv.Domain = "localhost"
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.AllowInsecureAuth = !s.opts.TLS
	srv.TLSConfig = s.tlsConfig
	if s.opts.TLS && s.opts.Implicit {
		ln = tls.NewListener(ln, s.tlsConfig)
	}
	s.mu.Lock()
	s.srv, s.ln = srv, ln
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// Stop closes the server: connections to its port are refused (a relay
// that is down) until Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, ln := s.srv, s.ln
	s.srv, s.ln = nil, nil
	s.mu.Unlock()
	if srv != nil {
		// The listener is closed here too: Serve may not have taken it yet.
		_ = ln.Close()
		_ = srv.Close()
	}
}

// Restart serves again on the same port after Stop.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	ln, err := net.Listen("tcp", s.Addr())
	if err != nil {
		tb.Fatal(err)
	}
	s.serve(ln)
}

// Refuse answers RCPT TO addr with code (e.g. 451, a temporary failure,
// or 550, a permanent one) the next times times; a negative times refuses
// always.
func (s *Server) Refuse(addr string, code, times int) {
	s.mu.Lock()
	s.refusal[addr] = refusal{code: code, times: times}
	s.mu.Unlock()
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Next returns the next message, failing the test if none arrives in 10 s.
func (s *Server) Next(tb testing.TB) Mail {
	tb.Helper()
	select {
	case m := <-s.mails:
		return m
	case <-time.After(10 * time.Second):
		tb.Fatal("emailtest: no message arrived")
		return Mail{}
	}
}

type session struct {
	srv    *Server
	opts   Options
	authed string
	from   string
	to     string
}

func (s *session) AuthMechanisms() []string {
	if s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.opts.Username || password != s.opts.Password {
			return errors.New("invalid credentials")
		}
		s.authed = username
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.opts.Username != "" && s.authed == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.srv.mu.Lock()
	r, ok := s.srv.refusal[to]
	refuse := ok && r.times != 0
	if refuse && r.times > 0 {
		r.times--
		s.srv.refusal[to] = r
	}
	s.srv.mu.Unlock()
	if refuse {
		return &smtp.SMTPError{Code: r.code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: "refused by the test"}
	}
	s.to = to
	return nil
}

func (s *session) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(quotedPrintable(msg))
	if err != nil {
		return err
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return err
	}
	s.srv.mails <- Mail{From: s.from, To: s.to, Subject: subject, Text: string(body), Header: msg.Header, Authed: s.authed}
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", "" }
func (s *session) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(tb testing.TB) (tls.Certificate, *x509.CertPool) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "emailtest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
