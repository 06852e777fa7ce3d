package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// webDialAttemptTimeout bounds a connection attempt to one address of a
// name that has more addresses to try.
const webDialAttemptTimeout = 10 * time.Second

// SetAllowPrivateTargets turns the private-address guard of FetchWebPage,
// FetchWebPageFollowingRefresh and RunCrawl off (true) or back on (false,
// the default). With it on, HTTP_PROXY/HTTPS_PROXY are ignored, because a
// proxy resolves the target itself and the address check could not apply;
// with it off they are honoured. Call it once at startup, and only when no
// one you don't trust can choose the URLs fetched. It is safe for concurrent
// use; fetches already connected are not affected, idle keep-alive
// connections of the default client are closed.
func SetAllowPrivateTargets(allow bool) {
	if f := webDefaultFetcher(); f.allow.Swap(allow) != allow {
		f.transport.CloseIdleConnections()
	}
}

// webAddrClass returns why ip must not be fetched from ("" when it is a
// public unicast address). IPv6 addresses that embed an IPv4 address
// (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by the
// embedded address; IPv4-compatible (::a.b.c.d, deprecated) and Teredo
// addresses are refused outright.
func webAddrClass(ip netip.Addr) string {
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return "invalid address"
	}
	if ip.Is4In6() {
		if why := webAddrClass(ip.Unmap()); why != "" {
			return "IPv4-mapped " + why
		}
		return ""
	}
	if ip.Is4() {
		for _, r := range webPrivateV4 {
			if r.p.Contains(ip) {
				return r.why
			}
		}
		return ""
	}
	b := ip.As16()
	switch {
	case ip.IsUnspecified():
		return "unspecified address"
	case ip.IsLoopback():
		return "loopback"
	case webNAT64.Contains(ip):
		if why := webAddrClass(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
			return "NAT64-embedded " + why
		}
		return ""
	case web6to4.Contains(ip):
		if why := webAddrClass(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
			return "6to4-embedded " + why
		}
		return ""
	case webV4Compat.Contains(ip):
		return "IPv4-compatible IPv6 address (deprecated)"
	}
	for _, r := range webPrivateV6 {
		if r.p.Contains(ip) {
			return r.why
		}
	}
	if !webGlobalV6.Contains(ip) {
		return "reserved IPv6 range"
	}
	return ""
}

type webRange struct {
	p   netip.Prefix
	why string
}

var (
	webNAT64    = netip.MustParsePrefix("64:ff9b::/96")
	web6to4     = netip.MustParsePrefix("2002::/16")
	webV4Compat = netip.MustParsePrefix("::/96")
	webGlobalV6 = netip.MustParsePrefix("2000::/3")

	webPrivateV4 = []webRange{
		{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0/8)"},
		{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
		{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (100.64/10)"},
		{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
		{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
		{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
		{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0/24)"},
		{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
		{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
		{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
		{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18/15)"},
		{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
		{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
		{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240/4, broadcast)"},
	}
	webPrivateV6 = []webRange{
		{netip.MustParsePrefix("fc00::/7"), "unique local (fc00::/7)"},
		{netip.MustParsePrefix("fe80::/10"), "link-local"},
		{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
		{netip.MustParsePrefix("ff00::/8"), "multicast"},
		{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
		{netip.MustParsePrefix("100::/64"), "discard-only"},
		{netip.MustParsePrefix("2001::/32"), "Teredo"},
		{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
		{netip.MustParsePrefix("3fff::/20"), "documentation"},
	}
)

// webParseHostIP returns the address a URL host names literally: an IPv4 or
// IPv6 literal (with or without brackets and zone), or one of the legacy IPv4
// forms that resolvers and browsers accept: a single 32-bit number
// ("2130706433", "0x7f000001", "017700000001") or fewer than four parts
// ("127.1", "10.1.2"), each part decimal, 0x-hex or 0-octal.
func webParseHostIP(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip, true
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base, digits := 10, p
		switch {
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			base, digits = 16, p[2:]
			if digits == "" {
				digits = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		n, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(nums) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i, n := range nums[:last] {
		v |= n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// webLocalName reports whether host is "localhost" or a name under it, which
// RFC 6761 reserves for loopback whatever DNS says.
func webLocalName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// webCheckAddr returns an error wrapping ErrPrivateTarget if ip is not a
// public address; host is the name it came from, for the message.
func webCheckAddr(host string, ip netip.Addr) error {
	why := webAddrClass(ip)
	if why == "" {
		return nil
	}
	if h := strings.Trim(host, "[]"); h == ip.String() || h == ip.WithZone("").String() {
		return fmt.Errorf("%w: %s is %s", ErrPrivateTarget, host, why)
	}
	return fmt.Errorf("%w: %s resolves to %s (%s)", ErrPrivateTarget, host, ip, why)
}

// webGuardControl is the net.Dialer Control hook of the guarded dialer: it
// runs on the socket address about to be connected to, after every
// resolution, and refuses private addresses. It is the last line of defence
// behind webFetcher.dialContext, which checks the same addresses before
// dialling them.
func webGuardControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check dial address %q: %w", ErrPrivateTarget, address, err)
	}
	return webCheckAddr(ap.Addr().String(), ap.Addr())
}

// dialContext is the Transport's dialer. With the guard on it resolves host
// itself (through f.resolve, or literally for IP forms), refuses the whole
// name if any of its addresses is private, and dials the checked IP
// literals one after the other, so the address checked is the address
// connected to: a DNS answer changing between check and connect cannot slip
// through. With private targets allowed it dials addr as given.
func (f *webFetcher) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if f.allowPrivate() {
		return f.dial(ctx, network, addr)
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port: %w", addr, err)
	}
	var ips []netip.Addr
	if ip, ok := webParseHostIP(host); ok {
		ips = []netip.Addr{ip}
	} else if webLocalName(host) {
		return nil, fmt.Errorf("%w: %s is a loopback name", ErrPrivateTarget, host)
	} else {
		ips, err = f.resolve(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
	}
	for _, ip := range ips {
		if err := webCheckAddr(host, ip); err != nil {
			return nil, err
		}
	}
	var errs []error
	for i, ip := range ips {
		dctx := ctx
		if i < len(ips)-1 {
			// Leave time for the other addresses when this one is
			// unreachable without an error (e.g. IPv6 blackholed).
			var cancel context.CancelFunc
			dctx, cancel = context.WithTimeout(ctx, webDialAttemptTimeout)
			defer cancel()
		}
		c, err := f.dial(dctx, network, netip.AddrPortFrom(ip.WithZone(""), uint16(port)).String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}
