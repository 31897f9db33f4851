package doccheck

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Every source quote in README.md, HOW-IT-WORKS.md and docs/*.md must still be in the file it
// names, at the module version it names: the quoted modules are downloaded into the module cache
// once, then each quote is a file read.
func TestSourceQuotes(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "HOW-IT-WORKS.md")}, docs...)
	var quotes []Quote
	for _, doc := range docs {
		qs, err := Quotes(doc)
		if err != nil {
			t.Error(strings.ReplaceAll(err.Error(), root+"/", ""))
		}
		for i := range qs {
			qs[i].File = strings.TrimPrefix(qs[i].File, root+"/")
		}
		quotes = append(quotes, qs...)
	}
	cache, err := NewModuleCache()
	if err != nil {
		t.Fatal(err)
	}
	need := map[string]bool{}
	for _, q := range quotes {
		if Quotable(q.Module) == nil {
			need[q.Module+"@"+q.Version] = true
		}
	}
	mods := make([]string, 0, len(need))
	for mv := range need {
		mods = append(mods, mv)
	}
	sort.Strings(mods)
	start := time.Now()
	if err := cache.Download(mods); err != nil {
		t.Fatalf("downloading the quoted modules: %v", err)
	}
	t.Logf("%d module versions in the cache (%v)", len(mods), time.Since(start).Round(time.Millisecond))
	perFile := map[string]int{}
	// docs[i] relative to the repository, as the quotes name their files now
	for i := range docs {
		docs[i] = strings.TrimPrefix(docs[i], root+"/")
	}
	for _, q := range quotes {
		if err := Check(q, cache.Find); err != nil {
			t.Error(err)
			continue
		}
		perFile[q.File]++
	}
	for _, doc := range docs {
		if perFile[doc] > 0 {
			t.Logf("%s: %d source quotes checked", doc, perFile[doc])
		}
	}
}

// The checker catches a quote whose line changed: real excerpts of real downloaded files pass
// (one spanning two source lines, with the Markdown's own line break and indentation); the same
// with one word altered, at a version without the line, in a file the module lacks, or made of
// lines that are not next to each other, fail with the place, module, path and excerpt.
func TestSourceQuotesCatchAChangedLine(t *testing.T) {
	cache, err := NewModuleCache()
	if err != nil {
		t.Fatal(err)
	}
	watch := Quote{File: "x.md", Line: 1, Module: "k8s.io/client-go", Version: "v0.31.14", Path: "rest/request.go",
		Excerpt: "We specifically don't want to rate limit watches"}
	// A line v0.31.14 added to the reflector.
	gate := Quote{File: "x.md", Line: 1, Module: "k8s.io/client-go", Version: "v0.31.14", Path: "tools/cache/reflector.go",
		Excerpt: "r.UseWatchList = ptr.To(clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient))"}
	with := func(q Quote, change func(*Quote)) Quote { change(&q); return q }
	for _, c := range []struct {
		name string
		q    Quote
		ok   bool
	}{
		{"a real line", watch, true},
		{"two real lines", with(watch, func(q *Quote) {
			q.Excerpt = "We specifically don't want to rate limit watches, so we\n  // don't use r.rateLimiter here."
		}), true},
		{"a line added in v0.31", gate, true},
		{"a word changed", with(watch, func(q *Quote) { q.Excerpt = "We specifically do want to rate limit watches" }), false},
		{"lines not next to each other", with(watch, func(q *Quote) {
			q.Excerpt = "We specifically don't want to rate limit watches, so we r.tryThrottle"
		}), false},
		{"a version without the line", with(gate, func(q *Quote) { q.Version = "v0.30.14" }), false},
		{"a file the module lacks", with(watch, func(q *Quote) { q.Path = "rest/no_such_file.go" }), false},
	} {
		err := Check(c.q, cache.Find)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case !c.ok && err == nil:
			t.Errorf("%s: accepted: %s", c.name, c.q)
		case !c.ok:
			for _, want := range []string{"x.md:1", c.q.Module + "@" + c.q.Version, c.q.Path, normalizeSpace(c.q.Excerpt)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: the error does not name %q: %v", c.name, want, err)
				}
			}
			t.Logf("%s: %v", c.name, err)
		}
	}
	k := with(watch, func(q *Quote) {
		q.Module, q.Version, q.Path = "k8s.io/kubernetes", "v1.32.13", "pkg/features/kube_features.go"
	})
	if err := Check(k, cache.Find); err == nil || !strings.Contains(err.Error(), "too large a download") {
		t.Errorf("a quote of k8s.io/kubernetes: want the too-large error, got %v", err)
	}
}

// The marker as Markdown writes it: wrapped anywhere a space is, and a near miss is an error.
func TestSourceQuotesParse(t *testing.T) {
	md := filepath.Join(t.TempDir(), "q.md")
	text := "Watches are not throttled\n(k8s.io/client-go@v0.31.14 rest/request.go: \"We specifically don't want\n" +
		"to rate limit watches\"). Then (k8s.io/apiserver@v0.32.13\npkg/features/kube_features.go: \"WatchList: {\")\n"
	if err := os.WriteFile(md, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := Quotes(md)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].Line != 2 || qs[0].Module != "k8s.io/client-go" || qs[0].Version != "v0.31.14" ||
		qs[0].Path != "rest/request.go" || normalizeSpace(qs[0].Excerpt) != "We specifically don't want to rate limit watches" ||
		qs[1].Line != 3 || qs[1].Path != "pkg/features/kube_features.go" {
		t.Fatalf("parsed %+v", qs)
	}
	if err := os.WriteFile(md, []byte("(k8s.io/client-go@v0.31.14 rest/request.go, \"We specifically\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Quotes(md); err == nil || !strings.Contains(err.Error(), "q.md:1: not a source quote") {
		t.Errorf("a malformed quote: want an error, got %v", err)
	}
	if err := os.WriteFile(md, []byte("as it says:\nk8s.io/client-go@v0.31.14 rest/request.go: \"We specifically\".\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Quotes(md); err == nil || !strings.Contains(err.Error(), "q.md:2: not a source quote") {
		t.Errorf("a quote without its parentheses: want an error, got %v", err)
	}
	if escapePath("github.com/Azure/go-autorest") != "github.com/!azure/go-autorest" {
		t.Error(escapePath("github.com/Azure/go-autorest"))
	}
}
