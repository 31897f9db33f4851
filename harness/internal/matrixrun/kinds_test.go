package matrixrun

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"informer-lab/compare/matrix"
	"informer-lab/envtestbin"
	"informer-lab/harness/internal/app"
	"informer-lab/record"
)

// KINDS: the kinds asked for, in order, once each; "all" (or "kinds") for every kind; none,
// or typed-configmaps alone, is the grid without a kind axis.
func TestKindsAxis(t *testing.T) {
	root := t.TempDir()
	for _, m := range []string{"client-v031", "client-v037"} {
		os.MkdirAll(filepath.Join(root, m), 0o755)
		os.WriteFile(filepath.Join(root, m, "go.mod"), []byte("module x\n"), 0o644)
	}
	// "all" is every kind but the aggregated one, which needs a server of its own.
	plain := slices.DeleteFunc(slices.Clone(record.Kinds), func(k string) bool { return k == record.KindAggregated })
	for _, tc := range []struct {
		kinds string
		want  []string
		axis  bool
	}{
		{"", []string{record.KindTypedConfigMaps}, false},
		{"typed-configmaps", []string{record.KindTypedConfigMaps}, false},
		{"cbor, dynamic-crd,cbor", []string{record.KindCBOR, record.KindDynamicCRD}, true},
		{"all", plain, true},
		{"kinds", plain, true},
		{"metadata,all", append([]string{record.KindMetadata}, slices.DeleteFunc(slices.Clone(plain), func(k string) bool { return k == record.KindMetadata })...), true},
		{"all,aggregated", record.Kinds, true},
	} {
		g, err := options{root: root, kinds: tc.kinds}.grid()
		if err != nil || !slices.Equal(g.kinds, tc.want) || g.kindAxis() != tc.axis {
			t.Errorf("--kinds %q: kinds %v (axis %v), %v; want %v (axis %v)", tc.kinds, g.kinds, g.kindAxis(), err, tc.want, tc.axis)
		}
	}
}

// KINDS=all alone, or with docs/kinds.md's server and scenarios, writes docs/kinds.md; any other
// grid with a kind axis does not (unless -docs), nor does it write docs/matrix.md.
func TestKindsDocs(t *testing.T) {
	for _, tc := range []struct {
		args               []string
		docs               bool
		servers, scenarios string
		command            string
	}{
		{[]string{"--kinds", "all"}, true, KindsDocsServers, KindsDocsScenarios, "make matrix KINDS=all"},
		{[]string{"--kinds", "all", "--servers", "1.32.13,1.37.2", "--scenarios", "startup,steady"}, true, "1.32.13,1.37.2", "startup,steady", "make matrix KINDS=all SERVERS=1.32.13,1.37.2 SCENARIOS=startup,steady"},
		{[]string{"--kinds", "all", "--servers", "1.37.2"}, false, "1.37.2", "", "make matrix KINDS=all SERVERS=1.37.2"},
		{[]string{"--kinds", "all", "--servers", "1.32.13"}, false, "1.32.13", "", "make matrix KINDS=all SERVERS=1.32.13"},
		{[]string{"--kinds", "cbor"}, false, "", "", "make matrix KINDS=cbor"},
		{[]string{"--kinds", "cbor", "--docs", "--sync-wait", "10s"}, true, "", "", `make matrix KINDS=cbor ARGS="-docs=true -sync-wait 10s"`},
		{nil, true, "", "", "make matrix"}, // the full grid, docs/matrix.md, as before
		// SERVERS=variants alone is docs/servers.md; a part of it is the run's own.
		{[]string{"--servers", "variants"}, true, VariantsDocsServers, "", "make matrix SERVERS=variants"},
		{[]string{"--servers", "variants", "--clients", "client-v031"}, false, VariantsDocsServers, "", "make matrix CLIENTS=client-v031 SERVERS=variants"},
		// A grid with the user's cluster is never docs/, and has no envtest server unless asked.
		{[]string{"--kubeconfig", "/k"}, false, "", "", "make matrix KUBECONFIG=/k"},
		{[]string{"--kinds", "all", "--kubeconfig", "/k", "--context", "c"}, false, "", "", "make matrix KINDS=all KUBECONFIG=/k CONTEXT=c"},
	} {
		o, err := parseFlags(append([]string{"--out", t.TempDir()}, tc.args...), &bytes.Buffer{})
		if err != nil || o.docs != tc.docs || o.servers != tc.servers || o.scenarios != tc.scenarios || o.command != tc.command {
			t.Errorf("%v: docs %v servers %q scenarios %q command %q, %v; want %v %q %q %q", tc.args, o.docs, o.servers, o.scenarios, o.command, err, tc.docs, tc.servers, tc.scenarios, tc.command)
		}
	}
}

