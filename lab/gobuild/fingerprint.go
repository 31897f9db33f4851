package gobuild

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// fingerprint is a hash of everything a GOWORK=off go build of the module in dir reads that can
// change without its go.sum changing: the go command's version and target, and every file of
// the module and of the local directories its go.mod replaces modules with (lab/, record/,
// ...). Dependencies from the module cache are fixed by go.sum, which is hashed too.
func fingerprint(ctx context.Context, dir string) (string, error) {
	h := sha256.New()
	env, err := goCommand(ctx, dir, "env", "GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT", "GOAMD64", "GOARM64")
	if err != nil {
		return "", fmt.Errorf("build %s (go env in %s): %w\n%s", filepath.Base(dir), dir, err, env)
	}
	h.Write(env)
	dirs, err := localReplaces(dir)
	if err != nil {
		return "", err
	}
	for _, d := range append([]string{dir}, dirs...) {
		if err := hashTree(h, d); err != nil {
			return "", fmt.Errorf("build %s: %w", filepath.Base(dir), err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// localReplaces are the directories the go.mod in dir replaces modules with ("=> ../lab").
func localReplaces(dir string) ([]string, error) {
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", filepath.Base(dir), err)
	}
	var dirs []string
	sc := bufio.NewScanner(bytes.NewReader(mod))
	for sc.Scan() {
		_, target, ok := strings.Cut(sc.Text(), "=>")
		if !ok {
			continue
		}
		fields := strings.Fields(target)
		if len(fields) == 1 && (strings.HasPrefix(fields[0], ".") || filepath.IsAbs(fields[0])) {
			if !filepath.IsAbs(fields[0]) {
				fields[0] = filepath.Join(dir, fields[0])
			}
			dirs = append(dirs, fields[0])
		}
	}
	return dirs, nil
}

// hashTree adds every regular file under root, its path and its content, to h.
func hashTree(h io.Writer, root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case !d.Type().IsRegular():
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(h, "%s\x00", path)
		_, err = io.Copy(h, f)
		return err
	})
}
