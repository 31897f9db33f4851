package observe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"informer-lab/harness/internal/cluster"
	"informer-lab/harness/internal/proxy"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// target is the server the command is observed against: an envtest of its own, or the user's
// cluster, in a namespace of the run's own.
type target struct {
	cfg            *rest.Config      // what the proxy authenticates upstream with
	namespace      string            // the command's kubeconfig's namespace, where the writes go
	describe       string            // "envtest kube-apiserver v1.32.13"
	kubectlVersion string            // the kubectl to build when the command is kubectl
	tmp            string            // the proxy's kubeconfig: outside the run directory, removed at stop
	labels         map[string]string // on everything the writer creates: a cluster's run label
	stops          []func()
}

func (t *target) stop() {
	for i := len(t.stops) - 1; i >= 0; i-- {
		t.stops[i]()
	}
	t.stops = nil
}

// connect starts envtest, or attaches to -kubeconfig's cluster (cluster.StartTarget): the
// command is observed in a namespace of the run's own, created once the user is known to be
// allowed what the run does there (its writer's writes, the namespace itself), and deleted at
// the end. What the observed command does is its own business: it acts with the user's
// credentials, through the proxy. On error nothing is left.
func connect(ctx context.Context, o options, say func(string, ...any)) (_ *target, err error) {
	tmp, err := os.MkdirTemp("", "informer-lab-observe-")
	if err != nil {
		return nil, err
	}
	t := &target{tmp: tmp, stops: []func(){func() { os.RemoveAll(tmp) }}}
	defer func() {
		if err != nil {
			t.stop()
		}
	}()
	ct, err := cluster.StartTarget(ctx, cluster.TargetOptions{Kubeconfig: o.kubeconfig, Context: o.context,
		Version: o.serverVersion, Gates: o.serverGates, Say: say})
	if err != nil {
		return nil, err
	}
	t.stops = append(t.stops, ct.Stop)
	t.cfg, t.namespace, t.labels = ct.Config, ct.Namespace, ct.Labels
	if c := ct.Cluster; c != nil {
		t.kubectlVersion = kubectlVersion(c.Version)
		t.describe = fmt.Sprintf("the cluster at %s (%s, user %s)", c.Config.Host, c.Version, c.User)
		return t, nil
	}
	t.kubectlVersion = o.serverVersion
	t.describe = "envtest kube-apiserver " + ct.Version
	if o.serverGates != "" {
		t.describe += " (" + o.serverGates + ")"
	}
	return t, nil
}

// proxyKubeconfig writes the proxy's kubeconfig (its CA, a worthless token, the run's
// namespace) where only this user can read it.
func proxyKubeconfig(px *proxy.Proxy, namespace, dir string) (string, error) {
	raw, err := px.Kubeconfig()
	if err != nil {
		return "", err
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return "", fmt.Errorf("the proxy's kubeconfig: %w", err)
	}
	for _, c := range cfg.Contexts {
		c.Namespace = namespace
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil { // owner-only, as clientcmd writes it
		return "", fmt.Errorf("write the proxy's kubeconfig: %w", err)
	}
	return path, nil
}

// kubectlVersion is the X.Y.Z of a server's GitVersion ("v1.33.5-eks-1a2b" gives 1.33.5).
func kubectlVersion(gitVersion string) string {
	v := strings.TrimPrefix(gitVersion, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	return v
}
