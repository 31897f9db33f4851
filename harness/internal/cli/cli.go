// Package cli is what the harness's commands (make compare, matrix, bench, observe) share about
// ending: how parsing their flags ended, and which errors are the user's input (exit 2).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ExitUsage is the exit code of bad input: a flag, a value, a file or a command that is not
// what it must be. It is said in one line and nothing was started.
const ExitUsage = 2

// UsageError marks an error as the user's input, found after the flags parsed.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage marks err as the user's input (nil stays nil).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return UsageError{err}
}

// IsUsage reports an error that is the user's input.
func IsUsage(err error) bool { return errors.As(err, new(UsageError)) }

// Parsed says how parsing the flags ended: go on (ok), or exit with code: 0 after -h (the flag
// package printed the usage), ExitUsage after a bad flag, whose error it prints as one line.
func Parsed(err error, stderr io.Writer) (code int, ok bool) {
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	}
	fmt.Fprintln(stderr, "error:", err)
	return ExitUsage, false
}

// OneLine is an error's text on one line, as the commands print it: wrapped errors from
// client-go and exec carry newlines.
func OneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// Lines is an io.Writer that says each line written to it through say: a build's or envtest's
// progress, in a command's own prefixed lines.
type Lines func(format string, a ...any)

func (say Lines) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		say("%s", l)
	}
	return len(p), nil
}
