// Package pgtest gives tests a fresh PostgreSQL database of their own on the
// local server (127.0.0.1:5432, user postgres), dropped when the test ends.
// When the server is unreachable the test is skipped with a loud message,
// or fails when CI=true. Only tests import it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// AdminURI is the maintenance database the test databases are created from.
const AdminURI = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// EnvServer names the environment variable that runs the in-process test
// servers (server/servertest) on PostgreSQL: its value is an admin URI such
// as AdminURI, on whose server each test server gets a fresh database.
const EnvServer = "QUARRY_TEST_DATABASE_URI"

// NewDatabase creates a uniquely named database on the local server and
// returns its URI; the database is dropped (connections and all) when t
// ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return NewDatabaseOn(t, AdminURI)
}

// NewDatabaseOn is NewDatabase on the server of adminURI.
func NewDatabaseOn(t testing.TB, adminURI string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, adminURI)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is unreachable (CI=true, so this fails): %v", err)
		}
		t.Skipf("\n\n*** SKIPPED: PostgreSQL is unreachable: %v ***\n*** start it on 127.0.0.1:5432 (trust auth, user postgres) to run the PostgreSQL tests ***\n", err)
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
		c, err := pgx.Connect(ctx, adminURI)
		if err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	cfg := admin.Config()
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + name}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	u.RawQuery = "sslmode=disable"
	return u.String()
}
