package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// webTestPublicIP is a public address the fake network routes to a loopback
// test server; nothing ever connects to it for real.
const webTestPublicIP = "93.184.215.14"

// webFakeNet is the resolver and dialer injected into a guarded webFetcher.
// It answers names from hosts, records every address it is asked to dial,
// connects only through routes to loopback test servers and refuses
// everything else without opening a socket, so a broken guard can never
// reach the network, not even a service on this machine.
type webFakeNet struct {
	mu       sync.Mutex
	hosts    map[string][]netip.Addr
	answers  map[string][][]netip.Addr // successive answers (DNS rebinding)
	routes   map[string]string         // dial address -> loopback "ip:port"
	dialed   []string
	resolved []string
}

func newWebFakeNet() *webFakeNet {
	return &webFakeNet{hosts: map[string][]netip.Addr{}, answers: map[string][][]netip.Addr{}, routes: map[string]string{}}
}

func (n *webFakeNet) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.resolved = append(n.resolved, host)
	if seq := n.answers[host]; len(seq) > 0 {
		n.answers[host] = seq[1:]
		return seq[0], nil
	}
	if ips, ok := n.hosts[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host (fake resolver)", Name: host, IsNotFound: true}
}

func (n *webFakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	n.dialed = append(n.dialed, addr)
	target, routed := n.routes[addr]
	n.mu.Unlock()
	ap, err := netip.ParseAddrPort(target)
	if !routed || err != nil || !ap.Addr().IsLoopback() {
		return nil, fmt.Errorf("fake network: no route to %s", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, target)
}

func (n *webFakeNet) dials() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.dialed...)
}

// route makes webTestPublicIP:80 reach srv.
func (n *webFakeNet) route(srv *httptest.Server) {
	n.routes[webTestPublicIP+":80"] = srv.Listener.Addr().String()
}

// guardedFetcher returns a fetcher on n with the guard on, whatever
// TestMain set for the package.
func (n *webFakeNet) guardedFetcher(proxy func(*http.Request) (*url.URL, error)) *webFetcher {
	on := true
	return newWebFetcher(webFetcherDeps{resolve: n.resolve, dial: n.dial, proxy: proxy, guard: &on})
}

func TestWebGuardRefusesPrivateForms(t *testing.T) {
	n := newWebFakeNet()
	n.hosts["internal.example"] = []netip.Addr{netip.MustParseAddr("10.1.2.3")}
	n.hosts["mixed.example"] = []netip.Addr{netip.MustParseAddr(webTestPublicIP), netip.MustParseAddr("127.0.0.1")}
	n.hosts["v6loop.example"] = []netip.Addr{netip.MustParseAddr("::1")}
	n.hosts["mapped.example"] = []netip.Addr{netip.MustParseAddr("::ffff:169.254.169.254")}
	n.hosts["metadata.example"] = []netip.Addr{netip.MustParseAddr("169.254.169.254")}
	n.hosts["cgnat.example"] = []netip.Addr{netip.MustParseAddr("100.100.100.200")}
	f := n.guardedFetcher(nil)
	hosts := []string{
		// IPv4 loopback and its legacy spellings
		"127.0.0.1", "127.255.255.254", "127.1", "127.0.1", "2130706433", "0x7f000001",
		"0x7f.0.0.1", "0177.0.0.1", "017700000001", "127.0.0.1.",
		// loopback names (RFC 6761), answered without asking DNS
		"localhost", "LOCALHOST.", "app.localhost",
		// unspecified
		"0.0.0.0", "0", "[::]",
		// IPv6 loopback
		"[::1]", "[0:0:0:0:0:0:0:1]",
		// RFC 1918
		"10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255",
		// link-local and the cloud metadata endpoint
		"169.254.169.254", "169.254.0.1", "0xa9fea9fe",
		// carrier-grade NAT
		"100.64.0.1", "100.127.255.254",
		// multicast, reserved, broadcast, protocol assignments, benchmarking
		"224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.0.8", "198.18.0.1",
		// documentation ranges
		"192.0.2.1", "203.0.113.7",
		// IPv6 unique local, link-local (with zone), multicast, site-local
		"[fc00::1]", "[fd12:3456:789a::1]", "[fe80::1]", "[fe80::1%25eth0]", "[ff02::1]", "[fec0::1]",
		// IPv6 forms embedding a private IPv4
		"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:10.0.0.1]", "[::ffff:169.254.169.254]",
		"[64:ff9b::7f00:1]", "[64:ff9b::a9fe:a9fe]", "[2002:7f00:1::]", "[2002:c0a8:101::1]",
		"[::127.0.0.1]", "[::ffff:0:7f00:1]",
		// names whose DNS answers are private
		"internal.example", "mixed.example", "v6loop.example", "mapped.example", "metadata.example", "cgnat.example",
	}
	if len(hosts) < 30 {
		t.Fatalf("only %d address forms", len(hosts))
	}
	for _, h := range hosts {
		for _, raw := range []string{"http://" + h + "/", "https://" + h + ":8443/x"} {
			_, err := f.fetch(context.Background(), raw, fetchOptions{})
			if !errors.Is(err, ErrPrivateTarget) {
				t.Errorf("fetch %s: err = %v, want ErrPrivateTarget", raw, err)
			}
		}
	}
	if d := n.dials(); len(d) > 0 {
		t.Errorf("the guard let these dials through: %v", d)
	}
	// The error names the host and the address.
	_, err := f.fetch(context.Background(), "http://internal.example/", fetchOptions{})
	if msg := fmt.Sprint(err); !strings.Contains(msg, "internal.example") || !strings.Contains(msg, "10.1.2.3") {
		t.Errorf("error %q does not name host and address", msg)
	}
}

