// Package servers holds what make matrix and make bench share about kube-apiservers: how a
// server is named on the command line (a version, optionally with settings: feature gates and
// flags), and
// building each version once from the Go module proxy before anything starts.
package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/record"
)

// Server is one kube-apiserver of a run: a version and its settings, the feature gates and
// flags it gets (record.SplitServerSettings), "" for its defaults.
type Server struct{ Version, Settings string }

// Name is how tables and logs name it: "1.37.2", "1.37.2 WatchListCompression=false" or
// "1.34.4 watch-cache=false".
func (s Server) Name() string {
	if s.Settings == "" {
		return s.Version
	}
	return s.Version + " " + s.Settings
}

// Slug is Name as a path element.
func (s Server) Slug() string {
	return strings.NewReplacer(" ", "-", ",", "-").Replace(s.Name())
}

// Parse reads "X.Y.Z" or "X.Y.Z:Gate=bool,flag=value,...".
func Parse(s string) (Server, error) {
	v, settings, _ := strings.Cut(strings.TrimSpace(s), ":")
	if !isVersion(v) {
		return Server{}, fmt.Errorf("server %q: want a version X.Y.Z, optionally with kube-apiserver feature gates or flags after a colon (1.32.13:WatchList=false, 1.34.4:watch-cache=false)", s)
	}
	if err := checkSettings(settings); err != nil {
		return Server{}, fmt.Errorf("server %q: %w", s, err)
	}
	return Server{v, settings}, nil
}

// Has reports whether the server's settings hold setting as given ("CBORServingAndStorage=true").
func (s Server) Has(setting string) bool {
	for _, item := range strings.Split(s.Settings, ",") {
		if strings.TrimSpace(item) == setting {
			return true
		}
	}
	return false
}

// Alone refuses a server whose settings start another server beside kube-apiserver
// (record.ServerFlag.Beside: an aggregated apiserver, a second kube-apiserver), which only make
// matrix and make compare run: a command that runs kube-apiserver alone would ignore them.
func (s Server) Alone() error {
	for _, item := range strings.Split(s.Settings, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(item), "=")
		if f, ok := record.ServerFlagOf(name); ok && f.Beside {
			return fmt.Errorf("server %s: %s= starts a server beside kube-apiserver, which only make matrix and make compare run", s.Name(), name)
		}
	}
	return nil
}

// checkSettings refuses settings that are not gates and flags, or whose second server
// (upgrade=) is not a version.
func checkSettings(settings string) error {
	if _, _, err := record.SplitServerSettings(settings); err != nil {
		return err
	}
	if v := record.UpgradeOf(settings); v != "" && !isVersion(v) {
		return fmt.Errorf("%s=%s: want the second kube-apiserver's version X.Y.Z, e.g. 1.33.13", record.SettingUpgrade, v)
	}
	return nil
}

func isVersion(v string) bool {
	_, err := fmt.Sscanf(v, "%d.%d.%d", new(int), new(int), new(int))
	return err == nil && strings.Count(v, ".") == 2
}

// ParseList reads a comma-separated list; settings belong to the version before them, so
// "1.37.2:A=false,B=true,1.32.13" is two servers.
func ParseList(list string) ([]Server, error) {
	var out []Server
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if strings.Contains(f, "=") && !strings.Contains(f, ":") && len(out) > 0 {
			last := &out[len(out)-1] // another setting of the server before
			if err := checkSettings(f); err != nil {
				return nil, fmt.Errorf("server %q: %w", last.Version+":"+last.Settings+","+f, err)
			}
			last.Settings += "," + f
			continue
		}
		s, err := Parse(f)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Versions lists the distinct kube-apiserver versions the servers run, in order: a second
// server's (upgrade=) after its first's.
func Versions(ss []Server) []string {
	var vs []string
	for _, s := range ss {
		for _, v := range []string{s.Version, record.UpgradeOf(s.Settings)} {
			if v != "" && !slices.Contains(vs, v) {
				vs = append(vs, v)
			}
		}
	}
	return vs
}

// ErrUsage marks a provisioning failure that is the user's input: a version that does not
// exist or is not served.
var ErrUsage = errors.New("no such kube-apiserver version")

// Provision builds every version the envtest store does not have yet (5-14 minutes each, cold),
// saying so first, and its build's progress line by line with a prefix.
func Provision(ctx context.Context, ss []Server, say func(string, ...any), progress io.Writer) error {
	for _, v := range Versions(ss) {
		if _, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: v, NoBuild: true}); err == nil {
			continue
		}
		t := time.Now()
		say("kube-apiserver %s is not in the envtest store yet: building it from the Go module proxy (5-14 minutes cold)", v)
		if _, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: v, Progress: Prefixed{progress, "[envtest " + v + "] "}}); err != nil {
			if errors.Is(err, envtestbin.ErrNotServed) || errors.Is(err, envtestbin.ErrBadVersion) {
				return fmt.Errorf("provision kube-apiserver %s: %w: %w", v, ErrUsage, err)
			}
			return fmt.Errorf("provision kube-apiserver %s: %w", v, err)
		}
		say("kube-apiserver %s built in %s", v, time.Since(t).Round(time.Second))
	}
	return nil
}

// Prefixed writes each line of a build's progress with a prefix.
type Prefixed struct {
	W      io.Writer
	Prefix string
}

func (p Prefixed) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		fmt.Fprintln(p.W, p.Prefix+line)
	}
	return len(b), nil
}
