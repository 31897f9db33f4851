package cluster

import (
	"maps"
	"testing"
)

// The gates are read from kube-apiserver's kubernetes_feature_enabled series, whatever the order
// of their labels; other series, and other metrics with "name" labels, are not gates.
func TestGatesFromMetrics(t *testing.T) {
	body := []byte(`# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="WatchList",stage="BETA"} 1
kubernetes_feature_enabled{stage="BETA",name="WatchListCompression"} 0
kubernetes_feature_enabled{name="AllAlpha",stage="ALPHA"} 0
apiserver_storage_objects{name="WatchList"} 5
`)
	want := map[string]bool{"WatchList": true, "WatchListCompression": false, "AllAlpha": false}
	if got := GatesFromMetrics(body); !maps.Equal(got, want) {
		t.Errorf("GatesFromMetrics = %v, want %v", got, want)
	}
}
