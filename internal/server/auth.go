package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// allowed applies the access rules to one request and answers it when it
// is refused.
//
// With a token: `Authorization: Bearer <token>`, or HTTP basic auth whose
// password is the token (any user name), so a browser can open the River
// UI after its login prompt.
//
// Without a token the server listens only on loopback (CheckExposure);
// requests must also name a loopback host, so a web page whose own name was
// made to resolve to 127.0.0.1 (DNS rebinding) cannot use the server.
func (s *Server) allowed(w http.ResponseWriter, r *http.Request) bool {
	if s.cfg.Token == "" {
		host := r.Host
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			host = h
		}
		if isLoopbackHost(strings.Trim(host, "[]")) {
			return true
		}
		http.Error(w, "forbidden: without "+TokenEnv+" this server answers only requests to localhost", http.StatusForbidden)
		return false
	}
	if s.tokenOK(r) {
		return true
	}
	w.Header().Add("WWW-Authenticate", `Bearer realm="galewatch"`)
	w.Header().Add("WWW-Authenticate", `Basic realm="galewatch"`)
	http.Error(w, "unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
	return false
}

func (s *Server) tokenOK(r *http.Request) bool {
	if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		return s.tokenIs(strings.TrimSpace(auth[7:]))
	}
	if _, pass, ok := r.BasicAuth(); ok {
		return s.tokenIs(pass)
	}
	return false
}

// tokenIs compares digests in constant time, so neither the token's
// contents nor its length show in the time a refusal takes.
func (s *Server) tokenIs(got string) bool {
	if s.cfg.Token == "" {
		return false
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(s.cfg.Token))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
