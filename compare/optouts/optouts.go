// Package optouts renders docs/opt-outs.md from the records of make opt-outs: per lab module,
// one attached lab run per way a user turns client-go's streaming lists off (RUN_DIR/MODULE/
// NN-MODE@AT.jsonl), and what each did on the wire: the gate client-go reported after the
// switch, each informer's initial requests, and the first request of the lab's direct List().
package optouts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"informer-lab/record"
)

// Run is one lab run: a mode of -opt-out at a moment (start, or between informer A and B).
type Run struct {
	Name       string // MODE@AT
	Gate       record.Record
	Switch     *record.Record // the SETUP opt-out record; nil if the lab never switched
	A, B       string         // each informer's initial requests, as record.Classify labels them
	AStreamed  bool
	BStreamed  bool
	Direct     string // the direct List()'s first request (record.Token)
	Overwrote  bool   // client-go logged that its gates were replaced after their first use
	Start, End time.Time
}

// Lab is one lab module's runs, in the order make opt-outs ran them.
type Lab struct {
	Name, ClientGo, Server string
	Runs                   []Run
}

var runFile = regexp.MustCompile(`^\d+-(.+)\.jsonl$`)

// Load reads dir/MODULE/NN-MODE@AT.jsonl for every module directory, in name order.
func Load(dir string) ([]Lab, error) {
	mods, err := record.Files(filepath.Join(dir, "*", "*.jsonl"), "make opt-outs")
	if err != nil {
		return nil, err
	}
	var labs []Lab
	for _, f := range mods {
		m := runFile.FindStringSubmatch(filepath.Base(f))
		if m == nil {
			return nil, fmt.Errorf("%s: not a make opt-outs record file (NN-MODE@AT.jsonl)", f)
		}
		recs, err := record.ReadFile(f)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(filepath.Dir(f))
		if len(labs) == 0 || labs[len(labs)-1].Name != name {
			labs = append(labs, Lab{Name: name})
		}
		l := &labs[len(labs)-1]
		r := Run{Name: m[1]}
		r.Start, r.End = record.Span(recs)
		for i, rec := range recs {
			if rec.Kind != record.Setup {
				continue
			}
			switch rec.Step {
			case record.StepClientGo:
				l.ClientGo = rec.Value
			case record.StepServer:
				l.Server = rec.Value
			case record.StepGate:
				r.Gate = rec
			case record.StepOptOut:
				r.Switch = &recs[i]
			case record.StepKlog:
				r.Overwrote = r.Overwrote || strings.Contains(rec.Value, "feature gates implementation has already been used")
			}
		}
		r.A, r.AStreamed = initial(recs, "A")
		r.B, r.BStreamed = initial(recs, "B")
		for _, rec := range recs {
			if rec.Kind == record.HTTP && rec.Tag == record.TagDirect {
				r.Direct = record.Token(rec)
				break
			}
		}
		if r.Switch == nil {
			return nil, fmt.Errorf("%s: no SETUP %s record: the lab stopped before it switched", f, record.StepOptOut)
		}
		l.Runs = append(l.Runs, r)
	}
	return labs, nil
}

// initial labels informer tag's requests until it synced, and says whether one of them asked
// for a streaming list.
func initial(recs []record.Record, tag string) (label string, streamed bool) {
	reqs := record.InitialRequests(recs, tag)
	for _, r := range reqs {
		streamed = streamed || strings.HasPrefix(record.Token(r), record.TokenStream)
	}
	shape, _ := record.Classify(reqs)
	return shape, streamed
}

// Effect says whether the switch turned streaming off for the informers it can reach: every
// informer when made at start, informer B when made between A and B.
func (r Run) Effect() bool {
	if strings.HasSuffix(r.Name, "@between") {
		return !r.BStreamed
	}
	return !r.AStreamed && !r.BStreamed
}

// WriteFile loads dir and writes its page to path.
func WriteFile(dir, path string) error {
	labs, err := Load(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(Render(labs)), 0o644)
}

// Render is the page.
func Render(labs []Lab) string {
	var b strings.Builder
	start, end := labs[0].Runs[0].Start, labs[0].Runs[0].End
	for _, l := range labs {
		for _, r := range l.Runs {
			if r.Start.Before(start) {
				start = r.Start
			}
			if r.End.After(end) {
				end = r.End
			}
		}
	}
	fmt.Fprintf(&b, "# informer-lab: opt-outs, checked on the wire\n\n%s · %s on %s/%s, %d cores · kube-apiserver %s · the labs ran %s\n\n",
		start.UTC().Format("2006-01-02 15:04 UTC"), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), labs[0].Server, end.Sub(start).Round(time.Second))
	b.WriteString(intro)
	b.WriteString("## What each switch did\n\n")
	b.WriteString("Each cell: client-go's `WatchListClient` gate after the switch (the lab's SETUP opt-out record), " +
		"informer A's and B's initial requests until they synced, and the first request of the lab's typed `List()`. " +
		"**no effect** marks a switch after which the informers it should reach still asked for a streaming list.\n\n")
	b.WriteString("| switch |")
	sep := "| --- |"
	for _, l := range labs {
		fmt.Fprintf(&b, " %s<br>client-go %s |", l.Name, l.ClientGo)
		sep += " --- |"
	}
	b.WriteString("\n" + sep + "\n")
	for i, r := range labs[0].Runs {
		fmt.Fprintf(&b, "| `%s` |", r.Name)
		for _, l := range labs {
			if i >= len(l.Runs) || l.Runs[i].Name != r.Name {
				b.WriteString(" (not run) |")
				continue
			}
			b.WriteString(" " + cell(l.Runs[i]) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## What each run did, in the lab's words\n\n| switch | SETUP gate record (first lab module) | SETUP opt-out record |\n| --- | --- | --- |\n")
	for _, r := range labs[0].Runs {
		fmt.Fprintf(&b, "| `%s` | %s (%s) | %s |\n", r.Name, r.Gate.Value, esc(r.Gate.Detail), esc(r.Switch.Detail))
	}
	b.WriteString(sources)
	return b.String()
}

func cell(r Run) string {
	s := fmt.Sprintf("gate %s · A %s · B %s · List() %s", r.Switch.Value, r.A, r.B, r.Direct)
	if r.Overwrote {
		s += " · client-go warned its gates were replaced after use"
	}
	if !r.Effect() {
		s = "**no effect**: " + s
	}
	return s
}

func esc(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