func TestWebAddrClassPublic(t *testing.T) {
	for _, s := range []string{
		"8.8.8.8", "1.1.1.1", webTestPublicIP, "100.63.255.255", "100.128.0.0", "172.15.255.255",
		"172.32.0.0", "192.167.255.255", "11.0.0.1", "2606:4700::1111", "2a00:1450:4001::200e",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	} {
		if why := webAddrClass(netip.MustParseAddr(s)); why != "" {
			t.Errorf("%s refused as %s", s, why)
		}
	}
}

func TestWebParseHostIP(t *testing.T) {
	for host, want := range map[string]string{
		"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0X7F000001": "127.0.0.1",
		"127.1": "127.0.0.1", "10.1.2": "10.1.0.2", "0177.0.0.1": "127.0.0.1", "017700000001": "127.0.0.1",
		"0": "0.0.0.0", "[::1]": "::1", "8.8.8.8": "8.8.8.8", "8.8.8.8.": "8.8.8.8",
		"4294967295": "255.255.255.255",
	} {
		ip, ok := webParseHostIP(host)
		if !ok || ip.String() != want {
			t.Errorf("webParseHostIP(%q) = %v, %v; want %s", host, ip, ok, want)
		}
	}
	for _, host := range []string{"example.com", "4294967296", "1.2.3.4.5", "256.1.1.1", "1.2.65536", "09.1.1.1", "a.b", "", "1..2"} {
		if ip, ok := webParseHostIP(host); ok {
			t.Errorf("webParseHostIP(%q) = %v, want not an IP", host, ip)
		}
	}
}

func TestWebGuardAllowsPublicHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<p>public page</p>")
	}))
	defer srv.Close()
	n := newWebFakeNet()
	n.hosts["public.example"] = []netip.Addr{netip.MustParseAddr(webTestPublicIP)}
	n.route(srv)
	p, err := n.guardedFetcher(nil).fetch(context.Background(), "http://public.example/", fetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Body) != "<p>public page</p>" || p.URL.Host != "public.example" {
		t.Errorf("got %q from %s", p.Body, p.URL)
	}
	if d := n.dials(); len(d) != 1 || d[0] != webTestPublicIP+":80" {
		t.Errorf("dials = %v, want the checked IP literal", d)
	}
}

func TestWebGuardRedirectToPrivate(t *testing.T) {
	for _, target := range []string{
		"http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:6379/", "http://localhost/admin",
		"http://internal.example/", "http://[::1]/", "http://2130706433/",
	} {
		srv := httptest.NewServer(http.RedirectHandler(target, http.StatusFound))
		n := newWebFakeNet()
		n.hosts["public.example"] = []netip.Addr{netip.MustParseAddr(webTestPublicIP)}
		n.hosts["internal.example"] = []netip.Addr{netip.MustParseAddr("192.168.1.10")}
		n.route(srv)
		_, err := n.guardedFetcher(nil).fetch(context.Background(), "http://public.example/start", fetchOptions{})
		if !errors.Is(err, ErrPrivateTarget) {
			t.Errorf("redirect to %s: err = %v, want ErrPrivateTarget", target, err)
		}
		if d := n.dials(); len(d) != 1 || d[0] != webTestPublicIP+":80" {
			t.Errorf("redirect to %s: dials = %v, want only the public hop", target, d)
		}
		srv.Close()
	}
}

// TestWebGuardDNSRebinding: the name answers a public address first and a
// private one on the next lookup; the second connection, needed for the
// redirect to another port, must be refused.
func TestWebGuardDNSRebinding(t *testing.T) {
	srv := httptest.NewServer(http.RedirectHandler("http://rebind.example:8080/secret", http.StatusFound))
	defer srv.Close()
	n := newWebFakeNet()
	n.answers["rebind.example"] = [][]netip.Addr{
		{netip.MustParseAddr(webTestPublicIP)},
		{netip.MustParseAddr("127.0.0.1")},
	}
	n.route(srv)
	_, err := n.guardedFetcher(nil).fetch(context.Background(), "http://rebind.example/", fetchOptions{})
	if !errors.Is(err, ErrPrivateTarget) {
		t.Fatalf("err = %v, want ErrPrivateTarget", err)
	}
	if d := n.dials(); len(d) != 1 {
		t.Errorf("dials = %v, want only the first (public) one", d)
	}
}

