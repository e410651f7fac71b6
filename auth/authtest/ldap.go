package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
	"github.com/hashicorp/go-hclog"
	"github.com/jimlambrt/gldap"
)

// LDAPSuffix is the fake directory's base DN: users are
// uid=<id>,ou=people,LDAPSuffix and groups cn=<cn>,ou=groups,LDAPSuffix.
const LDAPSuffix = "dc=example,dc=test"

// Directory is a running LDAP server (gldap, the real protocol) holding
// users with passwords and groups listing their members' uids
// (memberUid). Binds check the password; searches need a bound
// connection and evaluate the filter (and, or, not, equality, presence)
// against the groups.
type Directory struct {
	// URL is ldap://127.0.0.1:<port>, or ldaps:// for StartLDAPS.
	URL string
	// CA is the PEM certificate an ldaps:// directory presents.
	CA string

	srv *gldap.Server

	mu     sync.Mutex
	users  map[string]string              // DN -> password
	groups map[string]map[string][]string // DN -> attribute -> values
	bound  map[int]string                 // connection id -> DN
	binds  int
}

// StartLDAP runs a directory on a free 127.0.0.1 port until the test ends.
func StartLDAP(tb testing.TB) *Directory { return startLDAP(tb, false) }

// StartLDAPS runs a directory speaking TLS from the first byte with a
// self-signed certificate for 127.0.0.1 (Directory.CA).
func StartLDAPS(tb testing.TB) *Directory { return startLDAP(tb, true) }

func startLDAP(tb testing.TB, secure bool) *Directory {
	tb.Helper()
	d := &Directory{users: map[string]string{}, groups: map[string]map[string][]string{}, bound: map[int]string{}}
	srv, err := gldap.NewServer(gldap.WithLogger(hclog.NewNullLogger()))
	if err != nil {
		tb.Fatal(err)
	}
	mux, err := gldap.NewMux()
	if err != nil {
		tb.Fatal(err)
	}
	if err := mux.Bind(d.bind); err != nil {
		tb.Fatal(err)
	}
	if err := mux.Search(d.search); err != nil {
		tb.Fatal(err)
	}
	if err := srv.Router(mux); err != nil {
		tb.Fatal(err)
	}
	// gldap listens on an address it is given and does not tell the port
	// it got, so a free one is found first.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	scheme := "ldap"
	var runOpts []gldap.Option
	if secure {
		cfg, ca := selfSigned(tb)
		runOpts, d.CA, scheme = append(runOpts, gldap.WithTLSConfig(cfg)), ca, "ldaps"
	}
	go func() { _ = srv.Run(addr, runOpts...) }()
	deadline := time.Now().Add(10 * time.Second)
	for !srv.Ready() || !reachable(addr) {
		if time.Now().After(deadline) {
			tb.Fatal("the LDAP directory did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	d.srv, d.URL = srv, scheme+"://"+addr
	tb.Cleanup(d.Stop)
	return d
}

func reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// Stop closes the directory (a directory that is down).
func (d *Directory) Stop() { _ = d.srv.Stop() }

// AddUser adds uid=<id>,ou=people,LDAPSuffix with a password, and returns
// its DN.
func (d *Directory) AddUser(id, password string) string {
	dn := "uid=" + ldap.EscapeDN(id) + ",ou=people," + LDAPSuffix
	d.mu.Lock()
	d.users[dn] = password
	d.mu.Unlock()
	return dn
}

// AddGroup adds cn=<cn>,ou=groups,LDAPSuffix (objectClass posixGroup)
// whose memberUid are the ids.
func (d *Directory) AddGroup(cn string, ids ...string) {
	d.mu.Lock()
	d.groups["cn="+ldap.EscapeDN(cn)+",ou=groups,"+LDAPSuffix] = map[string][]string{
		"cn": {cn}, "objectclass": {"posixGroup"}, "memberuid": ids,
	}
	d.mu.Unlock()
}

// Binds counts the bind requests the directory answered.
func (d *Directory) Binds() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.binds
}

func (d *Directory) bind(w *gldap.ResponseWriter, r *gldap.Request) {
	resp := r.NewBindResponse(gldap.WithResponseCode(gldap.ResultInvalidCredentials))
	defer func() { _ = w.Write(resp) }()
	m, err := r.GetSimpleBindMessage()
	if err != nil {
		resp.SetResultCode(gldap.ResultAuthMethodNotSupported)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.binds++
	want, ok := d.users[normalDN(m.UserName)]
	if ok && want != "" && string(m.Password) == want {
		d.bound[r.ConnectionID()] = normalDN(m.UserName)
		resp.SetResultCode(gldap.ResultSuccess)
	}
}

func (d *Directory) search(w *gldap.ResponseWriter, r *gldap.Request) {
	done := r.NewSearchDoneResponse(gldap.WithResponseCode(gldap.ResultSuccess))
	defer func() { _ = w.Write(done) }()
	m, err := r.GetSearchMessage()
	if err != nil {
		done.SetResultCode(gldap.ResultProtocolError)
		return
	}
	filter, err := ldap.CompileFilter(m.Filter)
	if err != nil {
		done.SetResultCode(gldap.ResultFilterError)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bound[r.ConnectionID()] == "" {
		done.SetResultCode(gldap.ResultInsufficientAccessRights)
		return
	}
	base := normalDN(m.BaseDN)
	for dn, attrs := range d.groups {
		if dn == base || strings.HasSuffix(dn, ","+base) {
			if matches(filter, attrs) {
				_ = w.Write(r.NewSearchResponseEntry(dn, gldap.WithAttributes(attrs)))
			}
		}
	}
}

// matches evaluates a compiled filter against an entry's attributes
// (names in lower case; values compared exactly, as the fake's are).
func matches(f *ber.Packet, attrs map[string][]string) bool {
	switch f.Tag {
	case ldap.FilterAnd:
		for _, c := range f.Children {
			if !matches(c, attrs) {
				return false
			}
		}
		return true
	case ldap.FilterOr:
		for _, c := range f.Children {
			if matches(c, attrs) {
				return true
			}
		}
		return false
	case ldap.FilterNot:
		return len(f.Children) == 1 && !matches(f.Children[0], attrs)
	case ldap.FilterPresent:
		return len(attrs[strings.ToLower(f.Data.String())]) > 0
	case ldap.FilterEqualityMatch:
		if len(f.Children) != 2 {
			return false
		}
		name, want := strings.ToLower(f.Children[0].Data.String()), f.Children[1].Data.String()
		for _, v := range attrs[name] {
			if v == want {
				return true
			}
		}
	}
	return false
}

// normalDN drops the spaces around a DN's commas, as "uid=a, dc=b" and
// "uid=a,dc=b" name the same entry.
func normalDN(dn string) string {
	parts := strings.Split(dn, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return strings.Join(parts, ",")
}

// selfSigned makes a TLS certificate for 127.0.0.1 and returns the
// server's configuration and the certificate as PEM.
func selfSigned(tb testing.TB) (*tls.Config, string) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "quarry test directory"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12},
		string(pemCert)
}
