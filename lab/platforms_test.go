package lab

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// make check type-checks every module for darwin/arm64 beside the native linux/amd64, and the
// modules that hold build-constrained files (lab, envtestbin) for darwin/amd64 and linux/arm64
// too (hack/test.sh). That covers every file of the project on every supported target only if
// no file is chosen by its architecture and every file chosen by its system is in those two
// modules: this test holds the project to it.
func TestBuildConstraintsAreCrossCompiled(t *testing.T) {
	targets := [][2]string{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}
	everyTarget := []string{"lab", "envtestbin"}
	constrained := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "out") {
				return filepath.SkipDir
			}
			return err
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		var in []bool
		for _, tg := range targets {
			ctx := build.Default
			ctx.GOOS, ctx.GOARCH = tg[0], tg[1]
			ok, err := ctx.MatchFile(filepath.Dir(path), filepath.Base(path))
			if err != nil {
				return err
			}
			in = append(in, ok)
		}
		if in[0] != in[1] || in[2] != in[3] {
			t.Errorf("%s is chosen by its architecture (linux/amd64, linux/arm64, darwin/amd64, darwin/arm64: %v): hack/test.sh cross-compiles each module for one architecture of each system only", path, in)
		}
		module, _, _ := strings.Cut(strings.TrimPrefix(filepath.ToSlash(path), "../"), "/")
		if slices.Contains(in, false) {
			constrained++
			if !slices.Contains(everyTarget, module) {
				t.Errorf("%s is build-constrained outside %v, the modules hack/test.sh cross-compiles for every target: add its module there", path, everyTarget)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if constrained == 0 {
		t.Error("no build-constrained file found: is the walk reading the repository?")
	}
}
