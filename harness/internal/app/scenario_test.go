package app

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"informer-lab/harness/internal/proxy"
	"informer-lab/record"
)

// Every scenario of the record's table has the harness's implementation, its doc is the table's,
// and its labs get -direct-list when the table says they make their direct List(); the harness
// implements no scenario the table does not have.
func TestEveryScenarioImplemented(t *testing.T) {
	for _, want := range record.ScenarioTable {
		sc, err := lookup(want.Name)
		if err != nil || sc.run == nil || sc.Doc != want.Doc || sc.fault != nil {
			t.Errorf("%s: %+v, %v", want.Name, sc, err)
			continue
		}
		if got := slices.Contains(sc.labArgs(), "-direct-list"); got != want.DirectList {
			t.Errorf("%s: lab flags %q, DirectList %v", want.Name, sc.labArgs(), want.DirectList)
		}
	}
	for name := range impls {
		if !slices.Contains(record.Scenarios, name) {
			t.Errorf("the harness implements %s, which is not in record.ScenarioTable", name)
		}
	}
	if got := strings.Join(Proxied(), " "); got != record.ScenarioReconnect+" "+record.ScenarioExpired {
		t.Errorf("Proxied() = %s", got)
	}
}

// A fault scenario is the proxy playing the fault: its doc is the fault's, and the labs make
// their direct List() as they start.
func TestFaultScenario(t *testing.T) {
	for _, fi := range proxy.Faults() {
		sc, err := lookup(record.ScenarioFaultPrefix + fi.Name)
		if err != nil || !sc.proxy || sc.fault == nil || sc.fault.Name != fi.Name || sc.Doc != fi.Doc || sc.Check != record.CheckFault {
			t.Errorf("%s: %+v, %v", fi.Name, sc, err)
			continue
		}
		if got := strings.Join(sc.labArgs(), " "); got != "-direct-list -direct-list-at start" {
			t.Errorf("%s: lab flags %q", fi.Name, got)
		}
	}
}

// Every injected fault is one entry of Injections: a name, a doc and what it does, found by
// name; those that kill a process of the server are refused on a cluster.
func TestInjections(t *testing.T) {
	names := injectionNames()
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("Injections: %q, want sorted and each once (-fault's usage lists them so)", names)
	}
	for _, f := range Injections {
		got, err := injectionOf(f.Name)
		if err != nil || got.Name != f.Name || len(f.Doc) < 40 || f.do == nil {
			t.Errorf("%s: %+v, %v", f.Name, got, err)
		}
		onACluster := Spec{Kubeconfig: "kubeconfig", Scenario: record.ScenarioSteady, Kind: record.KindTypedConfigMaps}
		if err := onCluster(onACluster, &f); (err != nil) != f.ServerProcesses {
			t.Errorf("%s on a cluster: %v, ServerProcesses %v", f.Name, err, f.ServerProcesses)
		}
	}
	for _, f := range []Injection{KillAPIServer, KillAPIServerGap} {
		if !f.Rewatch || !f.ServerProcesses {
			t.Errorf("%s: the restart scenarios' fault must bring kube-apiserver back (Rewatch) and needs its processes", f.Name)
		}
	}
}

func TestBadFault(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-fault", "nope"}, `unknown -fault "nope": the faults are crash-lab, hang-lab, kill-apiserver, kill-apiserver-gap, kill-etcd`},
		{[]string{"-fault", KillAPIServer.Name, "-scenario", record.ScenarioStartup}, "-fault goes with -scenario steady (the other scenarios have their own events), got -scenario startup"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"-out", t.TempDir()}, tc.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}
