package doccheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// A source quote in Markdown backs a sentence about upstream behaviour with the line that decides
// it, at the module version that decides it:
//
//	(k8s.io/client-go@v0.31.14 rest/request.go: "We specifically don't want to rate limit watches")
//
// An opening parenthesis, module@version, a space, the file's path inside the module, a colon, a
// space, a double-quoted excerpt of one or more consecutive source lines (no double quote inside),
// a closing parenthesis. Where Markdown wraps a paragraph, a line break counts as a space. The
// excerpt is compared whitespace-normalized (runs of spaces, tabs and line breaks are one space,
// on both sides), so it may span source lines; a comment spanning lines keeps its "//".
var quoteRE = regexp.MustCompile(`\(([a-z0-9.-]+(?:/[A-Za-z0-9._~-]+)+)@(v[0-9][A-Za-z0-9.+-]*)\s+([^\s:"()]+):\s+"([^"]+)"\)`)

// A text that looks like a quote, "(module@v…" or "module@version path: \"", and is not part of
// one the full pattern matches, is reported instead of skipped.
var (
	quoteStartRE = regexp.MustCompile(`\((k8s\.io|sigs\.k8s\.io|github\.com|golang\.org|go\.etcd\.io)/[^\s@()"]*@v[0-9]`)
	quoteBodyRE  = regexp.MustCompile(`[a-z0-9.-]+(?:/[A-Za-z0-9._~-]+)+@v[0-9][A-Za-z0-9.+-]*\s+[^\s:"()]+:\s+"`)
)

// QuotableModules are the modules a quote may name. Each version quoted is downloaded once
// into the module cache, so make test can check every quote.
var QuotableModules = map[string]bool{
	"k8s.io/client-go":       true,
	"k8s.io/apiserver":       true,
	"k8s.io/apimachinery":    true,
	"k8s.io/kube-aggregator": true,
	// docs/fakes.md: controller-runtime's fake client and fake informers.
	"sigs.k8s.io/controller-runtime": true,
}

// Quote is one source quote and where it stands.
type Quote struct {
	File    string
	Line    int // of the opening parenthesis
	Module  string
	Version string
	Path    string // inside the module, slash-separated
	Excerpt string // as written, line breaks included
}

// String is where the quote stands and what it quotes, as an error names it.
func (q Quote) String() string {
	return fmt.Sprintf("%s:%d: %s@%s %s", q.File, q.Line, q.Module, q.Version, q.Path)
}

// Quotes returns every source quote in a Markdown file. A text that starts like a quote,
// "(module@v", but is not one in full is an error, so a mistyped quote is not silently unchecked.
func Quotes(markdownFile string) ([]Quote, error) {
	data, err := os.ReadFile(markdownFile)
	if err != nil {
		return nil, err
	}
	text := string(data)
	lineAt := func(off int) int { return 1 + strings.Count(text[:off], "\n") }
	var out []Quote
	var spans [][2]int
	inQuote := func(at int) bool {
		for _, sp := range spans {
			if sp[0] <= at && at < sp[1] {
				return true
			}
		}
		return false
	}
	for _, m := range quoteRE.FindAllStringSubmatchIndex(text, -1) {
		spans = append(spans, [2]int{m[0], m[1]})
		out = append(out, Quote{
			File:    markdownFile,
			Line:    lineAt(m[0]),
			Module:  text[m[2]:m[3]],
			Version: text[m[4]:m[5]],
			Path:    text[m[6]:m[7]],
			Excerpt: text[m[8]:m[9]],
		})
	}
	var suspects []int
	for _, re := range []*regexp.Regexp{quoteStartRE, quoteBodyRE} {
		for _, m := range re.FindAllStringIndex(text, -1) {
			if !inQuote(m[0]) {
				suspects = append(suspects, m[0])
			}
		}
	}
	sort.Ints(suspects)
	var bad []string
	reported := map[int]bool{}
	for _, at := range suspects {
		if line := lineAt(at); !reported[line] {
			reported[line] = true
			snippet := strings.ReplaceAll(text[at:min(len(text), at+120)], "\n", " ")
			bad = append(bad, fmt.Sprintf("%s:%d: not a source quote, (module@version path: \"excerpt\"): %s…", markdownFile, line, snippet))
		}
	}
	if len(bad) > 0 {
		return out, errors.New(strings.Join(bad, "\n"))
	}
	return out, nil
}

