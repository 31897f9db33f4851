package proxy

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"informer-lab/envtestbin"
	labrecord "informer-lab/record"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Two kube-apiservers on one etcd behind the balancer (what upgrade=VERSION runs): requests go
// to each in turn and say which one answered; a write made on the first reaches a watch served
// by either, with the same resourceVersion; the control plane's Stop stops the second one too.
// Both are the default version here (the grid's upgrade columns run two versions): the test is
// of the balancing, not of a version.
func TestBalancerAlternatesAndNamesTheServer(t *testing.T) {
	cp, admin, ns := ownServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	peer, err := cp.StartPeer(ctx, envtestbin.DefaultVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	if peer.Config.Host == cp.Config.Host {
		t.Fatalf("the second server listens where the first does: %s", peer.Config.Host)
	}
	p, _ := startProxy(t, cp, Options{Servers: []Server{{Name: "first", Host: cp.Config.Host}, {Name: "second", Host: peer.Config.Host}}})
	cfg := proxyConfig(t, p)
	var answered []string
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				answered = append(answered, resp.Header.Get(labrecord.ServerHeader))
			}
			return resp, err
		})
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"first", "second", "first", "second"}; !slices.Equal(answered, want) {
		t.Errorf("servers that answered 4 LISTs in a row: %q, want %q", answered, want)
	}

	// One watch on each server (the next two requests), one write on the first: both deliver it.
	var watches []watch.Interface
	for range 2 {
		w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watches = append(watches, w)
	}
	if got := answered[len(answered)-2:]; !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("the two watches were answered by %q, want one by each", got)
	}
	cm := createCM(t, ctx, admin, ns, "balanced")
	for i, w := range watches {
		select {
		case ev := <-w.ResultChan():
			if got := ev.Object.(metav1.Object).GetResourceVersion(); ev.Type != watch.Added || got != cm.ResourceVersion {
				t.Errorf("watch %d (server %s): %s rv=%s, want ADDED rv=%s", i, answered[4+i], ev.Type, got, cm.ResourceVersion)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("watch %d (server %s): no event 30s after the write", i, answered[4+i])
		}
	}

	// The watches end first: kube-apiserver stopped with a watch open waits for it (30 s).
	for _, w := range watches {
		w.Stop()
	}
	cp.Stop()
	if peer.Alive() {
		t.Errorf("the second kube-apiserver outlived the control plane's Stop")
	}
}
