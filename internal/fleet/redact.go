package fleet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ConnectError is a failed connection named by the database it was for
// ("shard s2", "control database") and why, without its host, port, user
// or database name: pgconn.ConnectError prints `user=... database=...` and
// every address it dialled, and the server's own message names the user.
// The cause stays reachable (errors.Is, errors.As) for the code that
// handles it and for the operator's log.
type ConnectError struct {
	DB     string
	Reason string
	err    error
}

func (e *ConnectError) Error() string { return e.DB + ": cannot connect: " + e.Reason }

// Unwrap returns the pgconn error.
func (e *ConnectError) Unwrap() error { return e.err }

// redacted is an error whose text had connection failures or network
// addresses replaced; its chain is the original's and the ConnectErrors
// said in it.
type redacted struct {
	msg   string
	err   error
	named []error
}

func (e *redacted) Error() string   { return e.msg }
func (e *redacted) Unwrap() []error { return append([]error{e.err}, e.named...) }

// Redact returns err with every connection failure in it said as a
// ConnectError (the database named by name) and every network address
// (dial, read and write errors, host name lookups) left out, for text
// that is stored or shown beyond the operator's log (River's job errors).
// An error with none of them is returned as it is; a changed one still
// unwraps to the original.
func Redact(err error, name func(*pgconn.Config) string) error {
	if err == nil {
		return nil
	}
	if ce, ok := err.(*pgconn.ConnectError); ok {
		return newConnectError(ce, name)
	}
	msg := err.Error()
	out := msg
	var said []string // each failure as said, for when the text did not carry it verbatim
	var named []error
	walk(err, func(e error) bool {
		switch e := e.(type) {
		case *pgconn.ConnectError:
			c := newConnectError(e, name)
			out = replaceConnect(out, e.Error(), c)
			said = append(said, c.Error())
			named = append(named, c)
			return false
		case *net.OpError:
			s := opReason(e)
			out = strings.ReplaceAll(out, e.Error(), s)
			said = append(said, s)
			return false
		case *net.DNSError:
			s := dnsReason(e)
			out = strings.ReplaceAll(out, e.Error(), s)
			said = append(said, s)
			return false
		}
		return true
	})
	if len(said) > 0 && strings.Contains(out, "failed to connect to `") {
		// A wrapper reworded the failure's text: keep only what was said.
		out = strings.Join(said, "; ")
	}
	if out == msg {
		return err
	}
	return &redacted{msg: out, err: err, named: named}
}

// walk calls visit on err and, while visit returns true, on its causes.
func walk(err error, visit func(error) bool) {
	if err == nil || !visit(err) {
		return
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walk(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walk(e, visit)
		}
	}
}

func newConnectError(ce *pgconn.ConnectError, name func(*pgconn.Config) string) *ConnectError {
	db := ""
	if ce.Config != nil && name != nil {
		db = name(ce.Config)
	}
	if db == "" {
		db = "a database"
	}
	return &ConnectError{DB: db, Reason: connectReason(ce), err: ce}
}

// replaceConnect replaces each occurrence of old in s by c's text, without
// repeating c.DB where the text just before already names it
// ("shard s2: " + "shard s2: cannot connect: ...").
func replaceConnect(s, old string, c *ConnectError) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		if strings.HasSuffix(s[:i], c.DB+": ") {
			b.WriteString("cannot connect: " + c.Reason)
		} else {
			b.WriteString(c.Error())
		}
		s = s[i+len(old):]
	}
}

// connectReason says why a connection failed in words that carry no
// address, user or database name: the server's SQLSTATE and what it
// means, or what the network said.
func connectReason(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgReason(pgErr)
	}
	return netReason(err)
}

// pgReason says what the server refused. Its message is not used: it
// names the user, the database or the client's address.
func pgReason(e *pgconn.PgError) string {
	var why string
	switch e.Code {
	case "28P01":
		why = "password authentication failed"
	case "28000":
		if strings.HasPrefix(e.Message, "no pg_hba.conf entry") {
			why = "no pg_hba.conf entry for this client"
		} else {
			why = "not authorized (the role does not exist or may not log in)"
		}
	case "3D000":
		why = "database does not exist"
	case "42501":
		why = "permission denied"
	case "53300":
		why = "too many connections"
	case "57P03":
		why = "the server is not accepting connections (starting up, shutting down or in recovery)"
	default:
		why = "refused by the server"
	}
	return why + " (SQLSTATE " + e.Code + ")"
}

// netReason says what went wrong on the way to the server.
func netReason(err error) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &dnsErr):
		return dnsReason(dnsErr)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ENOENT):
		return "no server socket"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by the server"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return "TLS certificate not accepted"
	case strings.Contains(err.Error(), "tls"):
		return "TLS failed"
	}
	return "connection failed (the server's log has the details)"
}

// opReason is a network operation's failure without its addresses:
// "read tcp: connection reset by peer".
func opReason(e *net.OpError) string {
	why := "failed"
	var sys *os.SyscallError
	switch {
	case e.Err == nil:
	case errors.As(e.Err, &sys):
		why = sys.Err.Error()
	default:
		why = netReason(e.Err)
	}
	return strings.TrimSpace(e.Op+" "+e.Net) + ": " + why
}

func dnsReason(e *net.DNSError) string {
	switch {
	case e.IsTimeout:
		return "host name lookup timed out"
	case e.IsNotFound:
		return "host name lookup: no such host"
	}
	return "host name lookup failed"
}
