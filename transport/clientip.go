package transport

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"
)

// TrustProxy is the trustProxy option: which proxies in front of the
// server may report the client's address in X-Forwarded-For, read as
// Express reads it. The zero value trusts none: the client is the
// connection's peer.
type TrustProxy struct {
	// All trusts every hop: the client is the left-most address.
	All bool
	// Hops trusts that many proxies, counted from the server.
	Hops int
	// Addrs trusts the proxies at these addresses or CIDR ranges, or in
	// the named ranges loopback, linklocal and uniquelocal.
	Addrs []string
}

// namedRanges are the range names trustProxy accepts, as Express names them.
var namedRanges = map[string][]string{
	"loopback":    {"127.0.0.1/8", "::1/128"},
	"linklocal":   {"169.254.0.0/16", "fe80::/10"},
	"uniquelocal": {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"},
}

// proxyTrust is TrustProxy compiled once.
type proxyTrust struct {
	all      bool
	hops     int
	prefixes []netip.Prefix
}

func compileTrustProxy(t TrustProxy) (proxyTrust, error) {
	pt := proxyTrust{all: t.All, hops: t.Hops}
	if t.Hops < 0 {
		return pt, fmt.Errorf("trustProxy: %d hops", t.Hops)
	}
	for _, a := range t.Addrs {
		if named, ok := namedRanges[strings.ToLower(a)]; ok {
			for _, n := range named {
				pt.prefixes = append(pt.prefixes, netip.MustParsePrefix(n).Masked())
			}
			continue
		}
		p, err := parseIPOrPrefix(a)
		if err != nil {
			return pt, fmt.Errorf("trustProxy: %q is not an IP address, a CIDR range or loopback, linklocal, uniquelocal", a)
		}
		pt.prefixes = append(pt.prefixes, p.Masked())
	}
	return pt, nil
}

// trusts reports whether the i-th address from the server (0: the peer)
// is a trusted proxy.
func (pt *proxyTrust) trusts(addr string, i int) bool {
	switch {
	case pt.all:
		return true
	case pt.hops > 0:
		return i < pt.hops
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range pt.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (pt *proxyTrust) none() bool { return !pt.all && pt.hops == 0 && len(pt.prefixes) == 0 }

// clientIP is the client's address as rate limits, masterKeyIps,
// maintenanceKeyIps and cloud code's request.ip see it: the peer, or with
// trustProxy the first address in X-Forwarded-For, walking from the
// server, that is not a trusted proxy (the left-most when all are).
func (s *Server) clientIP(ctx *fasthttp.RequestCtx) string {
	peer := ctx.RemoteIP().String()
	if s.trust.none() || !s.trust.trusts(peer, 0) {
		return peer
	}
	var forwarded []string
	for _, h := range ctx.Request.Header.PeekAll("X-Forwarded-For") {
		for _, f := range bytes.Split(h, []byte{','}) {
			if f = bytes.TrimSpace(f); len(f) > 0 {
				forwarded = append(forwarded, string(f))
			}
		}
	}
	ip := peer
	for i := len(forwarded) - 1; i >= 0; i-- {
		ip = forwarded[i]
		if !s.trust.trusts(ip, len(forwarded)-i) {
			break
		}
	}
	return ip
}

// forwardedPeer makes the request's peer address the client trustProxy
// finds, for a front end that reads the peer itself (GraphQL's rate
// limits); the port is kept. restore puts the connection's address back:
// fasthttp keeps it across the requests of a kept-alive connection.
func (s *Server) forwardedPeer(ctx *fasthttp.RequestCtx) (restore func()) {
	restore = func() {}
	if s.trust.none() {
		return restore
	}
	a, err := netip.ParseAddr(s.clientIP(ctx))
	if err != nil {
		return restore
	}
	orig := ctx.RemoteAddr()
	port := 0
	if tcp, ok := ctx.RemoteAddr().(*net.TCPAddr); ok {
		port = tcp.Port
	}
	ctx.SetRemoteAddr(net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, uint16(port))))
	return func() { ctx.SetRemoteAddr(orig) }
}

// clientAllowed reports whether the request's client (clientIP) is in
// prefixes; an empty list allows every address.
func (s *Server) clientAllowed(ctx *fasthttp.RequestCtx, prefixes []netip.Prefix) bool {
	if len(prefixes) == 0 {
		return true
	}
	return addrIn(s.clientIP(ctx), prefixes)
}

// addrIn reports whether the address ip is in one of prefixes.
func addrIn(ip string, prefixes []netip.Prefix) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
