// Package cluster is a user's own cluster as the harness's server (make compare -kubeconfig,
// make matrix --kubeconfig): its kubeconfig's credentials (lab/kubeconfig), whether its user may
// do what a run does (SelfSubjectAccessReview, asked before anything is created), the run's one
// namespace, and what the server says of its streaming lists (features.go).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"informer-lab/lab/kubeconfig"
	"informer-lab/record"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NamespacePrefix starts the name of every namespace a run creates.
const NamespacePrefix = "informer-lab-"

// Cluster is a user's cluster that answered.
type Cluster struct {
	Config     *rest.Config // the kubeconfig context's, with its own credentials
	Kubeconfig string       // the file's path (never its contents)
	Context    string       // the context asked for, "" for the file's current-context
	Version    string       // what its /version says, e.g. "v1.32.13"
	// User is who the server says the credentials are (SelfSubjectReview), or, when it does not
	// say, which kubeconfig context's user: what a refusal names.
	User string
	cs   kubernetes.Interface
}

// Open loads the kubeconfig's context and asks the server its /version. Every error is the
// user's input (a file that does not load, a context not in it, a server that does not answer),
// one line naming the file and, when it got that far, the server's address.
func Open(ctx context.Context, path, kubeContext string) (*Cluster, error) {
	cfg, err := kubeconfig.Load(path, kubeContext)
	if err != nil {
		return nil, err
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %s", path, record.OneLine(err))
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("the cluster of kubeconfig %s%s does not answer at %s: %s", path, inContext(kubeContext), cfg.Host, record.OneLine(err))
	}
	c := &Cluster{Config: cfg, Kubeconfig: path, Context: kubeContext, Version: v.GitVersion, cs: cs}
	c.User = c.whoAmI(ctx)
	return c, nil
}

// whoAmI is the user the server authenticated (authentication.k8s.io/v1, from 1.28), else the
// kubeconfig's name for it.
func (c *Cluster) whoAmI(ctx context.Context) string {
	r, err := c.cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err == nil && r.Status.UserInfo.Username != "" {
		return r.Status.UserInfo.Username
	}
	if c.Context != "" {
		return fmt.Sprintf("of context %q", c.Context)
	}
	return fmt.Sprintf("of kubeconfig %s's current-context", c.Kubeconfig)
}

// NewNamespace names a run's namespace: informer-lab-xxxxx, five random characters that make
// a valid DNS label.
func NewNamespace() string { return NamespacePrefix + rand.String(5) }

// Permission is one thing a run does on the cluster: a verb on a resource, in a namespace
// (cluster-scoped when Namespace is ""), on one object when Name is set.
type Permission struct {
	Verb, Resource, Namespace, Name string
	Why                             string // which part of the run needs it
}

// String says it as a refusal does: "watch configmaps in namespace informer-lab-abcde",
// "create namespaces", "delete namespace informer-lab-abcde".
func (p Permission) String() string {
	switch {
	case p.Namespace != "":
		return fmt.Sprintf("%s %s in namespace %s", p.Verb, p.Resource, p.Namespace)
	case p.Name != "":
		return fmt.Sprintf("%s %s %s", p.Verb, strings.TrimSuffix(p.Resource, "s"), p.Name)
	}
	return p.Verb + " " + p.Resource
}

// Needs is every permission a run in namespace ns needs, read from what the harness and the labs
// do there (ConfigMaps: the informer kinds a cluster can run all watch them; the CRD kinds are
// n/a, record.ClusterNotApplicable). Nothing else is read or written: every lab gets -namespace.
func Needs(ns string) []Permission {
	cm := func(verb, why string) Permission {
		return Permission{Verb: verb, Resource: "configmaps", Namespace: ns, Why: why}
	}
	return []Permission{
		{Verb: "create", Resource: "namespaces", Why: "the run's own namespace"},
		{Verb: "delete", Resource: "namespaces", Name: ns, Why: "the run's namespace, deleted at the end"},
		cm("create", "the seed objects and the writer's creates"),
		cm("patch", "the writer's updates (merge patches of data.tick)"),
		cm("delete", "the writer's deletes"),
		cm("list", "the informers' LISTs, the labs' direct List() and the harness's fresh LIST"),
		cm("watch", "the informers' watches and streaming lists, and the probe of the server's WatchList"),
		cm("deletecollection", "removing the run's objects at the end of each scenario"),
	}
}

