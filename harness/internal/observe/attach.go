package observe

import (
	"context"
	"fmt"

	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/cluster"
)

// attach points the run at -kubeconfig's cluster: the command is observed in a namespace of
// the run's own, created once the user is known to be allowed what the run does there (its
// writer's writes, the namespace itself), and deleted at the end. What the observed command does
// is its own business: it acts with the user's credentials, through the proxy.
func attach(ctx context.Context, o options, t *target, say func(string, ...any)) error {
	c, err := cluster.Open(ctx, o.kubeconfig, o.context)
	if err != nil {
		return cli.Usage(err)
	}
	ns := cluster.NewNamespace()
	if err := c.Check(ctx, cluster.Needs(ns)); err != nil {
		return cli.Usage(err)
	}
	if err := c.CreateNamespace(ctx, ns); err != nil {
		return err
	}
	t.stops = append(t.stops, func() {
		if err := c.DeleteNamespace(ns); err != nil {
			say("%v", err)
			return
		}
		say("deleted namespace %s and what the run wrote in it", ns)
	})
	t.cfg, t.namespace, t.labels = c.Config, ns, cluster.RunLabels(ns)
	t.kubectlVersion = kubectlVersion(c.Version)
	t.describe = fmt.Sprintf("the cluster at %s (%s, user %s)", c.Config.Host, c.Version, c.User)
	return nil
}
