package doccheck

import (
	"bytes"
	"context"
	"informer-lab/lab/lifecycle"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"informer-lab/harness/internal/app"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/observe"
	"informer-lab/record"
)

const root = "../../.."

// The tests start etcd and kube-apiserver: this binary is their reaper if it is killed.
func TestMain(m *testing.M) { lifecycle.TestMain(m) }

// Every log excerpt in README.md and HOW-IT-WORKS.md must still be a line the project prints:
// this runs make compare's harness and each lab alone, for real, and looks each excerpt up
// among what they printed (normalized as compare normalizes).
func TestDocExcerptsAreReal(t *testing.T) {
	var pool Pool

	// The harness, as make compare runs it (and the variants HOW-IT-WORKS.md quotes: the server
	// refusing to stream, a kube-apiserver killed mid-run, and killed with a write to etcd while it
	// was down): its report, its status
	// lines, every record's text.
	// The variants' excerpts quote client-v031 and client-v032 only: the other labs would add time, not lines.
	two := "client-v031,client-v032"
	for _, args := range [][]string{nil, {"-labs", two, "-server-feature-gates", "WatchList=false"}, {"-labs", two, "-fault", "kill-apiserver"}, {"-labs", two, "-scenario", "restart-gap"}} {
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		if code := app.Run(context.Background(), append([]string{"-out", out}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("harness %v: exit %d\n%s\n%s", args, code, stdout.String(), stderr.String())
		}
		pool.Add(stdout.String())
		pool.Add(stderr.String())
		addRecords(t, &pool, filepath.Join(out, "*", "*.jsonl"))
	}

	// Each lab alone, as `go run ./client-v0XX` runs it (text on stdout).
	for _, lab := range []string{"client-v031", "client-v032"} {
		bin, _, err := labproc.Build(context.Background(), filepath.Join(root, lab))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-interval", "200ms", "-duration", "3s")
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s alone: %v\n%s", lab, err, e.String())
		}
		pool.Add(o.String())
		pool.Add(e.String())
	}

	// make observe, of kubectl get -w and of a lab with its gate on (HOW-IT-WORKS.md, "Any
	// client, seen from outside"): what it printed and the text of every record it recorded.
	lab, _, err := labproc.Build(context.Background(), filepath.Join(root, "client-v031"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"kubectl", "get", "configmaps", "-w"}, {lab, "-kubeconfig", observe.KubeconfigArg, "-watch-list", "on"}} {
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		if code := observe.Run(context.Background(), append([]string{"-out", out, "-for", "6s", "-interval", "300ms", "--"}, cmd...), &stdout, &stderr); code != 0 {
			t.Fatalf("observe %v: exit %d\n%s\n%s", cmd, code, stdout.String(), stderr.String())
		}
		pool.Add(stdout.String())
		pool.Add(stderr.String())
		addRecords(t, &pool, filepath.Join(out, "*", observe.LogFile))
	}

	checked := 0
	for _, doc := range []string{"README.md", "HOW-IT-WORKS.md"} {
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

// addRecords adds the text line of every record of the logs that glob matches.
func addRecords(t *testing.T, pool *Pool, glob string) {
	t.Helper()
	logs, _ := filepath.Glob(glob)
	for _, l := range logs {
		recs, err := record.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			pool.Add(r.Text())
		}
	}
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
