package findings

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"informer-lab/compare/matrix"
)

// findingsHeading starts the findings section of every generated page.
const findingsHeading = "## Findings\n"

// BenchSection is docs/bench.md's findings section: a line per symptom make bench's points show,
// as a grid's page shows its own, or "None" with what was compared.
func BenchSection(b *Bench) string {
	var s strings.Builder
	s.WriteString(findingsHeading + "\n")
	groups := matrix.GroupHits(b.Hits())
	for _, g := range groups {
		s.WriteString("- " + g.MarkdownLine() + "\n")
	}
	if len(groups) == 0 {
		s.WriteString("- None: at no point did every streaming run cost kube-apiserver more memory or CPU than every LIST→WATCH run, by a median at least 1.2 times as high.\n")
	}
	return s.String()
}

// gridSection is a grid's page's findings section as its renderer writes it (Result.Markdown).
func gridSection(r *matrix.Result) (string, error) {
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		return "", err
	}
	section, ok := sectionOf(b.String())
	if !ok {
		return "", errors.New("the page renders no findings section")
	}
	return section, nil
}

// sectionOf is a page's findings section: from its heading to the next heading of its level, or
// the end, without the blank lines before that heading.
func sectionOf(page string) (string, bool) {
	start := strings.Index(page, "\n"+findingsHeading)
	if start < 0 {
		return "", false
	}
	rest := page[start+1:]
	if end := strings.Index(rest[len(findingsHeading):], "\n## "); end >= 0 {
		return strings.TrimRight(rest[:len(findingsHeading)+end], "\n") + "\n", true
	}
	return rest, true
}

// Splice puts section in place of the page's findings section, or at its end when it has none:
// the rest of the page stays as it is.
func Splice(page, section string) string {
	old, ok := sectionOf(page)
	if !ok {
		return page + "\n" + section
	}
	i := strings.Index(page, "\n"+old) + 1
	return page[:i] + section + page[i+len(old):]
}

// Write derives the findings from the results in the docs directory, writes Page, and splices
// into each page that exists its findings section, rendered from its results; it returns the
// findings and the files it changed.
func Write(docs string) (fs []Finding, changed []string, err error) {
	src, err := Load(docs)
	if err != nil {
		return nil, nil, err
	}
	fs = Derive(src)
	var page bytes.Buffer
	if err := WriteMarkdown(&page, src, fs); err != nil {
		return nil, nil, err
	}
	type file struct {
		name    string
		section func() (string, error) // a page's findings section; nil: the whole file is text
	}
	files := []file{{name: Page}}
	for _, g := range src.Grids {
		files = append(files, file{g.Page, func() (string, error) { return gridSection(g.Result) }})
	}
	for _, b := range src.Benches {
		files = append(files, file{b.Page, func() (string, error) { return BenchSection(b), nil }})
	}
	for _, f := range files {
		render := func(string) (string, error) { return page.String(), nil }
		if f.section != nil {
			render = func(old string) (string, error) {
				section, err := f.section()
				if old == "" {
					return "", err // no page to put it in
				}
				return Splice(old, section), err
			}
		}
		c, err := rewrite(filepath.Join(docs, f.name), render)
		if err != nil {
			return fs, changed, err
		}
		if c {
			changed = append(changed, f.name)
		}
	}
	return fs, changed, nil
}

// rewrite writes what render makes of a file's content ("" when it does not exist) when it
// differs, and says whether it did.
func rewrite(file string, render func(old string) (string, error)) (bool, error) {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	text, err := render(string(old))
	if err != nil || text == string(old) {
		return false, err
	}
	return true, os.WriteFile(file, []byte(text), 0o644)
}