// ModDir returns the directory of module@version's source.
type ModDir func(module, version string) (string, error)

// Check reports an error when the quoted file does not exist in the module's directory, or does
// not contain the excerpt (whitespace-normalized).
func Check(q Quote, modDir ModDir) error {
	if err := Quotable(q.Module); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	if strings.Contains(q.Path, "..") || strings.HasPrefix(q.Path, "/") {
		return fmt.Errorf("%s: the path must be inside the module", q)
	}
	dir, err := modDir(q.Module, q.Version)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(q.Path)))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: the module has no such file (excerpt %q)", q, normalizeSpace(q.Excerpt))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	if !strings.Contains(normalizeSpace(string(src)), normalizeSpace(q.Excerpt)) {
		return fmt.Errorf("%s: the file does not contain the excerpt %q", q, normalizeSpace(q.Excerpt))
	}
	return nil
}

// Quotable says why a module may not be quoted.
func Quotable(module string) error {
	switch {
	case QuotableModules[module]:
		return nil
	case module == "k8s.io/kubernetes":
		return errors.New("k8s.io/kubernetes is too large a download for make test to check a quote of it: " +
			"name its file and function without a quote, or quote k8s.io/client-go, k8s.io/apiserver or k8s.io/apimachinery")
	default:
		return fmt.Errorf("%s may not be quoted: only k8s.io/client-go, k8s.io/apiserver and k8s.io/apimachinery are", module)
	}
}

func normalizeSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// ModuleCache finds module versions in the Go module cache, downloading the missing ones.
type ModuleCache struct {
	Root string // go env GOMODCACHE
}

// NewModuleCache asks the go command where the module cache is.
func NewModuleCache() (*ModuleCache, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		return nil, errors.New("go env GOMODCACHE is empty")
	}
	return &ModuleCache{Root: root}, nil
}

// Dir is where module@version's source is in the cache (it may not be there yet).
func (c *ModuleCache) Dir(module, version string) string {
	return filepath.Join(c.Root, filepath.FromSlash(escapePath(module)+"@"+escapePath(version)))
}

// escapePath escapes a module path or version as the module cache does (golang.org/x/mod/module's
// EscapePath): each upper-case letter becomes "!" and its lower case.
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Download fetches the module versions the cache does not have yet, in one go mod download, run
// outside any workspace with a scratch go.mod.
func (c *ModuleCache) Download(modVersions []string) error {
	var missing []string
	for _, mv := range modVersions {
		module, version, _ := strings.Cut(mv, "@")
		if _, err := os.Stat(filepath.Join(c.Dir(module, version), "go.mod")); err != nil {
			missing = append(missing, mv)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	tmp, err := os.MkdirTemp("", "doccheck-download-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module scratch\n\ngo 1.22\n"), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", append([]string{"mod", "download", "-json"}, missing...)...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	// go mod download -json prints one object per module, with Error set for a failed one.
	var errs []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			errs = append(errs, fmt.Sprintf("go mod download -json: %v", err))
			break
		}
		if m.Error != "" {
			errs = append(errs, fmt.Sprintf("%s@%s: %s", m.Path, m.Version, m.Error))
		}
	}
	if runErr != nil && len(errs) == 0 {
		errs = append(errs, fmt.Sprintf("go mod download %s: %v: %s", strings.Join(missing, " "), runErr, strings.TrimSpace(stderr.String())))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// Find is a ModDir: the module version's directory, downloaded first if the cache lacks it.
func (c *ModuleCache) Find(module, version string) (string, error) {
	if err := Quotable(module); err != nil {
		return "", err
	}
	if err := c.Download([]string{module + "@" + version}); err != nil {
		return "", err
	}
	return c.Dir(module, version), nil
}
