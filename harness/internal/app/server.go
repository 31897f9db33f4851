package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/cluster"
	"informer-lab/lab/controlplane"
	"informer-lab/record"

	"k8s.io/client-go/rest"
)

// target is the server a run uses: envtest (cp set) or the user's cluster.
type target struct {
	cfg        *rest.Config
	kubeconfig string            // for the labs
	namespace  string            // where the writer writes
	labels     map[string]string // on every object the harness creates (a cluster: the run's label)
	version    string            // what its /version says
	cp         *controlplane.ControlPlane
	stop       func() // idempotent
}

// server starts envtest, or connects to the user's cluster.
func server(ctx context.Context, o Spec, tmp string, out *record.Writer, say func(string, ...any)) (*target, error) {
	if o.Kubeconfig != "" {
		return attach(ctx, o, out, say)
	}
	// Only the default version is built on demand; another one is a deliberate choice that
	// takes minutes to build, so it must be provisioned first.
	if o.ServerVersion != "" && o.ServerVersion != envtestbin.DefaultVersion {
		if _, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: o.ServerVersion, NoBuild: true}); err != nil {
			return nil, cli.Usage(fmt.Errorf("kube-apiserver %s is not provisioned: run `make envtest K8S_VERSION=%s` first (%v)", o.ServerVersion, o.ServerVersion, err))
		}
	}
	start := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: o.ServerVersion, FeatureGates: o.ServerGates, Progress: cli.Lines(say)})
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

// attach attaches to the user's cluster and confines the run to one namespace: Spec.Namespace,
// the matrix run's (its creator deletes it), or one of its own, created once the user is known
// to have every permission the run needs and deleted at the end. Either way what the run made
// there is deleted when it ends, so that the next run starts with the namespace empty.
func attach(ctx context.Context, o Spec, out *record.Writer, say func(string, ...any)) (*target, error) {
	cl, err := cluster.Open(ctx, o.Kubeconfig, o.Context)
	if err != nil {
		return nil, cli.Usage(err)
	}
	ns, owned := o.Namespace, o.Namespace == ""
	if owned {
		ns = cluster.NewNamespace()
		if err := cl.Check(ctx, cluster.Needs(ns)); err != nil {
			return nil, cli.Usage(err)
		}
		if err := cl.CreateNamespace(ctx, ns); err != nil {
			return nil, err
		}
	}
	gates := o.ServerGates // what the matrix run learned, once for all its runs
	if owned {
		f := cl.Features(ctx, ns)
		gates = f.Gates
		say("the cluster's streaming lists: %s", f)
	}
	say("attached to %s (%s) as user %s; working only in namespace %s", cl.Config.Host, cl.Version, cl.User, ns)
	out.Setup("", record.StepServer, cl.Version, gates)
	stop := func() {
		if cl == nil {
			return
		}
		if owned {
			if err := cl.DeleteNamespace(ns); err != nil {
				say("%v", err)
			} else {
				say("deleted namespace %s and the run's ConfigMaps", ns)
			}
		} else if err := cl.Clean(ns); err != nil {
			say("%v", err)
		}
		cl = nil
	}
	return &target{cfg: cl.Config, kubeconfig: o.Kubeconfig, namespace: ns, version: cl.Version, labels: cluster.RunLabels(ns), stop: stop}, nil
}