// TestWebGuardControlHook dials a loopback listener through the production
// dialer with the guard on, bypassing the pre-dial check: the Control hook
// must refuse the socket before it connects.
func TestWebGuardControlHook(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The accept loop reports the peer of every connection, in the order
	// the kernel queued them.
	peers := make(chan string, 16)
	go func() {
		defer close(peers)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			peers <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	on := true
	f := newWebFetcher(webFetcherDeps{guard: &on})
	c, err := f.dial(context.Background(), "tcp", ln.Addr().String())
	if c != nil {
		c.Close()
	}
	if !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("dial %s through the guarded dialer: err = %v, want ErrPrivateTarget", ln.Addr(), err)
	}
	// The full dial path refuses before resolving or dialling.
	if _, err := f.dialContext(context.Background(), "tcp", ln.Addr().String()); !errors.Is(err, ErrPrivateTarget) {
		t.Errorf("dialContext: err = %v, want ErrPrivateTarget", err)
	}
	// A sentinel connection made after the refused dials is accepted after
	// any connection they made (the accept queue is FIFO): every peer seen
	// before it is a connection the guard let through.
	sentinel, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer sentinel.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var leaked []string
wait:
	for {
		select {
		case p, ok := <-peers:
			if !ok {
				t.Fatal("listener closed before the sentinel connection was accepted")
			}
			if p == sentinel.LocalAddr().String() {
				break wait
			}
			leaked = append(leaked, p)
		case <-ctx.Done():
			t.Fatal("the sentinel connection was never accepted")
		}
	}
	if len(leaked) != 0 {
		t.Errorf("listener accepted %d connections through the guard: %v", len(leaked), leaked)
	}
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "[::ffff:10.0.0.1]:80", "[fe80::1%eth0]:80", "not-an-address"} {
		if err := webGuardControl("tcp", addr, nil); !errors.Is(err, ErrPrivateTarget) {
			t.Errorf("webGuardControl(%s) = %v", addr, err)
		}
	}
	if err := webGuardControl("tcp", "8.8.8.8:443", nil); err != nil {
		t.Errorf("webGuardControl(8.8.8.8:443) = %v", err)
	}
}

// TestWebGuardIgnoresProxy: with the guard on, HTTP(S)_PROXY must not be
// consulted (the proxy would resolve the target itself); with private
// targets allowed it is.
func TestWebGuardIgnoresProxy(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		fmt.Fprint(w, "via proxy")
	}))
	defer proxy.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "direct")
	}))
	defer origin.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	proxyURL, _ := url.Parse(proxy.URL)
	var asked atomic.Int32
	proxyFunc := func(r *http.Request) (*url.URL, error) {
		asked.Add(1)
		return proxyURL, nil
	}

	n := newWebFakeNet()
	n.hosts["public.example"] = []netip.Addr{netip.MustParseAddr(webTestPublicIP)}
	n.route(origin)
	p, err := n.guardedFetcher(proxyFunc).fetch(context.Background(), "http://public.example/", fetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Body) != "direct" || asked.Load() != 0 || proxied.Load() != 0 {
		t.Errorf("guarded: body %q, proxy asked %d times, proxy served %d", p.Body, asked.Load(), proxied.Load())
	}

	n.routes[proxyURL.Host] = proxyURL.Host
	off := false
	open := newWebFetcher(webFetcherDeps{resolve: n.resolve, dial: n.dial, proxy: proxyFunc, guard: &off})
	p, err = open.fetch(context.Background(), "http://public.example/", fetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Body) != "via proxy" || proxied.Load() != 1 {
		t.Errorf("private targets allowed: body %q, proxy served %d, want the proxy", p.Body, proxied.Load())
	}
}

// TestWebGuardTriesEachAddress: a name with several public addresses is
// dialled address by address until one connects.
func TestWebGuardTriesEachAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "second address")
	}))
	defer srv.Close()
	n := newWebFakeNet()
	n.hosts["multi.example"] = []netip.Addr{netip.MustParseAddr("2606:4700::1111"), netip.MustParseAddr(webTestPublicIP)}
	n.route(srv)
	p, err := n.guardedFetcher(nil).fetch(context.Background(), "http://multi.example/", fetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Body) != "second address" {
		t.Errorf("body %q", p.Body)
	}
	if d := n.dials(); len(d) != 2 || d[0] != "[2606:4700::1111]:80" || d[1] != webTestPublicIP+":80" {
		t.Errorf("dials = %v", d)
	}
}
