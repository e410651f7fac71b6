// Package pgtest gives tests a fresh PostgreSQL database of their own on the
// local server (127.0.0.1:5432, user postgres), dropped when the test ends.
// When the server is unreachable the test is skipped with a loud message,
// or fails when CI=true. Only tests import it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// AdminURI is the maintenance database the test databases are created from;
// env QUARRY_TEST_PG_ADMIN overrides it.
const AdminURI = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func adminURI() string {
	if u := os.Getenv("QUARRY_TEST_PG_ADMIN"); u != "" {
		return u
	}
	return AdminURI
}

// NewDatabase creates a uniquely named database and returns its URI; the
// database is dropped (connections and all) when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, adminURI())
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is unreachable at 127.0.0.1:5432 (CI=true, so this fails): %v", err)
		}
		t.Skipf("\n\n*** SKIPPED: PostgreSQL is unreachable at 127.0.0.1:5432: %v ***\n*** start it (trust auth, user postgres) to run the PostgreSQL tests ***\n", err)
	}
	defer admin.Close(context.Background())
	var b [6]byte
	rand.Read(b[:])
	name := "quarry_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, adminURI())
		if err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	return "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
}
