package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/cluster"
	"informer-lab/harness/internal/proxy"
	"informer-lab/lab/aggregated"
	"informer-lab/lab/controlplane"
	"informer-lab/record"

	"k8s.io/client-go/rest"
)

// target is the server a run uses: envtest (cp set) or the user's cluster (cluster.Target).
type target struct {
	cfg        *rest.Config
	kubeconfig string            // for the labs
	namespace  string            // where the writer writes
	labels     map[string]string // on every object the harness creates (a cluster: the run's label)
	version    string            // what its /version says
	cp         *controlplane.ControlPlane
	// servers are the kube-apiservers the labs reach through a balancer (upgrade=VERSION: the
	// control plane's and a second one of that version); nil for one server, reached directly.
	servers []proxy.Server
	stop    func() // idempotent
}

// server starts envtest, or attaches to the user's cluster in one namespace: Spec.Namespace, the
// matrix run's (its creator deletes it), or one of its own (cluster.StartTarget). Either way
// what the run made there is deleted when it ends, so that the next run starts with the
// namespace empty.
func server(ctx context.Context, o Spec, tmp string, out *record.Writer, say func(string, ...any)) (*target, error) {
	if err := provisioned(ctx, o); err != nil {
		return nil, err
	}
	start := time.Now()
	ct, err := cluster.StartTarget(ctx, cluster.TargetOptions{Kubeconfig: o.Kubeconfig, Context: o.Context, Namespace: o.Namespace,
		Version: o.ServerVersion, Gates: o.ServerGates, Say: say})
	if err != nil {
		return nil, err
	}
	t := &target{cfg: ct.Config, kubeconfig: o.Kubeconfig, namespace: ct.Namespace, labels: ct.Labels, version: ct.Version, cp: ct.CP, stop: ct.Stop}
	if ct.Cluster != nil {
		attached(ctx, ct, o.ServerGates, out, say)
		return t, nil
	}
	say("envtest control plane %s up in %s", ct.Version, time.Since(start).Round(time.Millisecond))
	out.Setup("", record.StepServer, ct.Version, o.ServerGates)
	if err := startPeer(ctx, t, record.UpgradeOf(o.ServerGates), out, say); err != nil {
		ct.Stop()
		return nil, err
	}
	stopAggregated, err := startAggregated(ctx, ct.CP, record.AggregatedOf(o.ServerGates), say)
	if err != nil {
		ct.Stop()
		return nil, err
	}
	if t.kubeconfig, err = adminKubeconfig(ct.CP, tmp); err != nil {
		stopAggregated()
		ct.Stop()
		return nil, err
	}
	t.stop = func() { stopAggregated(); ct.Stop(); os.Remove(t.kubeconfig) }
	return t, nil
}

// startAggregated runs sample-apiserver version (built into the store the first time) beside
// cp, registered with its aggregator for the group version the aggregated kind watches; none
// when version is "". The returned func stops it.
func startAggregated(ctx context.Context, cp *controlplane.ControlPlane, version string, say func(string, ...any)) (func(), error) {
	if version == "" {
		return func() {}, nil
	}
	bin, err := envtestbin.SampleAPIServer(ctx, envtestbin.Options{Progress: cli.Lines(say)}, version)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	s, err := aggregated.Start(ctx, cp, bin, aggregated.NameFor(version), record.AggregatedVersion)
	if err != nil {
		return nil, err
	}
	say("aggregated apiserver: sample-apiserver %s serves %s/%s through kube-apiserver's aggregator, up in %s",
		version, record.AggregatedGroup, record.AggregatedVersion, time.Since(start).Round(time.Millisecond))
	return func() { s.Stop() }, nil
}

// startPeer starts a second kube-apiserver of version on the control plane's etcd (none when
// version is ""), and sets the servers the labs' balancer sends their requests to in turn. The
// control plane's Stop stops it.
func startPeer(ctx context.Context, t *target, version string, out *record.Writer, say func(string, ...any)) error {
	if version == "" {
		return nil
	}
	peer, err := t.cp.StartPeer(ctx, version, cli.Lines(say))
	if err != nil {
		return err
	}
	t.servers = []proxy.Server{{Name: strings.TrimPrefix(t.version, "v"), Host: t.cfg.Host}, {Name: strings.TrimPrefix(peer.ServerVersion, "v"), Host: peer.Config.Host}}
	out.Setup("", record.StepPeer, peer.ServerVersion, "a second kube-apiserver on the same etcd; the labs reach both through a round-robin balancer")
	say("upgrade in progress: kube-apiserver %s and %s on one etcd, the labs' requests to each in turn", t.version, peer.ServerVersion)
	return nil
}

// provisioned refuses an envtest version that is not built (the server's, and the second
// server's of upgrade=): only the default one is built on demand; another one is a deliberate
// choice that takes minutes to build, so it must be provisioned first.
func provisioned(ctx context.Context, o Spec) error {
	if o.Kubeconfig != "" {
		return nil
	}
	for _, v := range []string{o.ServerVersion, record.UpgradeOf(o.ServerGates)} {
		if v == "" || v == envtestbin.DefaultVersion {
			continue
		}
		if _, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: v, NoBuild: true}); err != nil {
			return cli.Usage(fmt.Errorf("kube-apiserver %s is not provisioned: run `make envtest K8S_VERSION=%s` first (%v)", v, v, err))
		}
	}
	return nil
}

// adminKubeconfig writes envtest's admin kubeconfig for the labs: credentials, readable by the
// owner only, outside the run directory, gone at the end.
func adminKubeconfig(cp *controlplane.ControlPlane, tmp string) (string, error) {
	kc, err := cp.AdminKubeconfig("informer-lab")
	if err != nil {
		return "", err
	}
	path := filepath.Join(tmp, "kubeconfig")
	return path, os.WriteFile(path, kc, 0o600)
}

// attached says and records the cluster the run is on. The gates its cells are expected by are
// what the cluster says of its streaming lists: asked here in a namespace of the run's own, else
// what the matrix run learned once for all its runs (gates).
func attached(ctx context.Context, ct *cluster.Target, gates string, out *record.Writer, say func(string, ...any)) {
	cl := ct.Cluster
	if ct.Owned {
		f := cl.Features(ctx, ct.Namespace)
		gates = f.Gates
		say("the cluster's streaming lists: %s", f)
	}
	say("attached to %s (%s) as user %s; working only in namespace %s", cl.Config.Host, cl.Version, cl.User, ct.Namespace)
	out.Setup("", record.StepServer, cl.Version, gates)
}
