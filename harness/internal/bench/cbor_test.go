package bench

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"informer-lab/envtestbin"
	"informer-lab/lab/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// -cases cbor is ConfigMaps in JSON, protobuf and CBOR and Widgets in JSON and CBOR, and needs
// a server that serves CBOR: without one it is refused before anything starts, in one line that
// says what to add.
func TestParseFlagsCBOR(t *testing.T) {
	o, err := parseFlags([]string{"-cases", "cbor", "-servers", "1.37.2,1.37.2:CBORServingAndStorage=true", "-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := o.selected()
	var got []string
	for _, c := range cs {
		got = append(got, c.Name+" "+c.Kind+" "+c.Resource+" "+c.Gate)
		if c.Objects != 10000 || c.Size != 1024 || !slices.Equal(c.Runs(o.ks), []int{8}) {
			t.Errorf("%s: %d × %d at K=%v; want 10000 × 1 KiB at K=8", c.Name, c.Objects, c.Size, c.Runs(o.ks))
		}
	}
	want := []string{"configmaps-json dynamic-crd configmaps ", "configmaps-protobuf  configmaps ", "configmaps-cbor cbor configmaps " + cborGate,
		"widgets-json dynamic-crd widgets ", "widgets-cbor cbor widgets " + cborGate}
	if !slices.Equal(got, want) {
		t.Errorf("-cases cbor:\n%q\nwant\n%q", got, want)
	}
	if f := docFiles(cs); f.page != "encodings.md" || f.results != "encodings-results.json" {
		t.Errorf("-cases cbor -docs writes %s and %s; want encodings.md beside docs/bench.md", f.page, f.results)
	}
	if f := docFiles(append(cs, o.small)); f != allFiles {
		t.Errorf("-cases small,cbor -docs writes %+v; want bench.md's files", f)
	}
	if f := docFiles([]Case{o.small}); f.page != serversPage || f.plot(o.small) != "bench-small.svg" {
		t.Errorf("-cases small -docs writes %+v; want %s and bench-small.svg", f, serversPage)
	}
	// The lab: client-go v0.37.2 when the cbor cases run, since before v0.36 a CBOR LIST of more
	// than 1024 objects never decodes; an older lab only with fewer objects.
	if o.lab != cborLabModule {
		t.Errorf("-cases cbor runs lab %s; want %s", o.lab, cborLabModule)
	}
	for _, tc := range []struct{ args, lab, err string }{
		{"-cases small", labModule, ""},
		{"-cases cbor -lab client-v032 -cbor-count 1024", "client-v032", ""},
		{"-cases cbor -lab client-v035", "", "-lab client-v035 cannot decode a CBOR LIST of more than 1024 objects (apimachinery before v0.36), got -cbor-count 10000: use -lab client-v037, or -cbor-count 1024 or less"},
		{"-cases cbor -lab client-v036", "client-v036", ""},
		{"-lab client-v030", "", `-lab must be a lab module, client-v031 to client-v037, got "client-v030"`},
	} {
		o, err := parseFlags(append(strings.Fields(tc.args), "-servers", "1.37.2:CBORServingAndStorage=true", "-root", "/r"), io.Discard)
		switch {
		case tc.err == "" && (err != nil || o.lab != tc.lab):
			t.Errorf("%s: lab %s, %v; want lab %s", tc.args, o.lab, err, tc.lab)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: %v; want %q", tc.args, err, tc.err)
		}
	}
	_, err = parseFlags([]string{"-cases", "small,cbor", "-servers", "1.37.2", "-root", "/r"}, io.Discard)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "-servers 1.37.2:CBORServingAndStorage=true") {
		t.Errorf("-cases cbor without a CBOR server: %v; want one line naming the server to add", err)
	}
	for _, args := range [][]string{{"-cbor-k", "0"}, {"-cbor-kib", "0"}, {"-cbor-count", "0"}} {
		if _, err := parseFlags(append(args, "-root", "/r"), io.Discard); err == nil {
			t.Errorf("parseFlags(%v): no error", args)
		}
	}
}

// A run is only what it says it measured: a CBOR case whose informers got JSON is an error.
func TestCheckEncoding(t *testing.T) {
	cs := encodingCases(1, 1, 1)
	js, pb, cb := cs[0], cs[1], cs[2]
	for _, tc := range []struct {
		c    Case
		got  []string
		okay bool
	}{
		{cb, []string{"application/cbor", "application/cbor-seq"}, true},
		{cb, []string{"application/cbor-seq"}, true},
		{cb, []string{"application/json"}, false},
		{cb, []string{"application/cbor", "application/json"}, false},
		{cb, nil, false},
		{js, []string{"application/json"}, true},
		{js, []string{"application/cbor"}, false},
		{pb, []string{"application/vnd.kubernetes.protobuf"}, true},
		{pb, []string{"application/vnd.kubernetes.protobuf", "application/json"}, false},
		{Case{Name: "small"}, nil, true},
	} {
		if err := tc.c.checkEncoding(tc.got); (err == nil) != tc.okay {
			t.Errorf("%s with %v: %v", tc.c.Name, tc.got, err)
		}
	}
}

// make bench -cases cbor, small, against a real kube-apiserver with CBORServingAndStorage: each
// case's informers get their bodies in its encoding (protobuf from the typed factory; a CBOR LIST
// in application/cbor, a watch in application/cbor-seq), and the terminal compares them. On the
// wire, kube-apiserver 1.32 gzips a JSON or protobuf LIST and not a CBOR one of the same objects:
// it decides on the size of a response's first write (k8s.io/apiserver@v0.32.13
// responsewriters/writers.go, "len(p) > defaultGzipThresholdBytes"), and the CBOR serializer
// first writes its 3-byte self-describing tag (k8s.io/apimachinery@v0.32.13
// serializer/cbor/cbor.go, "w.Write(selfDescribedCBOR)"). 1.33 buffers a first write of up to 4
// bytes ("firstWriteStreamingThresholdBytes = 4").
func TestCBORRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("make bench measures through /proc: Linux only")
	}
	server := envtestbin.DefaultVersion + ":" + cborGate
	cborGzipped := !strings.HasPrefix(envtestbin.DefaultVersion, "1.32.")
	// Encodings, not memory: one kube-apiserver process.
	rep, stdout := runBench(t, "-servers", server, "-cases", "cbor", "-cbor-count", "300", "-cbor-k", "2", "-repeats", "1", "-overhead=false", "-settle", "5s", "-fresh=false")
	if len(rep.Results) != 10 {
		t.Fatalf("%d results, want 5 cases × 2 modes", len(rep.Results))
	}
	protobuf := "application/vnd.kubernetes.protobuf"
	for _, r := range rep.Results {
		where := r.Case + " " + string(r.Mode)
		encoding := r.Case[strings.Index(r.Case, "-")+1:]
		want := map[string][]string{"json": {"application/json"}, "protobuf": {protobuf}, "cbor": {"application/cbor", "application/cbor-seq"}}[encoding]
		if r.Mode == Streaming && encoding == "cbor" {
			want = []string{"application/cbor-seq"} // one watch, no LIST
		}
		if !slices.Equal(r.ContentTypes, want) || r.Requests < 2 || r.Bytes < 2*300*1024 {
			t.Errorf("%s: content types %v, %d requests, %d bytes; want %v and both informers' 300 objects", where, r.ContentTypes, r.Requests, r.Bytes, want)
		}
		if r.Mode != List {
			continue
		}
		// The LISTs (about 350 KB each): gzipped in JSON and protobuf, and in CBOR from 1.33 on.
		if gzipped := r.WireBytes < r.Bytes; gzipped != (encoding != "cbor" || cborGzipped) {
			t.Errorf("%s: %d bytes on the wire, %d received: gzipped %v", where, r.WireBytes, r.Bytes, gzipped)
		}
	}
	for _, table := range []string{"== ConfigMaps in application/json, application/vnd.kubernetes.protobuf, application/cbor, K=2 ==",
		"== Widgets in application/json, application/cbor, K=2 =="} {
		if !strings.Contains(stdout, table) {
			t.Errorf("the terminal has no table %q:\n%s", table, stdout)
		}
	}
}

