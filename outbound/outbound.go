// Package outbound is the policy for the requests Quarry itself makes on
// behalf of cloud code and webhooks (Parse.Cloud.httpRequest, /hooks
// URLs): by default they may not reach loopback, private, link-local,
// unspecified or multicast addresses. The check runs on the address
// actually dialed, after DNS and on every redirect, so neither a name
// that resolves inside nor a redirect into the network gets through. It
// knows addresses and dialers only: no Parse, no HTTP routes.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrRefused is the error (wrapped) of a dial the policy refused.
var ErrRefused = errors.New("outbound: the address is not allowed by the outbound policy")

// Policy says which addresses outgoing requests may reach. The zero
// Policy refuses every internal address.
type Policy struct {
	// AllowPrivate lets requests reach every address
	// (outboundAllowPrivate): for development and tests whose webhooks
	// run on 127.0.0.1.
	AllowPrivate bool
	// Allow are internal addresses or networks that may be reached all
	// the same (outboundAllowList).
	Allow []netip.Prefix
}

// ParseAllow reads an allow list: IP addresses and CIDR networks.
func ParseAllow(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("outboundAllowList: %q is neither an IP address nor a CIDR network", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// internal are the networks refused besides what netip classifies
// (loopback, private, link-local, unspecified, multicast).
var internal = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),      // carrier-grade NAT, shared address space
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),       // NAT64: embeds an IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),     // local-use NAT64
	netip.MustParsePrefix("2002::/16"),          // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("100::/64"),           // discard-only
	netip.MustParsePrefix("fec0::/10"),          // deprecated site-local
	netip.MustParsePrefix("2001:db8::/32"),      // documentation
	netip.MustParsePrefix("::ffff:0:0:0/96"),    // SIIT translated
	netip.MustParsePrefix("2001::/32"),          // Teredo: embeds an IPv4 address
	netip.MustParsePrefix("2001:10::/28"),       // ORCHID
	netip.MustParsePrefix("ff00::/8"),           // multicast, for completeness
	netip.MustParsePrefix("169.254.169.254/32"), // cloud metadata (link-local too)
}

// Internal reports whether a is an address the default policy refuses.
func Internal(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range internal {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Allows reports whether the policy lets a request reach a.
func (p Policy) Allows(a netip.Addr) bool {
	if p.AllowPrivate {
		return true
	}
	a = a.Unmap()
	for _, n := range p.Allow {
		if n.Contains(a) {
			return true
		}
	}
	return !Internal(a)
}

// control is the dialer's check of the address about to be connected.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrRefused, address)
	}
	if !p.Allows(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrRefused, ap.Addr())
	}
	return nil
}

// Transport is an HTTP transport whose every connection obeys p. It uses
// no proxy: the policy is about the address dialed, which a proxy would
// hide.
func (p Policy) Transport() *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
