package envtestbin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// goTool runs the go command. Scratch modules are built with GOWORK=off so
// that a go.work around the caller cannot change their build list; the rest
// of the environment (GOPROXY, GOFLAGS, ...) is the user's.
type goTool struct {
	bin     string
	env     []string
	goproxy string
	gocache string
	modache string
}

func newGoTool(ctx context.Context) (*goTool, error) {
	bin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("%w on PATH: install Go 1.23 or newer (https://go.dev/dl) and retry", ErrNoGo)
	}
	g := &goTool{bin: bin, env: append(os.Environ(), "GOWORK=off")}
	out, err := g.output(ctx, "", "env", "-json", "GOPROXY", "GOCACHE", "GOMODCACHE")
	if err != nil {
		return nil, err
	}
	var env struct{ GOPROXY, GOCACHE, GOMODCACHE string }
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("%w: reading `go env -json`: %v", ErrBuildFailed, err)
	}
	g.goproxy, g.gocache, g.modache = env.GOPROXY, env.GOCACHE, env.GOMODCACHE
	return g, nil
}

// command prepares a go command that is interrupted when ctx ends.
func (g *goTool) command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, g.bin, args...)
	cmd.Dir = dir
	cmd.Env = g.env
	interruptGroup(cmd)
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// output runs a short go command and returns its stdout.
func (g *goTool) output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := g.command(ctx, dir, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("go %s: interrupted: %w", args[0], ctx.Err())
		}
		what := "go " + strings.Join(args, " ")
		return nil, goFailure(what, lines(stderr.String()), err, g.goproxy)
	}
	return stdout.Bytes(), nil
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// goMod is the part of `go mod edit -json` that the builds need.
type goMod struct {
	Go      string
	Require []struct{ Path, Version string }
	Replace []struct {
		Old, New struct{ Path, Version string }
	}
}

// readModule asks the proxy for path@version and parses its go.mod.
// `go list -m` fetches only the .info and .mod files, not the module zip, so
// an unserved version is reported in well under a second.
func (g *goTool) readModule(ctx context.Context, scratch, path, version string) (*goMod, error) {
	out, err := g.output(ctx, scratch, "list", "-m", "-json", path+"@"+version)
	if err != nil {
		if isNotServed(err) {
			return nil, fmt.Errorf("%w: %s@%s (GOPROXY=%s); %s", ErrNotServed, path, version, g.goproxy, g.servedHint(ctx, scratch, path, version))
		}
		return nil, err
	}
	var info struct{ GoMod string }
	if err := json.Unmarshal(out, &info); err != nil || info.GoMod == "" {
		return nil, fmt.Errorf("%w: `go list -m -json %s@%s` gave no go.mod path", ErrBuildFailed, path, version)
	}
	out, err = g.output(ctx, scratch, "mod", "edit", "-json", info.GoMod)
	if err != nil {
		return nil, err
	}
	var m goMod
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("%w: parsing go.mod of %s@%s: %v", ErrBuildFailed, path, version, err)
	}
	return &m, nil
}

// servedHint lists the served releases with the same major.minor as version,
// so that a typo in the patch number has an obvious fix.
func (g *goTool) servedHint(ctx context.Context, scratch, path, version string) string {
	fix := fmt.Sprintf("run `go list -m -versions %s` to see the served versions", path)
	prefix := version[:strings.LastIndex(version, ".")+1] // "v1.32."
	out, err := g.output(ctx, scratch, "list", "-m", "-versions", path)
	if err != nil {
		return fix
	}
	var same []string
	for _, v := range strings.Fields(string(out))[1:] {
		if strings.HasPrefix(v, prefix) {
			same = append(same, strings.TrimPrefix(v, "v"))
		}
	}
	if len(same) == 0 {
		return fmt.Sprintf("no %sx release is served; %s", strings.TrimPrefix(prefix, "v"), fix)
	}
	return fmt.Sprintf("served %sx releases: %s", strings.TrimPrefix(prefix, "v"), strings.Join(same, " "))
}

func isNotServed(err error) bool {
	return err != nil && strings.Contains(err.Error(), ErrNotServed.Error())
}

// require returns the version of the first of paths that m requires.
func (m *goMod) require(paths ...string) (string, bool) {
	for _, p := range paths {
		for _, r := range m.Require {
			if r.Path == p {
				return r.Version, true
			}
		}
	}
	return "", false
}

// writeScratchModule writes a go.mod that requires path@version.
// kubernetes replaces its staging modules (k8s.io/api, ...) by local
// directories that are not part of its module zip; those replaces are
// redirected to the published v0.Y.Z releases of the same code. Other
// replaces are copied, since replaces in a dependency's go.mod are ignored.
func writeScratchModule(dir, path, version string, dep *goMod, stagingVersion string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "module provision\n\ngo %s\n\nrequire %s %s\n", dep.Go, path, version)
	for _, r := range dep.Replace {
		old := r.Old.Path
		if r.Old.Version != "" {
			old += " " + r.Old.Version
		}
		switch {
		case strings.HasPrefix(r.New.Path, "./staging/src/") && stagingVersion != "":
			fmt.Fprintf(&b, "replace %s => %s %s\n", old, strings.TrimPrefix(r.New.Path, "./staging/src/"), stagingVersion)
		case strings.HasPrefix(r.New.Path, ".") || filepath.IsAbs(r.New.Path):
			// Another local path: not in the module zip, nothing to point at.
			// Leave it to the required version and let go report it if needed.
		default:
			fmt.Fprintf(&b, "replace %s => %s %s\n", old, r.New.Path, r.New.Version)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(b.String()), 0o644)
}
