package cluster

import (
	"context"

	"informer-lab/harness/internal/cli"
	"informer-lab/lab/controlplane"

	"k8s.io/client-go/rest"
)

// Target is the server a command runs against (make compare, observe): an envtest control plane
// of its own, or the user's cluster, where the command works in one namespace only. Stop undoes
// what StartTarget did.
type Target struct {
	Config    *rest.Config      // envtest's admin, or the kubeconfig context's own credentials
	Namespace string            // where the command writes: "default" on envtest
	Labels    map[string]string // on every object the command creates: on a cluster, the run's (RunLabels)
	Version   string            // what its /version says
	CP        *controlplane.ControlPlane
	Cluster   *Cluster // the user's cluster; nil on envtest
	// Owned: on a cluster, the namespace is the run's own, created by StartTarget and deleted by
	// Stop; else it is the caller's, and Stop deletes only what the run made in it.
	Owned bool
	stop  func()
}

// TargetOptions choose a Target.
type TargetOptions struct {
	// Kubeconfig is the user's cluster ("" for envtest), with the kubeconfig's Context ("" for its
	// current-context).
	Kubeconfig, Context string
	// Namespace, on a cluster, is the caller's namespace, which it made and deletes; "" for one of
	// the run's own.
	Namespace      string
	Version, Gates string                        // envtest's kube-apiserver version ("" for the default) and --feature-gates
	Say            func(format string, a ...any) // envtest's progress, and what Stop deleted
}

// StartTarget starts envtest, or opens the user's cluster and confines the run to one namespace:
// o.Namespace, or one of its own, created once the user is known to have every permission the
// run needs. Every error before anything is created on the cluster is the user's input.
func StartTarget(ctx context.Context, o TargetOptions) (*Target, error) {
	if o.Kubeconfig != "" {
		return attach(ctx, o)
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: o.Version, Settings: o.Gates, Progress: cli.Lines(o.Say)})
	if err != nil {
		return nil, err
	}
	return &Target{Config: cp.Config, Namespace: "default", Version: cp.ServerVersion, CP: cp, stop: func() { cp.Stop() }}, nil
}

func attach(ctx context.Context, o TargetOptions) (*Target, error) {
	cl, err := Open(ctx, o.Kubeconfig, o.Context)
	if err != nil {
		return nil, cli.Usage(err)
	}
	t := &Target{Config: cl.Config, Namespace: o.Namespace, Version: cl.Version, Cluster: cl, Owned: o.Namespace == ""}
	if t.Owned {
		t.Namespace = NewNamespace()
		if err := cl.Check(ctx, Needs(t.Namespace)); err != nil {
			return nil, cli.Usage(err)
		}
		if err := cl.CreateNamespace(ctx, t.Namespace); err != nil {
			return nil, err
		}
	}
	t.Labels = RunLabels(t.Namespace)
	t.stop = func() { t.leave(o.Say) }
	return t, nil
}

// leave deletes the run's own namespace, or what the run made in the caller's, so that the next
// run starts with the namespace as the cluster made it.
func (t *Target) leave(say func(string, ...any)) {
	if !t.Owned {
		if err := t.Cluster.Clean(t.Namespace); err != nil {
			say("%v", err)
		}
		return
	}
	if err := t.Cluster.DeleteNamespace(t.Namespace); err != nil {
		say("%v", err)
		return
	}
	say("deleted namespace %s and what the run wrote in it", t.Namespace)
}

// Stop stops envtest, or leaves the cluster as StartTarget found it; a second call does nothing.
func (t *Target) Stop() {
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
}
