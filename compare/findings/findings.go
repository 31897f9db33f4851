// Package findings derives, from the committed results of every grid (make matrix's grid, the
// fault family, the informer kinds, make bench), what users of client-go's informers meet: each
// finding a symptom (matrix.Symptom), whom it hits, the cells that show it, its causes with the
// source lines that decide them, and what to do where the grids show that it works. Only the
// causes and the fixes are written by hand (causes.go, fixes.go): knowledge, keyed by what the
// hits are; the rest is derived from the results.
package findings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/matrix"
)

// Grid is one committed grid of make matrix: its name, its page and its result.
type Grid struct {
	Name   string // one of matrix.Pages
	Page   string // its Markdown page, relative to the docs directory
	Result *matrix.Result
}

// gridFiles are the grids make matrix publishes (harness/internal/matrixrun, -docs): each page,
// and its result beside the cell logs the page links to.
var gridFiles = func() []struct{ name, page, result string } {
	var out []struct{ name, page, result string }
	for _, p := range matrix.Pages {
		out = append(out, struct{ name, page, result string }{p, p + ".md", p + "/" + p + ".json"})
	}
	return out
}()

// Sources are the results findings are derived from.
type Sources struct {
	Grids   []Grid
	Benches []*Bench // make bench's results, each with its Page
}

// Load reads the committed results in a docs directory: every grid of gridFiles and make
// bench's results (benchFiles). A file that is missing is left out; one that cannot be read
// as its kind of result is an error.
func Load(docs string) (*Sources, error) {
	src := &Sources{}
	for _, f := range gridFiles {
		r, err := matrix.Load(filepath.Join(docs, filepath.FromSlash(f.result)))
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		}
		src.Grids = append(src.Grids, Grid{Name: f.name, Page: f.page, Result: r})
	}
	for _, f := range benchFiles {
		b, err := LoadBench(filepath.Join(docs, f.result))
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			b.Page = f.page
			src.Benches = append(src.Benches, b)
		}
	}
	if len(src.Grids) == 0 && len(src.Benches) == 0 {
		return nil, fmt.Errorf("%s: no grid and no make bench results", docs)
	}
	return src, nil
}

// Finding is one symptom: the hits that show it, ranked as matrix.GroupHits ranks them, the
// causes of those hits and what to do about them.
type Finding struct {
	matrix.Group
	Causes []CauseOf
	Fixes  []FixOf
}

// Derive finds the symptoms of every source, ranked by the setups they hit (matrix.GroupHits),
// each with its causes and the fixes the grids show to work.
func Derive(src *Sources) []Finding {
	var hits []matrix.Hit
	for _, g := range src.Grids {
		for _, h := range g.Result.Hits() {
			h.Table = g.Page + "#" + g.Result.TableAnchor(h.Cell)
			hits = append(hits, h)
		}
	}
	for _, b := range src.Benches {
		hits = append(hits, b.Hits()...)
	}
	ix := src.index(hits)
	var out []Finding
	for _, g := range matrix.GroupHits(hits) {
		out = append(out, Finding{Group: g, Causes: causesOf(g), Fixes: ix.fixesOf(g)})
	}
	return out
}

// Dated is a source's name and when its run began, as docs/findings.md lists them.
type Dated struct {
	Name, Page string
	Date       time.Time
	Cells      int // its cells; make bench: its runs
}

// Dates lists the sources with the dates of their runs.
func (src *Sources) Dates() []Dated {
	var out []Dated
	for _, g := range src.Grids {
		out = append(out, Dated{Name: g.Name, Page: g.Page, Date: g.Result.Date, Cells: len(g.Result.Cells)})
	}
	for _, b := range src.Benches {
		i := slices.IndexFunc(benchFiles, func(f benchFile) bool { return f.page == b.Page })
		out = append(out, Dated{Name: benchFiles[i].name, Page: b.Page, Date: b.Started, Cells: len(b.Results)})
	}
	return out
}

// benchOf is the make bench results a hit of make bench's came from (its Table names the page).
func (src *Sources) benchOf(h matrix.Hit) *Bench {
	page, _, _ := strings.Cut(h.Table, "#")
	for _, b := range src.Benches {
		if b.Page == page {
			return b
		}
	}
	return &Bench{} // no points: no witnesses
}
