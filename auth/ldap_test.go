package auth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/auth/authtest"
	"github.com/quarrydata/quarry/schema"
)

// The LDAP adapter against a directory speaking the real protocol on
// 127.0.0.1 (auth/authtest, gldap): binds, the group check, TLS, and a
// directory that is down.
func TestLDAP(t *testing.T) {
	dir := authtest.StartLDAP(t)
	dir.AddUser("alice", "alice-pw")
	dir.AddUser("bob", "bob-pw")
	dir.AddUser("x)(uid=*", "odd-pw")
	dir.AddGroup("staff", "alice")
	secure := authtest.StartLDAPS(t)
	secure.AddUser("alice", "alice-pw")
	down := authtest.StartLDAP(t)
	down.Stop()

	base := map[string]any{"url": dir.URL, "suffix": "ou=people," + authtest.LDAPSuffix}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	group := with(map[string]any{"suffix": authtest.LDAPSuffix, "dn": "uid={{id}},ou=people," + authtest.LDAPSuffix,
		"groupCn": "staff", "groupFilter": "(&(objectClass=posixGroup)(memberUid={{id}}))"})
	for _, tc := range []struct {
		name   string
		opts   map[string]any
		data   map[string]any
		code   int // 0: accepted
		msg    string
		stored map[string]any
	}{
		{name: "valid bind", opts: base, data: map[string]any{"id": "alice", "password": "alice-pw"},
			stored: map[string]any{"id": "alice"}},
		{name: "wrong password", opts: base, data: map[string]any{"id": "alice", "password": "nope"},
			code: 101, msg: "LDAP: Wrong username or password"},
		{name: "unknown user", opts: base, data: map[string]any{"id": "carol", "password": "x"}, code: 101},
		{name: "empty password is no anonymous bind", opts: base, data: map[string]any{"id": "alice", "password": ""},
			code: 101, msg: "LDAP: Wrong username or password"},
		{name: "another user's password", opts: base, data: map[string]any{"id": "alice", "password": "bob-pw"}, code: 101},
		{name: "dn template", opts: with(map[string]any{"dn": "uid={{id}}, ou=people, " + authtest.LDAPSuffix}),
			data: map[string]any{"id": "bob", "password": "bob-pw"}, stored: map[string]any{"id": "bob"}},
		{name: "an id with DN and filter syntax is escaped", opts: base,
			data: map[string]any{"id": "x)(uid=*", "password": "odd-pw"}, stored: map[string]any{"id": "x)(uid=*"}},
		{name: "user in the group", opts: group, data: map[string]any{"id": "alice", "password": "alice-pw"},
			stored: map[string]any{"id": "alice"}},
		{name: "user not in the group", opts: group, data: map[string]any{"id": "bob", "password": "bob-pw"},
			code: 101, msg: "LDAP: User not in group"},
		{name: "another group name", opts: with(map[string]any{"suffix": authtest.LDAPSuffix, "dn": "uid={{id}},ou=people," + authtest.LDAPSuffix,
			"groupCn": "admins", "groupFilter": "(memberUid={{id}})"}),
			data: map[string]any{"id": "alice", "password": "alice-pw"}, code: 101, msg: "LDAP: User not in group"},
		{name: "directory down", opts: with(map[string]any{"url": down.URL}), data: map[string]any{"id": "alice", "password": "alice-pw"},
			code: 101, msg: "LDAP: Cannot connect to the LDAP server"},
		{name: "ldaps with the directory's CA", opts: with(map[string]any{"url": secure.URL, "tlsOptions": map[string]any{"ca": secure.CA}}),
			data: map[string]any{"id": "alice", "password": "alice-pw"}, stored: map[string]any{"id": "alice"}},
		{name: "ldaps with an unknown certificate", opts: with(map[string]any{"url": secure.URL}),
			data: map[string]any{"id": "alice", "password": "alice-pw"}, code: 101, msg: "LDAP: Cannot connect to the LDAP server"},
		{name: "ldaps, rejectUnauthorized false", opts: with(map[string]any{"url": secure.URL, "tlsOptions": map[string]any{"rejectUnauthorized": false}}),
			data: map[string]any{"id": "alice", "password": "alice-pw"}, stored: map[string]any{"id": "alice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := auth.New(auth.Config{Providers: map[string]map[string]any{"ldap": tc.opts}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Validate(context.Background(), "ldap", tc.data)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(res.Store) != len(tc.stored) || res.Store["id"] != tc.stored["id"] {
					t.Errorf("stored %v, want %v (never the password)", res.Store, tc.stored)
				}
				return
			}
			pe, ok := schema.AsError(err)
			if !ok || pe.Code != tc.code || (tc.msg != "" && pe.Message != tc.msg) {
				t.Fatalf("error %v, want %d %q", err, tc.code, tc.msg)
			}
		})
	}
}

func TestLDAPOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts map[string]any
		err  string
	}{
		{name: "no url", opts: map[string]any{"suffix": "dc=x"}, err: "url is required"},
		{name: "not an ldap url", opts: map[string]any{"url": "http://127.0.0.1", "suffix": "dc=x"}, err: "url is required"},
		{name: "no suffix", opts: map[string]any{"url": "ldap://127.0.0.1"}, err: "suffix is required"},
		{name: "groupCn alone", opts: map[string]any{"url": "ldap://127.0.0.1", "suffix": "dc=x", "groupCn": "g"}, err: "go together"},
		{name: "bad CA", opts: map[string]any{"url": "ldaps://127.0.0.1", "suffix": "dc=x", "tlsOptions": map[string]any{"ca": "nope"}}, err: "tlsOptions: ca"},
		{name: "complete", opts: map[string]any{"url": "ldaps://127.0.0.1", "suffix": "dc=x", "groupCn": "g", "groupFilter": "(memberUid={{id}})"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := auth.New(auth.Config{Providers: map[string]map[string]any{"ldap": tc.opts}})
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}
