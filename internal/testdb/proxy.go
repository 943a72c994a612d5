package testdb

import (
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/galewatch/galewatch/internal/pgserver"
)

// Proxy forwards TCP connections to a real Postgres server and can make it
// look hung without touching the server: while hung, no byte goes either
// way on open connections and new ones are accepted but never answered,
// which is what a server whose processes are stopped (SIGSTOP) looks like
// from the client. Tests of the paths that must time out use it on the
// shared cluster; the fault tests stop real servers instead.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	hung    bool
	resumed chan struct{} // closed when a hang ends
}

// NewProxy listens on a free loopback port and forwards to target
// (host:port), until the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, resumed: make(chan struct{})}
	close(p.resumed)
	var conns sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			conns.Go(func() { p.serve(c, &mu, &open) })
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.Resume()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		conns.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Hang stops every byte until Resume.
func (p *Proxy) Hang() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hung {
		p.hung = true
		p.resumed = make(chan struct{})
	}
}

// Resume lets bytes through again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hung {
		p.hung = false
		close(p.resumed)
	}
}

func (p *Proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resumed
}

func (p *Proxy) serve(c net.Conn, mu *sync.Mutex, open *[]net.Conn) {
	defer c.Close()
	<-p.gate() // a new connection is accepted but not answered while hung
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	mu.Lock()
	*open = append(*open, up)
	mu.Unlock()
	defer up.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				<-p.gate() // held while hung
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
}

// ProxiedDatabase creates a database on the embedded cluster (dropped when
// the test ends) and returns a Proxy to the cluster's port with the
// database's URL through it (the cluster's password file, no password in
// it). It needs the embedded default: with DATABASE_URL set it skips.
func ProxiedDatabase(t testing.TB) (*Proxy, string) {
	t.Helper()
	if os.Getenv("DATABASE_URL") != "" {
		t.Skip("DATABASE_URL is set: the proxy is put in front of the embedded cluster only")
	}
	dsn := NewDatabase(t)
	s := pgserver.New(Home(t))
	p := NewProxy(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port())))
	name, err := pgserver.DatabaseName(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{}
	q.Set("sslmode", "disable")
	q.Set("passfile", s.PassFile())
	u := url.URL{Scheme: "postgres", User: url.User(pgserver.SuperUser), Host: p.Addr(), Path: "/" + name, RawQuery: q.Encode()}
	return p, u.String()
}
