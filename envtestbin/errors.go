package envtestbin

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by Lookup, Build and Kubectl wrap one of these (use errors.Is).
var (
	ErrBadVersion       = errors.New("bad version")
	ErrNotServed        = errors.New("not served by the Go module proxy")
	ErrNoGo             = errors.New("no go command")
	ErrProxyUnreachable = errors.New("Go module proxy unreachable")
	ErrDiskFull         = errors.New("not enough disk space")
	ErrMissingBinary    = errors.New("missing binary")
	ErrBuildFailed      = errors.New("build failed")
)

// tailLines is how much of go's output a failure carries.
const tailLines = 20

// Substrings of go's output by which failures are recognized.
var (
	networkMarks = []string{
		"dial tcp", "no such host", "connection refused", "i/o timeout",
		"proxyconnect", "network is unreachable", "TLS handshake timeout",
		"connection reset by peer", "server misbehaving", "module lookup disabled",
	}
	notServedMarks = []string{
		"not available", "unknown revision", "invalid version",
		"404 Not Found", "410 Gone", "no matching versions", "not found: ",
	}
)

// goFailure turns a failed go command into one of the errors above: the first
// line says what went wrong and what to do, the following lines are the tail
// of go's output.
func goFailure(what string, output []string, runErr error, goproxy string) error {
	text := strings.Join(output, "\n")
	tail := output
	if len(tail) > tailLines {
		tail = tail[len(tail)-tailLines:]
	}
	detail := ""
	if len(tail) > 0 {
		detail = "\n  go output (last lines):\n    " + strings.Join(tail, "\n    ")
	}
	switch {
	case strings.Contains(text, "no space left on device"):
		return fmt.Errorf("%w: %s: no space left on device; free some space (GOCACHE, GOMODCACHE, the store) and retry%s", ErrDiskFull, what, detail)
	case containsAny(text, networkMarks):
		return fmt.Errorf("%w: %s: cannot reach GOPROXY=%s; check the network or set GOPROXY to a reachable proxy%s", ErrProxyUnreachable, what, goproxy, detail)
	case containsAny(text, notServedMarks):
		return fmt.Errorf("%w: %s (GOPROXY=%s)%s", ErrNotServed, what, goproxy, detail)
	}
	return fmt.Errorf("%w: %s: %v%s", ErrBuildFailed, what, runErr, detail)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