// Check asks the server, by SelfSubjectAccessReview, whether the user may do each of perms, and
// returns one error that names every one it may not: nothing may be created before this holds.
func (c *Cluster) Check(ctx context.Context, perms []Permission) error {
	var denied []string
	for _, p := range perms {
		ok, err := c.may(ctx, &authorizationv1.ResourceAttributes{Verb: p.Verb, Resource: p.Resource, Namespace: p.Namespace, Name: p.Name}, nil)
		if err != nil {
			return err
		}
		if !ok {
			denied = append(denied, p.String())
		}
	}
	switch len(denied) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("user %s may not %s (SelfSubjectAccessReview): ask for it or use another --context", c.User, denied[0])
	}
	return fmt.Errorf("user %s may not %s (SelfSubjectAccessReview): ask for them or use another --context", c.User, strings.Join(denied, ", nor "))
}

// may asks one SelfSubjectAccessReview, of a resource or of a path.
func (c *Cluster) may(ctx context.Context, res *authorizationv1.ResourceAttributes, path *authorizationv1.NonResourceAttributes) (bool, error) {
	ok, err := May(ctx, c.cs, res, path)
	if err != nil {
		return false, fmt.Errorf("cannot ask the cluster at %s what user %s may do (SelfSubjectAccessReview): %s", c.Config.Host, c.User, record.OneLine(err))
	}
	return ok, nil
}

// May asks the server whether the user of cs may do what res (or path) says: one
// SelfSubjectAccessReview.
func May(ctx context.Context, cs kubernetes.Interface, res *authorizationv1.ResourceAttributes, path *authorizationv1.NonResourceAttributes) (bool, error) {
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: res, NonResourceAttributes: path},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

// CreateNamespace creates the run's namespace, labelled record.RunLabel=ns.
func (c *Cluster) CreateNamespace(ctx context.Context, ns string) error {
	_, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: RunLabels(ns)}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

// RunLabels are the labels of everything a run in namespace ns creates.
func RunLabels(ns string) map[string]string { return map[string]string{record.RunLabel: ns} }

// Clean deletes what the run made in ns (its ConfigMaps labelled record.RunLabel=ns), and
// nothing else: the next scenario starts with the namespace as the cluster made it. Like
// DeleteNamespace it takes its own time: the run's context may be a Ctrl-C'd one.
func (c *Cluster) Clean(ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanTimeout)
	defer cancel()
	return c.clean(ctx, ns)
}

func (c *Cluster) clean(ctx context.Context, ns string) error {
	err := c.cs.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: record.RunLabel + "=" + ns})
	if err != nil {
		return fmt.Errorf("delete the run's ConfigMaps in %s: %w", ns, err)
	}
	return nil
}

// DeleteNamespace removes the run's objects, then its namespace: a cluster without a namespace
// controller (envtest), or a slow one, would otherwise keep the ConfigMaps.
func (c *Cluster) DeleteNamespace(ns string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanTimeout)
	defer cancel()
	err := c.clean(ctx, ns)
	if derr := c.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); derr != nil {
		err = errors.Join(err, fmt.Errorf("delete namespace %s: %w", ns, derr))
	}
	return err
}

// cleanTimeout bounds the deletes at the end of a run.
const cleanTimeout = 30 * time.Second

func inContext(kubeContext string) string {
	if kubeContext == "" {
		return ""
	}
	return fmt.Sprintf(" (context %q)", kubeContext)
}
