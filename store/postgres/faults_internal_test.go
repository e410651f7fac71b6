package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestFaultClassification: which failures mean "the database cannot be
// reached" (503, readiness off) and which failures of the round trip that
// carried COMMIT leave the commit in doubt.
func TestFaultClassification(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		unreachable bool
		inDoubt     bool
	}{
		{"unique violation", &pgconn.PgError{Code: "23505"}, false, false},
		{"bad data", fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "22P02"}), false, false},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true, true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true, true},
		{"connect refused", &pgconn.ConnectError{}, true, true},
		{"socket", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true, true},
		{"eof", fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), true, true},
		{"closed", pgconn.ErrConnClosed, true, true},
		{"timeout", context.DeadlineExceeded, true, true},
		{"something else", errors.New("odd"), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unreachable(tc.err); got != tc.unreachable {
				t.Errorf("unreachable = %v, want %v", got, tc.unreachable)
			}
			var doubt *inDoubtError
			if got := errors.As(mayHaveCommitted(tc.err), &doubt); got != tc.inDoubt {
				t.Errorf("in doubt = %v, want %v", got, tc.inDoubt)
			}
		})
	}
	if mayHaveCommitted(nil) != nil {
		t.Error("a COMMIT that succeeded is in doubt")
	}
}
