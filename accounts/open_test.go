package accounts_test

import (
	"context"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/email"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// clock is a settable clock for the tests' services.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// fixture is a service on a new on-disk store with the accounts over it.
type fixture struct {
	svc   *service.Service
	acc   *accounts.Accounts
	clock *clock
	mail  *mailbox
}

// open opens a fixture; edit, when given, changes the options first.
// Passwords are hashed at bcrypt's lowest cost, to keep tests quick.
func open(tb testing.TB, edit func(*service.Options)) *fixture {
	tb.Helper()
	a, err := store.Open(filepath.Join(tb.TempDir(), "q.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() })
	f := &fixture{clock: &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, mail: &mailbox{}}
	opts := service.Options{PasswordHashCost: bcrypt.MinCost, Now: f.clock.Now}
	opts.Accounts.AppID = "app"
	opts.Accounts.PublicURL = func() string { return "http://localhost/parse" }
	if edit != nil {
		edit(&opts)
	}
	if opts.Accounts.Mailer == nil && opts.Accounts.VerifyUserEmails {
		opts.Accounts.Mailer = f.mail
	}
	s, err := service.Open(a, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.CloseChanges(0) }) // before the store closes
	f.svc, f.acc = s, accounts.New(s)
	s.SetPasswordPolicy(f.acc) // as the server registers it
	return f
}

// user creates a user with the body's fields and returns its id.
func (f *fixture) user(tb testing.TB, body map[string]any) string {
	tb.Helper()
	res, err := f.svc.Create(service.Auth{}, "_User", body)
	if err != nil {
		tb.Fatal(err)
	}
	return res.ObjectID
}

// stored is a user as stored, internal fields included.
func (f *fixture) stored(tb testing.TB, id string) schema.Object {
	tb.Helper()
	u, ok := f.svc.UserByID(id)
	if !ok {
		tb.Fatalf("user %s not found", id)
	}
	return u
}

// mailbox is an email.Adapter that keeps the links it was asked to send.
type mailbox struct {
	mu    sync.Mutex
	links []email.Link
}

func (m *mailbox) SendVerificationEmail(_ context.Context, l email.Link) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.links = append(m.links, l)
	return nil
}

func (m *mailbox) SendPasswordResetEmail(ctx context.Context, l email.Link) error {
	return m.SendVerificationEmail(ctx, l)
}

func (m *mailbox) SendMail(context.Context, email.Message) error { return nil }

// sent waits for the emails under way and returns the links sent since
// the last call.
func (f *fixture) sent() []email.Link {
	f.svc.WaitMail()
	f.mail.mu.Lock()
	defer f.mail.mu.Unlock()
	out := f.mail.links
	f.mail.links = nil
	return out
}

// token is the token of a link.
func token(tb testing.TB, l email.Link) string {
	tb.Helper()
	u, err := url.Parse(l.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return u.Query().Get("token")
}

// code is the Parse error code of err (0: nil, -999: not a Parse error).
func code(err error) int {
	if err == nil {
		return 0
	}
	if pe, ok := schema.AsError(err); ok {
		return pe.Code
	}
	return -999
}