// An encoding costs more or less than JSON only by the findings' rule: a median 1.2 times as
// high (or low), and no run of the one inside the range of the other.
func TestEncodingFindings(t *testing.T) {
	cs := encodingCases(1, 1, 1)[:3]
	var results []Result
	add := func(c Case, m Mode, peaks ...int64) {
		for i, p := range peaks {
			results = append(results, Result{Server: "1.34.4", Case: c.Name, K: 1, Mode: m, Rep: i + 1, APIPeakHWM: p << 20, APICPUMillis: 1000})
		}
	}
	add(cs[0], List, 100, 110, 120)
	add(cs[1], List, 100, 112, 125) // protobuf: the same
	add(cs[2], List, 200, 210, 220) // cbor: 1.91×, every run above
	add(cs[0], Streaming, 100, 110, 120)
	add(cs[1], Streaming, 80, 90, 121) // a median 0.82× of json's, one run inside json's range
	add(cs[2], Streaming, 50, 55, 60)  // cbor: 0.5×, every run below
	got := EncodingFindings(results, []string{"1.34.4"}, cs, 1)
	want := []string{
		"1.34.4, LIST→WATCH: cbor costs more, kube-apiserver's peak 1.91× (× json's).",
		"1.34.4, streaming: cbor costs less, kube-apiserver's peak 0.50× (× json's).",
	}
	if !slices.Equal(got, want) {
		t.Errorf("EncodingFindings:\n%q\nwant\n%q", got, want)
	}
}

// runBench runs make bench with args into a directory of the test's, fails the test unless it
// exits 0, and returns its results.json and what it printed.
func runBench(t *testing.T, args ...string) (Report, string) {
	t.Helper()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), append([]string{"-out", out}, args...), &stdout, &stderr)
	t.Logf("stderr:\n%s", stderr.String())
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "bench-*", "results.json"))
	if len(dirs) != 1 {
		t.Fatalf("results.json: %v", dirs)
	}
	raw, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, stdout.String()
}
