package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/quarrydata/quarry/schema"
)

// LDAP is the provider name of the directory adapter.
const LDAP = "ldap"

// Parse error codes of the LDAP adapter: a refused bind (and an
// unreachable directory) is 101, as in Parse Server, and so is a user
// outside the group, where Parse Server answers 1: that would be status
// 500, which the JS SDK retries, for what is a refused credential. A
// group search the directory fails is 1.
const (
	codeLDAPLogin        = schema.CodeObjectNotFound
	codeLDAPSearchFailed = schema.CodeInternalServerError
)

// ldapAdapter signs users in with a directory: authData.ldap = {id,
// password} is a simple bind as the DN made from the dn template (or
// uid=<id>,<suffix>); with groupCn and groupFilter the user must also be
// found by groupFilter under suffix in a group whose cn is groupCn. Only
// the id is stored: the password never reaches the database.
type ldapAdapter struct{}

func (ldapAdapter) ValidateOptions(opts Options) error {
	url := opts.String("url", "")
	if !strings.HasPrefix(url, "ldap://") && !strings.HasPrefix(url, "ldaps://") {
		return errors.New(`url is required and must start with "ldap://" or "ldaps://"`)
	}
	if opts.String("suffix", "") == "" {
		return errors.New("suffix is required (the base DN of the users, e.g. ou=people,dc=example,dc=com)")
	}
	if (opts.String("groupCn", "") == "") != (opts.String("groupFilter", "") == "") {
		return errors.New("groupCn and groupFilter go together")
	}
	if _, err := ldapTLS(opts); err != nil {
		return fmt.Errorf("tlsOptions: %w", err)
	}
	return nil
}

func (ldapAdapter) ValidateAuthData(ctx context.Context, data map[string]any, opts Options) (Result, error) {
	id, password := str(data, "id"), str(data, "password")
	if password == "" {
		// An empty password is an unauthenticated bind, which many
		// directories answer with success.
		return Result{}, schema.Errorf(codeLDAPLogin, "LDAP: Wrong username or password")
	}
	conn, err := dialLDAP(ctx, opts)
	if err != nil {
		return Result{}, schema.Errorf(codeLDAPLogin, "LDAP: Cannot connect to the LDAP server")
	}
	defer conn.Close()
	if err := conn.Bind(ldapDN(opts, id), password); err != nil {
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			return Result{}, schema.Errorf(codeLDAPLogin, "LDAP: Wrong username or password")
		}
		return Result{}, schema.Errorf(codeLDAPLogin, "LDAP: The bind failed")
	}
	if groupCn := opts.String("groupCn", ""); groupCn != "" {
		if err := checkLDAPGroup(conn, opts, id, groupCn); err != nil {
			return Result{}, err
		}
	}
	return Result{Store: map[string]any{"id": id}}, nil
}

func (ldapAdapter) ValidateAppID(context.Context, []string, map[string]any, Options) error {
	return nil
}

// ldapDN is the DN the user binds as. The id is escaped, so that it
// cannot add components to the DN.
func ldapDN(opts Options, id string) string {
	if tmpl := opts.String("dn", ""); tmpl != "" {
		return strings.ReplaceAll(tmpl, "{{id}}", ldap.EscapeDN(id))
	}
	return "uid=" + ldap.EscapeDN(id) + "," + opts.String("suffix", "")
}

// checkLDAPGroup looks the user up with groupFilter (the id escaped for a
// filter) under suffix, bound as the user, and wants a result whose cn
// includes groupCn.
func checkLDAPGroup(conn *ldap.Conn, opts Options, id, groupCn string) error {
	filter := strings.ReplaceAll(opts.String("groupFilter", ""), "{{id}}", ldap.EscapeFilter(id))
	res, err := conn.Search(ldap.NewSearchRequest(opts.String("suffix", ""), ldap.ScopeWholeSubtree,
		ldap.NeverDerefAliases, 0, int(DefaultTimeout/time.Second), false, filter, []string{"cn"}, nil))
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return schema.Errorf(codeLDAPSearchFailed, "LDAP group search failed")
	}
	if res != nil {
		for _, e := range res.Entries {
			for _, cn := range e.GetAttributeValues("cn") {
				if cn == groupCn {
					return nil
				}
			}
		}
	}
	return schema.Errorf(codeLDAPLogin, "LDAP: User not in group")
}

// dialLDAP connects to url, within the context's deadline (or
// DefaultTimeout), each later request bounded by DefaultTimeout.
func dialLDAP(ctx context.Context, opts Options) (*ldap.Conn, error) {
	timeout := DefaultTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	dialOpts := []ldap.DialOpt{ldap.DialWithDialer(&net.Dialer{Timeout: timeout})}
	cfg, err := ldapTLS(opts)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		dialOpts = append(dialOpts, ldap.DialWithTLSConfig(cfg))
	}
	conn, err := ldap.DialURL(opts.String("url", ""), dialOpts...)
	if err != nil {
		return nil, err
	}
	conn.SetTimeout(timeout)
	return conn, nil
}

// ldapTLS reads tlsOptions, Node's TLS options as Parse Server passes
// them for ldaps:// URLs: ca (PEM text or a list of them), cert and key
// (PEM, a client certificate), servername, rejectUnauthorized (true
// unless false). Nil without tlsOptions: the system's roots.
func ldapTLS(opts Options) (*tls.Config, error) {
	raw, ok := opts.Raw["tlsOptions"].(map[string]any)
	if !ok {
		return nil, nil
	}
	t := Options{Raw: raw}
	cfg := &tls.Config{ServerName: t.String("servername", ""), MinVersion: tls.VersionTLS12}
	if v, ok := raw["rejectUnauthorized"].(bool); ok && !v {
		cfg.InsecureSkipVerify = true
	}
	if cas := t.Strings("ca"); len(cas) > 0 {
		cfg.RootCAs = x509.NewCertPool()
		for _, pem := range cas {
			if !cfg.RootCAs.AppendCertsFromPEM([]byte(pem)) {
				return nil, errors.New("ca: no PEM certificate in it")
			}
		}
	}
	if cert, key := t.String("cert", ""), t.String("key", ""); cert != "" || key != "" {
		pair, err := tls.X509KeyPair([]byte(cert), []byte(key))
		if err != nil {
			return nil, fmt.Errorf("cert/key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
