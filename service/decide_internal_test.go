package service

import (
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// A store's unique-index refusal reaches the client with Parse's code.
func TestUniqueCode(t *testing.T) {
	for _, tc := range []struct {
		class, field string
		code         int
	}{
		{"_User", "username", 202},
		{"_User", "email", 203},
		{"_Role", "name", 137},
		{"_User", "authData", 208},
		{"_Installation", "installationId", 137},
	} {
		err := uniqueCode(fmt.Errorf("postgres: commit: %w", &store.UniqueError{Class: tc.class, Field: tc.field}))
		if pe, ok := schema.AsError(err); !ok || pe.Code != tc.code {
			t.Errorf("%s.%s: %v, want code %d", tc.class, tc.field, err, tc.code)
		}
	}
	if err := uniqueCode(store.ErrClosed); err != store.ErrClosed {
		t.Errorf("another error changed: %v", err)
	}
}

// The guard keys of a user are its values as Parse compares them.
func TestUniqueGuardKeys(t *testing.T) {
	got := uniqueGuardKeys(classUser, schema.Object{"username": "Bob", "email": "B@X.io",
		"authData": map[string]any{"anonymous": map[string]any{"id": "u1"}}})
	want := map[string]bool{"u\x1fusername\x1fbob": true, "u\x1femail\x1fb@x.io": true, "u\x1fauth\x1fanonymous\x1fu1": true}
	if len(got) != len(want) {
		t.Fatalf("keys %q", got)
	}
	for _, k := range got {
		if !want[k] {
			t.Fatalf("keys %q", got)
		}
	}
	if keys := uniqueGuardKeys(classUser, nil); keys != nil {
		t.Fatalf("no object: %q", keys)
	}
}
