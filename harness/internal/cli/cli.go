// Package cli is what the harness's commands (make compare, matrix, bench, observe) share about
// parsing their flags and ending: how parsing ended, and which errors are the user's input
// (exit 2).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"informer-lab/harness/internal/rundir"
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

// Flags is a command's flag set, parsed as every command parses its flags: an error is returned,
// not exited on (Parsed says how parsing ended), the usage goes to stderr, and an argument that
// is not a flag is refused. It has -root and -out, for a command that makes run directories.
type Flags struct {
	*flag.FlagSet
	root, out string
}

// NewFlags is the flag set of command name, with -root (the repository, holding rootHolds) and
// -out.
func NewFlags(name, rootHolds string, stderr io.Writer) *Flags {
	f := &Flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	f.SetOutput(stderr)
	f.StringVar(&f.root, "root", "", "repository root, holding "+rootHolds+" (default: found from the working directory)")
	f.StringVar(&f.out, "out", "", "parent of run directories (default: <root>/out)")
	return f
}

// Parse parses args, which are flags only.
func (f *Flags) Parse(args []string) error {
	if err := f.FlagSet.Parse(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags only; see -h)", f.Arg(0))
	}
	return nil
}

// Dirs are -root and -out, or where the user gave none their defaults (rundir.Defaults): the
// last thing a command's parsing does, once every flag is known to be good.
func (f *Flags) Dirs() (root, out string, err error) { return rundir.Defaults(f.root, f.out) }

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

// Lines is an io.Writer that says each line written to it through say: a build's or envtest's
// progress, in a command's own prefixed lines.
type Lines func(format string, a ...any)

func (say Lines) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		say("%s", l)
	}
	return len(p), nil
}
