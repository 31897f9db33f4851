// Package doccheck finds the log excerpts in the project's Markdown documents, so a test can
// check that each still matches a line the project really prints.
package doccheck

import (
	"bufio"
	"os"
	"strings"

	"informer-lab/compare/analysis"
)

// Marker goes on the line before a fenced block that quotes real output.
const Marker = "<!-- excerpt -->"

// Excerpt is one quoted line and where it stands.
type Excerpt struct {
	File string
	Line int
	Text string
}

// Excerpts returns every non-empty line of every marked block in file.
func Excerpts(file string) ([]Excerpt, int, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var out []Excerpt
	blocks := 0
	marked, inBlock := false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case inBlock && strings.HasPrefix(trimmed, "```"):
			inBlock = false
		case inBlock:
			if trimmed != "" {
				out = append(out, Excerpt{file, n, line})
			}
		case trimmed == Marker:
			marked = true
		case marked && strings.HasPrefix(trimmed, "```"):
			inBlock, marked = true, false
			blocks++
		case trimmed != "":
			marked = false
		}
	}
	return out, blocks, sc.Err()
}

// Pool is the set of normalized lines a run printed.
type Pool struct {
	lines map[string]bool
	all   []string
}

// Add adds printed text, line by line.
func (p *Pool) Add(text string) {
	if p.lines == nil {
		p.lines = map[string]bool{}
	}
	for _, l := range strings.Split(text, "\n") {
		n := strings.TrimSpace(analysis.NormalizeText(l))
		if n != "" && !p.lines[n] {
			p.lines[n] = true
			p.all = append(p.all, n)
		}
	}
}

// Match reports whether the excerpt line was printed, and otherwise the nearest line that was.
func (p *Pool) Match(excerpt string) (bool, string) {
	n := strings.TrimSpace(analysis.NormalizeText(excerpt))
	if p.lines[n] {
		return true, ""
	}
	best, bestScore := "", -1
	for _, l := range p.all {
		if s := similarity(n, l); s > bestScore {
			best, bestScore = l, s
		}
	}
	return false, best
}

// similarity is the length of the common prefix plus the common suffix: cheap, and enough to
// point a reader at the line that changed.
func similarity(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	return i + j
}
