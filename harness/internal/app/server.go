package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/lab/controlplane"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// target is the server a run uses: envtest (cp set) or the user's cluster.
type target struct {
	cfg        *rest.Config
	kubeconfig string // for the labs
	namespace  string // where the writer writes
	version    string // what its /version says
	cp         *controlplane.ControlPlane
	stop       func() // idempotent
}

// server starts envtest, or connects to the user's cluster.
func server(ctx context.Context, o Spec, tmp string, out *record.Writer, say func(string, ...any)) (*target, error) {
	if o.Kubeconfig != "" {
		return cluster(ctx, o, out, say)
	}
	// Only the default version is built on demand; another one is a deliberate choice that
	// takes minutes to build, so it must be provisioned first.
	if o.ServerVersion != "" && o.ServerVersion != envtestbin.DefaultVersion {
		if _, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: o.ServerVersion, NoBuild: true}); err != nil {
			return nil, usageError{fmt.Errorf("kube-apiserver %s is not provisioned: run `make envtest K8S_VERSION=%s` first (%v)", o.ServerVersion, o.ServerVersion, err)}
		}
	}
	start := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: o.ServerVersion, FeatureGates: o.ServerGates, Progress: stderrWriter{say}})
	if err != nil {
		return nil, err
	}
	say("envtest control plane %s up in %s", cp.ServerVersion, time.Since(start).Round(time.Millisecond))
	out.Setup("", record.StepServer, cp.ServerVersion, o.ServerGates)
	kc, err := cp.AdminKubeconfig("informer-lab")
	if err != nil {
		cp.Stop()
		return nil, err
	}
	// Credentials: readable by the owner only, outside the run directory, gone at the end.
	path := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		cp.Stop()
		return nil, err
	}
	return &target{cfg: cp.Config, kubeconfig: path, namespace: "default", version: cp.ServerVersion, cp: cp, stop: func() { cp.Stop(); os.Remove(path) }}, nil
}

// cluster attaches to the user's cluster and confines the run to a namespace of its own.
func cluster(ctx context.Context, o Spec, out *record.Writer, say func(string, ...any)) (*target, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return nil, usageError{fmt.Errorf("kubeconfig %s does not load: %s", o.Kubeconfig, oneLine(err))}
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return nil, usageError{fmt.Errorf("kubeconfig %s: %s", o.Kubeconfig, oneLine(err))}
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, usageError{fmt.Errorf("the cluster of kubeconfig %s does not answer at %s: %s", o.Kubeconfig, cfg.Host, oneLine(err))}
	}
	ns := "informer-lab-" + rand.String(5)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"app": "informer-lab"}}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", ns, err)
	}
	say("attached to %s (%s); working only in namespace %s", cfg.Host, v.GitVersion, ns)
	out.Setup("", record.StepServer, v.GitVersion, "cluster")
	stop := func() {
		if cs == nil {
			return
		}
		// Remove what this run created, then its namespace: a cluster without a namespace
		// controller (or a slow one) would otherwise keep the ConfigMaps.
		c := context.Background()
		cs.CoreV1().ConfigMaps(ns).DeleteCollection(c, metav1.DeleteOptions{}, metav1.ListOptions{})
		cs.CoreV1().Namespaces().Delete(c, ns, metav1.DeleteOptions{})
		say("deleted namespace %s and its ConfigMaps", ns)
		cs = nil
	}
	return &target{cfg: cfg, kubeconfig: o.Kubeconfig, namespace: ns, version: v.GitVersion, stop: stop}, nil
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

type stderrWriter struct{ say func(string, ...any) }

func (w stderrWriter) Write(p []byte) (int, error) {
	w.say("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
