package outbound

import (
	"net/netip"
	"testing"
)

func TestPolicyAllows(t *testing.T) {
	allow, err := ParseAllow([]string{"10.1.0.0/16", "127.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		addr             string
		byDefault, allow bool // the zero Policy; one with the allow list
	}{
		{"93.184.216.34", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"127.0.0.1", false, false},
		{"127.0.0.2", false, true},
		{"::1", false, false},
		{"::ffff:127.0.0.1", false, false},
		{"10.0.0.1", false, false},
		{"10.1.2.3", false, true},
		{"172.16.0.1", false, false},
		{"192.168.1.1", false, false},
		{"169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"fd00::1", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"ff02::1", false, false},
		{"100.64.0.1", false, false},
		{"255.255.255.255", false, false},
		{"64:ff9b::7f00:1", false, false},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		if got := (Policy{}).Allows(a); got != c.byDefault {
			t.Errorf("default Allows(%s) = %v, want %v", c.addr, got, c.byDefault)
		}
		if got := (Policy{Allow: allow}).Allows(a); got != c.allow {
			t.Errorf("allow-listed Allows(%s) = %v, want %v", c.addr, got, c.allow)
		}
		if !(Policy{AllowPrivate: true}).Allows(a) {
			t.Errorf("AllowPrivate refuses %s", c.addr)
		}
	}
	if _, err := ParseAllow([]string{"not-an-address"}); err == nil {
		t.Error("ParseAllow accepted a host name")
	}
}
