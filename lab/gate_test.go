package lab

import (
	"os"
	"testing"

	"k8s.io/client-go/features"
)

// The SETUP gate detail says who set the gate and, when the lab set it, what client-go's own
// default was: a reader of the records can tell whether the cell runs the default.
func TestSetWatchListGateRecordsTheDefault(t *testing.T) {
	if v, ok := os.LookupEnv("KUBE_FEATURE_WatchListClient"); ok {
		t.Skipf("KUBE_FEATURE_WatchListClient=%s is set: client-go's default is not what this test reads", v)
	}
	// Nothing has set the gate in this process yet: Enabled is client-go's default.
	def := GateOff
	if features.FeatureGates().Enabled(features.WatchListClient) {
		def = GateOn
	}
	if state, how, err := setWatchListGate(GateDefault); err != nil || state != def || how != "client-go default" {
		t.Errorf("default: got %q, %q, %v; want %q, %q", state, how, err, def, "client-go default")
	}
	want := "set by this lab (-watch-list=on; client-go default " + def + ")"
	if state, how, err := setWatchListGate(GateOn); err != nil || state != GateOn || how != want {
		t.Errorf("on: got %q, %q, %v; want %q, %q", state, how, err, GateOn, want)
	}
	if _, _, err := setWatchListGate("maybe"); err == nil {
		t.Error("-watch-list=maybe: want a usage error")
	}
}
