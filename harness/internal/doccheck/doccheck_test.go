package doccheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"informer-lab/lab/lifecycle"

	"informer-lab/harness/internal/app"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/observe"
	"informer-lab/record"
)

const root = "../../.."

// The tests start etcd and kube-apiserver: this binary is their reaper if it is killed.
func TestMain(m *testing.M) { lifecycle.TestMain(m) }

// Every log excerpt in README.md, HOW-IT-WORKS.md and docs/guide.md must still be a line the project prints:
// this runs make compare's harness and each lab alone, for real, and looks each excerpt up
// among what they printed (normalized as compare normalizes).
func TestDocExcerptsAreReal(t *testing.T) {
	// The runs are independent (each boots its own envtest) and mostly wait on their servers
	// and labs: three at once take about the time of the longest three, not the sum; more
	// would load make check's two cores beyond what the runs' own timings tolerate.
	var (
		pool  Pool
		mu    sync.Mutex
		wg    sync.WaitGroup
		slots = make(chan struct{}, 3)
	)
	for _, r := range excerptRuns(t) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			texts, err := r()
			<-slots
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Error(err)
			}
			for _, text := range texts {
				pool.Add(text)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	checked := 0
	for _, doc := range []string{"README.md", "HOW-IT-WORKS.md", "docs/guide.md"} {
		excerpts, blocks, err := Excerpts(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		if blocks == 0 {
			t.Errorf("%s has no marked excerpt (%s before a fenced block)", doc, Marker)
		}
		for _, ex := range excerpts {
			checked++
			if ok, nearest := pool.Match(ex.Text); !ok {
				t.Errorf("%s:%d: this excerpt is no longer printed by the project:\n  excerpt: %s\n  nearest: %s", doc, ex.Line, ex.Text, nearest)
			}
		}
	}
	t.Logf("checked %d excerpt lines", checked)
}

// A run is one of the commands whose output the docs quote: what it printed, and the text of
// every record it wrote.
type run func() ([]string, error)

// excerptRuns are the runs the docs quote from.
func excerptRuns(t *testing.T) []run {
	var runs []run
	// The harness, as make compare runs it (and the variants HOW-IT-WORKS.md quotes: the server
	// refusing to stream, a kube-apiserver killed mid-run, and killed with a write to etcd while
	// it was down). The variants' excerpts quote client-v031 and client-v032 only: the other
	// labs would add time, not lines.
	two := "client-v031,client-v032"
	for _, args := range [][]string{nil, {"-labs", two, "-server-feature-gates", "WatchList=false"}, {"-labs", two, "-fault", "kill-apiserver"}, {"-labs", two, "-scenario", "restart-gap"}} {
		out := t.TempDir()
		runs = append(runs, func() ([]string, error) {
			var stdout, stderr bytes.Buffer
			if code := app.Run(context.Background(), append([]string{"-out", out}, args...), &stdout, &stderr); code != 0 {
				return nil, fmt.Errorf("harness %v: exit %d\n%s\n%s", args, code, stdout.String(), stderr.String())
			}
			return records(filepath.Join(out, "*", "*.jsonl"), stdout.String(), stderr.String())
		})
	}
	// Each lab alone, as `go run ./client-v0XX` runs it (text on stdout).
	for _, lab := range []string{"client-v031", "client-v032"} {
		runs = append(runs, func() ([]string, error) {
			bin, _, err := labproc.Build(context.Background(), filepath.Join(root, lab))
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(bin, "-interval", "200ms", "-duration", "3s")
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("%s alone: %w\n%s", lab, err, e.String())
			}
			return []string{o.String(), e.String()}, nil
		})
	}
	// make observe, of kubectl get -w and of a lab with its gate on (HOW-IT-WORKS.md, "Any
	// client, seen from outside"), for make observe's default 20 s: under make test's load, kubectl has
	// taken more than 6 s to get past discovery to its LIST.
	for _, cmd := range [][]string{{"kubectl", "get", "configmaps", "-w"}, {"LAB", "-kubeconfig", observe.KubeconfigArg, "-watch-list", "on"}} {
		out := t.TempDir()
		runs = append(runs, func() ([]string, error) {
			if cmd[0] == "LAB" {
				lab, _, err := labproc.Build(context.Background(), filepath.Join(root, "client-v031"))
				if err != nil {
					return nil, err
				}
				cmd = append([]string{lab}, cmd[1:]...)
			}
			var stdout, stderr bytes.Buffer
			if code := observe.Run(context.Background(), append([]string{"-out", out, "-for", "20s", "-interval", "300ms", "--"}, cmd...), &stdout, &stderr); code != 0 {
				return nil, fmt.Errorf("observe %v: exit %d\n%s\n%s", cmd, code, stdout.String(), stderr.String())
			}
			return records(filepath.Join(out, "*", observe.LogFile), stdout.String(), stderr.String())
		})
	}
	return runs
}

// records is texts and the text line of every record of the logs that glob matches.
func records(glob string, texts ...string) ([]string, error) {
	logs, _ := filepath.Glob(glob)
	for _, l := range logs {
		recs, err := record.ReadFile(l)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			texts = append(texts, r.Text())
		}
	}
	return texts, nil
}

func TestExcerptsFindsMarkedBlocksOnly(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "doc.md")
	os.WriteFile(doc, []byte("text\n"+Marker+"\n```\nline one\n\nline two\n```\n```\nunmarked\n```\n"+Marker+"\nprose breaks the mark\n```\nnot an excerpt\n```\n"), 0o644)
	ex, blocks, err := Excerpts(doc)
	if err != nil {
		t.Fatal(err)
	}
	if blocks != 1 || len(ex) != 2 || ex[0].Text != "line one" || ex[1].Line != 6 {
		t.Errorf("got %d blocks, %+v; want 1 block with lines 4 and 6", blocks, ex)
	}
}
