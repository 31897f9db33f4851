package aggregated

import (
	"context"
	"testing"

	"informer-lab/envtestbin"
	"informer-lab/lab/labtest"
	"informer-lab/lab/mutator"
	"informer-lab/record"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// A sample-apiserver registered with envtest's kube-apiserver serves flunders through the
// aggregator, to kube-apiserver's own credentials; once stopped, its APIService is gone.
func TestRegistered(t *testing.T) {
	ctx := context.Background()
	version := envtestbin.SampleAPIServers[len(envtestbin.SampleAPIServers)-1]
	bin, err := envtestbin.SampleAPIServer(ctx, envtestbin.Options{NoBuild: true}, version)
	if err != nil {
		t.Fatalf("%v (make sample-apiservers)", err)
	}
	cp := labtest.StartServer(t, ctx, envtestbin.DefaultVersion)
	s, err := Start(ctx, cp, bin, "test", record.AggregatedVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	f := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mutator.Flunders.GroupVersion().String(), "kind": "Flunder", "metadata": map[string]any{"name": "one"}}}
	if _, err := dyn.Resource(mutator.Flunders).Namespace("default").Create(ctx, f, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a flunder through kube-apiserver: %v", err)
	}
	l, err := dyn.Resource(mutator.Flunders).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != "one" {
		t.Fatalf("list flunders through kube-apiserver: %v, %d items", err, len(l.Items))
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := dyn.Resource(APIServices).Get(ctx, GroupVersions[0]+"."+Group, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("want the APIService gone after Stop, got %v", err)
	}
}