// A cell a kind cannot run with is not started, and says why (record.KindNotApplicable); the
// rows keep the order asked for, even when the first run had none of a row's cells.
func TestNotApplicable(t *testing.T) {
	cells := []app.Cell{
		{Name: "client-v031-off", Module: "client-v031", ClientGo: "v0.31.14", WatchList: "off"},
		{Name: "client-v032-on", Module: "client-v032", ClientGo: "v0.32.13", WatchList: "on"},
		{Name: "client-v037-on", Module: "client-v037", ClientGo: "v0.37.2", WatchList: "on"},
	}
	names := func(cs []app.Cell) (out []string) {
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	all := func(why string) map[string]string {
		return map[string]string{"client-v031-off": why, "client-v032-on": why, "client-v037-on": why}
	}
	for _, tc := range []struct {
		scenario, kind, server string
		run                    []string
		na                     map[string]string
	}{
		{"", "", "1.31.14", []string{"client-v031-off", "client-v032-on", "client-v037-on"}, map[string]string{}},
		{"", record.KindCustomListWatch, "1.31.14", []string{"client-v031-off", "client-v032-on", "client-v037-on"}, map[string]string{}},
		{"", record.KindCBOR, "1.32.13", []string{"client-v032-on", "client-v037-on"}, map[string]string{"client-v031-off": "n/a: client-go v0.31 has no ClientsAllowCBOR gate (from v0.32)"}},
		{"", record.KindCBOR, "1.31.14", nil, map[string]string{
			"client-v031-off": "n/a: client-go v0.31 has no ClientsAllowCBOR gate (from v0.32)",
			"client-v032-on":  "n/a: kube-apiserver 1.31 has no CBORServingAndStorage gate (from 1.32)",
			"client-v037-on":  "n/a: kube-apiserver 1.31 has no CBORServingAndStorage gate (from 1.32)",
		}},
		// The user's cluster (a column with a namespace): what needs the server's processes, or
		// anything outside the namespace, is n/a for every cell.
		{record.ScenarioStartup, "", "cluster", []string{"client-v031-off", "client-v032-on", "client-v037-on"}, map[string]string{}},
		{record.ScenarioRestart, "", "cluster", nil, all(record.NotApplicableServerProcesses)},
		{record.ScenarioExpired, record.KindSelector, "cluster", nil, all(record.NotApplicableServerProcesses)},
		{record.ScenarioSteady, record.KindDynamicCRD, "cluster", nil, all("n/a: needs a CustomResourceDefinition (cluster-scoped)")},
		{record.ScenarioStartup, record.KindCBOR, "cluster", []string{}, map[string]string{
			"client-v031-off": "n/a: client-go v0.31 has no ClientsAllowCBOR gate (from v0.32)",
			"client-v032-on":  "n/a: needs a CustomResourceDefinition (cluster-scoped) and kube-apiserver started with CBORServingAndStorage=true",
			"client-v037-on":  "n/a: needs a CustomResourceDefinition (cluster-scoped) and kube-apiserver started with CBORServingAndStorage=true",
		}},
	} {
		col := column{Server: matrix.Server{Version: "v" + tc.server}}
		if tc.server == "cluster" {
			col = column{Server: matrix.Server{Version: "v1.32.13"}, namespace: "informer-lab-abcde"}
		}
		run, na := applicable(tc.scenario, tc.kind, cells, col)
		if !slices.Equal(names(run), tc.run) || len(na) != len(tc.na) {
			t.Errorf("%s %s on %s: run %v, n/a %v; want %v, %v", tc.scenario, tc.kind, tc.server, names(run), na, tc.run, tc.na)
		}
		for c, why := range tc.na {
			if na[c] != why {
				t.Errorf("%s on %s: %s n/a %q, want %q", tc.kind, tc.server, c, na[c], why)
			}
		}
	}

	res := matrix.New(time.Now())
	res.Clients = []matrix.Client{{Name: "client-v037-on", Module: "client-v037", ClientGo: "v0.37.2", Gate: "on", Default: true}, {Name: "client-v032-on", Module: "client-v032"}}
	orderClients(res, cells)
	var got []string
	for _, c := range res.Clients {
		got = append(got, c.Name+" "+c.Gate)
	}
	if strings.Join(got, ", ") != "client-v031-off off, client-v032-on , client-v037-on on" || !res.Clients[2].Default {
		t.Errorf("rows %q (%+v), want every cell in the order asked, known rows kept as they were", got, res.Clients)
	}
}

// The reduced kind grid, for real: the default server, startup, three kinds beside the typed
// one, on client cells that show the differences (the gate off; on before v0.35; on by
// default). dynamic-crd and metadata sync everywhere, as the typed informers do: LIST→WATCH
// with the gate off, one streaming request with it on (1.32.13 streams). custom-listwatch's
// WatchFunc drops sendInitialEvents: with the gate on the reflector's streaming list goes out
// as one plain WATCH whose end bookmark never comes, not synced when the wait is up, whatever
// the client-go; with the gate off it lists and watches.
func TestReducedKindsGrid(t *testing.T) {
	start := time.Now()
	kinds := []string{record.KindDynamicCRD, record.KindMetadata, record.KindCustomListWatch}
	res, dirs := runGrid(t, "-servers", "1.32.13", "-scenarios", "startup", "-kinds", strings.Join(kinds, ","),
		"-clients", "client-v031-off,client-v034-on,client-v035-on", "-sync-wait", "6s")
	t.Logf("the reduced kind grid took %s", time.Since(start).Round(time.Second))
	md, err := os.ReadFile(filepath.Join(dirs[0], "matrix.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Kinds, kinds) || len(res.Clients) != 3 || len(res.Cells) != 3*len(kinds) {
		t.Fatalf("want 3 clients x %d kinds, got kinds %v, %d clients, %d cells", len(kinds), res.Kinds, len(res.Clients), len(res.Cells))
	}
	for _, s := range []string{"\n## startup · 1.32.13\n", "| client | dynamic-crd | metadata | custom-listwatch |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("matrix.md lacks %q", s)
		}
	}
	for _, c := range res.Cells {
		where := c.Kind + " / " + c.Client
		gateOn := strings.HasSuffix(c.Client, "-on")
		want, synced := "synced: LIST→WATCH (2 req)", true
		switch {
		case gateOn && c.Kind == record.KindCustomListWatch:
			want, synced = "not synced after 6s: WATCH (1 req)", false
		case gateOn:
			want = "synced: STREAM (1 req)"
		}
		if c.Verdict != want || c.Synced != synced || c.Agrees != synced || c.Server != "1.32.13" {
			t.Errorf("%s: verdict %q (synced %v, agrees with the gates %v, server %q), want %q (synced %v)", where, c.Verdict, c.Synced, c.Agrees, c.Server, want, synced)
		}
		// An informer that does not sync is the finding, not lost data nor a failed run.
		if c.Lost != "" || c.Failed != "" || len(c.Problems) > 0 || c.NotApplicable {
			t.Errorf("%s: lost %q, failed %q, problems %v, n/a %v", where, c.Lost, c.Failed, c.Problems, c.NotApplicable)
		}
		if !strings.Contains(string(md), "["+c.Verdict+"]("+c.Log+")") {
			t.Errorf("%s: matrix.md does not link %q to %s", where, c.Verdict, c.Log)
		}
		log, err := os.ReadFile(filepath.Join(dirs[0], c.Log))
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		path := "/api/v1/configmaps?"
		if c.Kind == record.KindDynamicCRD {
			path = "/apis/" + record.CRDGroup + "/" + record.CRDVersion + "/" + record.CRDResource + "?"
		}
		objects := "\n[LIST][A] rv=<RV0> items=" // the LIST, decoded
		if gateOn {
			objects = "\n[WATCH-EVENT][A] ADDED default/seed-cm-1 rv=" // the stream's events, decoded
		}
		for _, s := range []string{"\ninformer kind: " + c.Kind + "\n", "\n[SETUP] kind " + c.Kind, "[HTTP][A] GET " + path, " (accept ", objects, " default/seed-cm-1 "} {
			if !strings.Contains(string(log), s) {
				t.Errorf("%s: the cell log lacks %q", where, s)
			}
		}
	}
}

// Columns with a real aggregated apiserver: the aggregated kind's informers watch
// sample-apiserver's flunders through kube-apiserver's aggregator. v0.33's refuses a streaming
// list with 422 and client-go falls back (carvel-dev/kapp-controller#1845); v0.34's streams. On a
// server without one, the kind cannot run.
func TestAggregatedColumns(t *testing.T) {
	old, current := envtestbin.SampleAPIServers[0], envtestbin.SampleAPIServers[len(envtestbin.SampleAPIServers)-1]
	servers := []string{envtestbin.DefaultVersion + ":aggregated=" + old, envtestbin.DefaultVersion + ":aggregated=" + current, envtestbin.DefaultVersion}
	res, dirs := runGrid(t, "-servers", strings.Join(servers, ","), "-scenarios", "startup,steady", "-kinds", record.KindAggregated,
		"-clients", "client-v031-off,client-v037-on")
	if len(res.Cells) != 2*3*2 {
		t.Fatalf("want 2 scenarios x 3 servers x 2 clients, got %d cells", len(res.Cells))
	}
	for _, c := range res.Cells {
		where := c.Scenario + " / " + c.Server + " / " + c.Client
		if c.Server == envtestbin.DefaultVersion {
			if !c.NotApplicable || !strings.Contains(c.Verdict, "needs an aggregated apiserver") {
				t.Errorf("%s: verdict %q (n/a %v), want n/a: needs an aggregated apiserver", where, c.Verdict, c.NotApplicable)
			}
			continue
		}
		want := "LIST→WATCH (2 req)"
		switch {
		case c.Scenario == record.ScenarioSteady:
			want = "8/8 writes, same rvs" // the harness's writes to flunders, delivered through the aggregator
		case strings.HasSuffix(c.Client, "-on"):
			want = map[bool]string{true: record.ShapeFallback, false: "STREAM (1 req)"}[strings.HasSuffix(c.Server, "aggregated="+old)]
		}
		if !strings.HasPrefix(strings.TrimPrefix(c.Verdict, "synced: "), want) || !c.Synced || !c.Agrees || c.Lost != "" || c.Failed != "" || len(c.Problems) > 0 {
			t.Errorf("%s: verdict %q (synced %v, agrees %v, lost %q, failed %q, problems %v), want %s", where, c.Verdict, c.Synced, c.Agrees, c.Lost, c.Failed, c.Problems, want)
		}
		log, err := os.ReadFile(filepath.Join(dirs[0], c.Log))
		if err != nil {
			t.Fatal(err)
		}
		path := "[HTTP][A] GET /apis/" + record.AggregatedGroup + "/" + record.AggregatedVersion + "/" + record.AggregatedResource + "?"
		if !strings.Contains(string(log), path) {
			t.Errorf("%s: the cell log lacks %q", where, path)
		}
	}
}

// A column with an upgrade in progress: kube-apiserver 1.32.13 (WatchList on by default) and
// 1.33.13 (off; envtestbin.UpgradeVersion) on one etcd behind the harness's round-robin balancer. Each informer expects
// what the server its first request met implies (a stream, or a 422 and the fallback), every
// informer syncs and agrees, every write is delivered whichever server serves the watch, and the
// cell logs say which server answered each request: both do. When the first server is
// restarted, a watch the second one serves is kept, and every other watch comes back.
func TestUpgradeColumn(t *testing.T) {
	const first, second = envtestbin.DefaultVersion, envtestbin.UpgradeVersion
	res, dirs := runGrid(t, "-servers", first+":"+record.SettingUpgrade+"="+second, "-scenarios", "startup,steady,restart",
		"-clients", "client-v031-off,client-v037-on")
	if len(res.Cells) != 3*2 {
		t.Fatalf("want 3 scenarios x 2 clients, got %d cells", len(res.Cells))
	}
	answered := map[string]bool{}
	for _, c := range res.Cells {
		where := c.Scenario + " / " + c.Server + " / " + c.Client
		if !c.Agrees || c.Lost != "" || c.Failed != "" || len(c.Problems) > 0 {
			t.Errorf("%s: verdict %q, expected %q (agrees %v, lost %q, failed %q, problems %v)", where, c.Verdict, c.Expected, c.Agrees, c.Lost, c.Failed, c.Problems)
		}
		if c.Scenario == record.ScenarioSteady && !strings.HasPrefix(c.Verdict, "8/8 writes, same rvs") {
			t.Errorf("%s: verdict %q, want every write delivered with its rv", where, c.Verdict)
		}
		if c.Scenario == record.ScenarioRestart && strings.Contains(c.Verdict, "not back in sync") {
			t.Errorf("%s: verdict %q, want every informer back in sync or its watch kept", where, c.Verdict)
		}
		log, err := os.ReadFile(filepath.Join(dirs[0], c.Log))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(log), "\n") {
			if strings.HasPrefix(line, "[HTTP][") {
				_, from, ok := strings.Cut(line, " from ")
				if !ok {
					t.Errorf("%s: a request that does not say which server answered it: %s", where, line)
					continue
				}
				answered[strings.Fields(from)[0]] = true
			}
		}
	}
	if !answered[first] || !answered[second] {
		t.Errorf("servers that answered the labs' requests: %v, want both %s and %s", answered, first, second)
	}
}
