package app

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// labModules lists the lab module directories to run: client-v* directories with a go.mod.
func labModules(root, only string) ([]string, error) {
	all, _ := filepath.Glob(filepath.Join(root, "client-v*", "go.mod"))
	known := map[string]string{}
	for _, gm := range all {
		dir := filepath.Dir(gm)
		known[filepath.Base(dir)] = dir
	}
	var dirs []string
	if only == "" {
		for _, d := range known {
			dirs = append(dirs, d)
		}
	} else {
		for _, name := range strings.Split(only, ",") {
			d, ok := known[strings.TrimSpace(name)]
			if !ok {
				names := make([]string, 0, len(known))
				for n := range known {
					names = append(names, n)
				}
				sort.Strings(names)
				return nil, fmt.Errorf("unknown lab %q: the labs are %s", name, strings.Join(names, ", "))
			}
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no client-v*/go.mod under %s", root)
	}
	sort.Strings(dirs)
	return dirs, nil
}

// newRunDir makes out/<timestamp>, never reusing an existing directory (two runs in the same
// second, or at once, get -2, -3, ...).
func newRunDir(parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(parent, time.Now().Format("20060102-150405"))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s: run from the informer-lab repository or pass -root", dir)
		}
	}
}
