package ingest

import "testing"

// TestAddressShareKey: a request counts against its connection's IPv4
// address (an IPv4-mapped IPv6 one too), or its IPv6 address's /64; a
// RemoteAddr that is not ip:port counts as itself.
func TestAddressShareKey(t *testing.T) {
	for _, c := range []struct{ remote, want string }{
		{"127.0.0.2:50123", "127.0.0.2"},
		{"[::ffff:127.0.0.2]:50124", "127.0.0.2"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:80", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:80", "2001:db8:1:3::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"pipe", "pipe"},
	} {
		if got := addressKey(c.remote); got != c.want {
			t.Errorf("addressKey(%q) = %q, want %q", c.remote, got, c.want)
		}
	}
}
