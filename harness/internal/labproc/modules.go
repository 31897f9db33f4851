package labproc

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Modules lists the lab module directories under root, the client-v* directories with a
// go.mod, in order: every one, or the comma-separated names in only (an unknown name is an
// error that names the modules there are).
func Modules(root, only string) ([]string, error) {
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
