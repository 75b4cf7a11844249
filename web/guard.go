package web

import (
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
)

// The server runs in front of a whole class: a bug that panics while
// answering one page must end that page's run, not the process. Every
// goroutine the server starts for a page, and every message and request it
// answers, runs behind one of these recovery boundaries.

// recoverHTTP answers a request whose handler panicked with 500 and a
// clear text, instead of net/http's dropped connection.
func (s *Server) recoverHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler { // net/http's own way to abort a response
				panic(p)
			}
			s.Log.Error("recovered from a panic", "in", r.Method+" "+r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			http.Error(w, "tracer hit an internal error answering this request; the server goes on. Please report this with the server's log.", http.StatusInternalServerError)
		}()
		h.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether a request's Host header names this server:
// a loopback name or address, the address it listens on (any IP address
// when it listens on all of them), or a name given in Config.AllowHosts.
// A DNS-rebinding page reaches the server under a name of its own, which
// none of these match.
func (s *Server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if slices.ContainsFunc(s.cfg.AllowHosts, func(a string) bool { return strings.EqualFold(strings.TrimSuffix(a, "."), host) }) {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	listen := s.listenIP()
	return listen != nil && (listen.IsUnspecified() || listen.Equal(ip))
}

// checkHost refuses requests whose Host is not this server's (see
// hostAllowed) with 403 and a text that says how to allow the name.
func (s *Server) checkHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			name := r.Host
			if h, _, err := net.SplitHostPort(name); err == nil {
				name = h
			}
			http.Error(w, fmt.Sprintf("host %.80q is not this server's: tracer answers to localhost, its IP address and the names given with --allow-host; start it with --allow-host %.80s to open it under that name", r.Host, name), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// listenIP is the IP address the server listens on, or nil when it was
// not started with Serve or ServeListener (tests that serve Handler
// themselves).
func (s *Server) listenIP() net.IP {
	a, _ := s.listen.Load().(*net.TCPAddr)
	if a == nil {
		return nil
	}
	return a.IP
}

// onLoopback reports whether only this machine can reach the server: it
// listens on a loopback address, or its Handler is served by the caller
// (tests, on httptest's loopback listener).
func (s *Server) onLoopback() bool {
	a, _ := s.listen.Load().(*net.TCPAddr)
	return a == nil || a.IP.IsLoopback()
}
