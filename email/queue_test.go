package email_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/email"
	"github.com/quarrydata/quarry/email/emailtest"
)

// The retry queue in front of the SMTP adapter, against the real test
// relay stopped, restarted and refusing recipients.

// warnings collects a queue's log lines.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) add(msg string) { w.mu.Lock(); w.lines = append(w.lines, msg); w.mu.Unlock() }
func (w *warnings) all() string    { w.mu.Lock(); defer w.mu.Unlock(); return strings.Join(w.lines, "\n") }

// newQueue is a queue with millisecond backoff in front of relay.
func newQueue(t *testing.T, relay *emailtest.Server, opts email.QueueOptions) (*email.Queue, *warnings) {
	t.Helper()
	a, err := email.NewSMTP(email.SMTPOptions{Host: relay.Host, Port: relay.Port, FromAddress: "Demo <no-reply@example.com>",
		Timeout: 5 * time.Second}, email.Templates{})
	if err != nil {
		t.Fatal(err)
	}
	w := &warnings{}
	opts.Warn = w.add
	if opts.FirstRetry == 0 {
		opts.FirstRetry, opts.MaxRetryDelay = 2*time.Millisecond, 10*time.Millisecond
	}
	q := email.NewQueue(a, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Close(ctx)
	})
	return q, w
}

// eventually waits for cond, failing after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

var resetLink = email.Link{AppName: "Demo", Username: "alice", Email: "alice@example.com", URL: "http://127.0.0.1/x?token=secret-token-1"}

func TestQueueRetriesWhileTheRelayIsDown(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	relay.Stop()
	q, w := newQueue(t, relay, email.QueueOptions{MaxAttempts: 1000})
	if err := q.SendPasswordResetEmail(context.Background(), resetLink); err != nil {
		t.Fatalf("queueing: %v", err)
	}
	eventually(t, "two failed tries", func() bool { return q.Stats().Retried >= 2 })
	if st := q.Stats(); st.Depth != 1 || st.Sent != 0 || st.Dropped != 0 {
		t.Fatalf("while down: %+v, want one message waiting", st)
	}
	relay.Restart(t)
	m := relay.Next(t)
	if m.To != "alice@example.com" || !strings.Contains(m.Text, "secret-token-1") {
		t.Fatalf("delivered %q to %s", m.Text, m.To)
	}
	eventually(t, "the queue empties", func() bool { st := q.Stats(); return st.Depth == 0 && st.Sent == 1 })
	if strings.Contains(w.all(), "secret-token-1") {
		t.Errorf("a log line holds the link: %s", w.all())
	}
}

func TestQueueTemporaryAndPermanentFailures(t *testing.T) {
	for _, tc := range []struct {
		name         string
		code, times  int // the relay's refusal of the recipient
		maxAttempts  int
		delivered    bool
		retried      uint64
		warnContains string
	}{
		{name: "451 twice, then delivered", code: 451, times: 2, maxAttempts: 5, delivered: true, retried: 2},
		{name: "550 is dropped at once", code: 550, times: -1, maxAttempts: 5, retried: 0,
			warnContains: "password reset email dropped after a permanent failure (SMTP reply 550)"},
		{name: "451 until the tries are used up", code: 451, times: -1, maxAttempts: 3, retried: 2,
			warnContains: "password reset email dropped after 3 tries (last: SMTP reply 451)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			relay := emailtest.Start(t, emailtest.Options{})
			relay.Refuse("alice@example.com", tc.code, tc.times)
			q, w := newQueue(t, relay, email.QueueOptions{MaxAttempts: tc.maxAttempts})
			if err := q.SendPasswordResetEmail(context.Background(), resetLink); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the message settles", func() bool { return q.Stats().Depth == 0 })
			st := q.Stats()
			if tc.delivered {
				if m := relay.Next(t); m.To != "alice@example.com" {
					t.Errorf("delivered to %s", m.To)
				}
			}
			if want := map[bool]uint64{true: 1}[tc.delivered]; st.Sent != want || st.Retried != tc.retried || st.Dropped != 1-want {
				t.Errorf("stats %+v, want sent %d retried %d", st, want, tc.retried)
			}
			logs := w.all()
			if tc.warnContains != "" && !strings.Contains(logs, tc.warnContains) {
				t.Errorf("log %q, want %q", logs, tc.warnContains)
			}
			if strings.Contains(logs, "alice@example.com") || strings.Contains(logs, "secret-token-1") {
				t.Errorf("a log line holds the address or the link: %s", logs)
			}
		})
	}
}

func TestQueueBounded(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	relay.Stop()
	q, w := newQueue(t, relay, email.QueueOptions{Size: 2, MaxAttempts: 1000})
	for i, want := range []error{nil, nil, email.ErrQueueFull} {
		if err := q.SendPasswordResetEmail(context.Background(), resetLink); !errors.Is(err, want) {
			t.Fatalf("message %d: %v, want %v", i, err, want)
		}
	}
	if st := q.Stats(); st.Depth != 2 || st.Dropped != 1 {
		t.Fatalf("stats %+v, want 2 waiting and 1 dropped", st)
	}
	if !strings.Contains(w.all(), "the retry queue holds 2 messages already") {
		t.Errorf("log %q", w.all())
	}
	relay.Restart(t)
	relay.Next(t)
	relay.Next(t)
	eventually(t, "the queue empties", func() bool { return q.Stats().Depth == 0 })
}

func TestQueueClose(t *testing.T) {
	relay := emailtest.Start(t, emailtest.Options{})
	relay.Stop()
	// A retry an hour away: Close tries it once more at once.
	q, _ := newQueue(t, relay, email.QueueOptions{FirstRetry: time.Hour, MaxRetryDelay: time.Hour})
	if err := q.SendVerificationEmail(context.Background(), resetLink); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a failed try", func() bool { return q.Stats().Retried == 1 })
	relay.Restart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q.Close(ctx)
	if st := q.Stats(); st.Sent != 1 || st.Depth != 0 {
		t.Fatalf("after Close: %+v, want the waiting message sent", st)
	}
	relay.Next(t)
	if err := q.SendMail(context.Background(), email.Message{To: "a@example.com", Subject: "s", Text: "t"}); !errors.Is(err, email.ErrQueueClosed) {
		t.Fatalf("send after Close: %v", err)
	}

	// With the relay down at Close, the last try fails and the message is
	// dropped and counted.
	relay2 := emailtest.Start(t, emailtest.Options{})
	relay2.Stop()
	q2, _ := newQueue(t, relay2, email.QueueOptions{FirstRetry: time.Hour, MaxRetryDelay: time.Hour})
	if err := q2.SendVerificationEmail(context.Background(), resetLink); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a failed try", func() bool { return q2.Stats().Retried == 1 })
	q2.Close(ctx)
	if st := q2.Stats(); st.Dropped != 1 || st.Depth != 0 {
		t.Fatalf("after Close with the relay down: %+v", st)
	}
}

func TestIsPermanent(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{email.ErrBadAddress, true},
		{email.Permanent(errors.New("template")), true},
		{errors.New("connection refused"), false},
		{context.DeadlineExceeded, false},
	} {
		if got := email.IsPermanent(tc.err); got != tc.want {
			t.Errorf("IsPermanent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
