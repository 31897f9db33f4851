package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/cluster"
	"informer-lab/harness/internal/rundir"
	"informer-lab/harness/internal/servers"
	"informer-lab/lab/aggregated"
	"informer-lab/lab/controlplane"
	"informer-lab/record"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

type options struct {
	root, out           string
	kubeconfig, context string
	namespace           string
	server              servers.Server // envtest's
	timeout             time.Duration
	maxObjects          int
	jsonOut             string
	resources           []string // only these (plural.group), all when empty
	aggregated          bool     // on envtest, register the sample-apiservers (envtestbin.SampleAPIServers)
}

// Run is make probe's main; it returns the process exit code: 0 once every resource is graded,
// whatever the grades; 2 for bad input (one line); 3 when the probe itself failed.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if code, ok := cli.Parsed(err, stderr); !ok {
		return code
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "[probe] "+format+"\n", a...) }
	rep, err := probe(ctx, o, say)
	if err != nil {
		fmt.Fprintln(stderr, "error:", record.OneLine(err))
		if cli.IsUsage(err) {
			return cli.ExitUsage
		}
		return 3
	}
	rep.consequences(filepath.Join(o.root, "docs"))
	rep.WriteText(stdout)
	page, err := writePage(rep, o.out)
	if err != nil {
		fmt.Fprintln(stderr, "error:", record.OneLine(err))
		return 3
	}
	fmt.Fprintf(stdout, "report: %s\n", page)
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 3
		}
	}
	return 0
}

// writePage writes the grades as report.html into a run directory of their own under out.
func writePage(rep *Report, out string) (string, error) {
	dir, err := rundir.New(out, "probe-", time.Now())
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "report.html")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := rep.WritePage(f); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlags("probe", "docs/faults/faults.json", stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "probe this cluster instead of envtest (it is never written to, but for the probe's own namespace)")
	fs.StringVar(&o.context, "context", "", "with -kubeconfig: the kubeconfig's context to use (default: its current-context)")
	fs.StringVar(&o.namespace, "namespace", "", "where namespaced resources are probed (default: a namespace of the probe's own, created and deleted)")
	server := fs.String("server", envtestbin.DefaultVersion, "without -kubeconfig: envtest's kube-apiserver, a version optionally with settings (1.34.4:watch-cache=false)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long each resource's streaming list may take to end its initial events")
	fs.IntVar(&o.maxObjects, "max-objects", 500, "stop reading a resource's stream after this many objects (its grade is then unknown)")
	fs.StringVar(&o.jsonOut, "json", "", "also write the grades as JSON to this file")
	fs.BoolVar(&o.aggregated, "aggregated", true, "without -kubeconfig: register real aggregated apiservers with envtest's kube-apiserver first, k8s.io/sample-apiserver "+strings.Join(envtestbin.SampleAPIServers, " and ")+" (wardle.example.com "+strings.Join(aggregated.GroupVersions, " and ")+"), built from the module proxy the first time")
	only := fs.String("resources", "", "comma-separated resources to probe, as plural.group (configmaps, flunders.wardle.example.com); default: all")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, r := range strings.Split(*only, ",") {
		if r = strings.TrimSpace(r); r != "" {
			o.resources = append(o.resources, r)
		}
	}
	sv, err := servers.Parse(*server)
	if err == nil {
		err = sv.Alone()
	}
	if err != nil {
		return o, fmt.Errorf("-server: %w", err)
	}
	o.server = sv
	switch {
	case o.context != "" && o.kubeconfig == "":
		return o, errors.New("-context goes with -kubeconfig")
	case o.timeout <= 0 || o.maxObjects <= 0:
		return o, fmt.Errorf("-timeout and -max-objects must be positive, got %s and %d", o.timeout, o.maxObjects)
	}
	o.root, o.out, err = fs.Dirs()
	return o, err
}

// Report is a probe's result: the server and a grade per resource.
type Report struct {
	Server    string   `json:"server"` // its /version
	Namespace string   `json:"namespace"`
	Grades    []Grade  `json:"grades"`
	Skipped   []string `json:"skipped"` // resources the user may not list and watch, groups discovery could not read
	// Hits say, per pattern graded, what the committed fault grid shows for it (consequences).
	Hits map[string][]string `json:"faultGrid,omitempty"`
}

// probeQPS is the probe's client-side limit on requests a second.
const probeQPS = 50

// probe connects, finds the resources and grades each, one after another.
func probe(ctx context.Context, o options, say func(string, ...any)) (*Report, error) {
	cfg, version, stop, err := connect(ctx, o, say)
	if err != nil {
		return nil, err
	}
	defer stop()
	// A probe asks a few requests per resource (discovery, whether the user may list and watch
	// it, the stream): at client-go's default client-side limit (5 a second, bursts of 10) the
	// sixty resources of a bare kube-apiserver took 18 s of waiting on the client's own limiter.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = probeQPS, 2*probeQPS
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ns, release, err := namespace(ctx, cs, o.namespace, say)
	if err != nil {
		return nil, err
	}
	defer release()
	// The probe's dynamic client counts what it reads: each resource's bytes (read.Store(0) first).
	var read atomic.Int64
	counted := rest.CopyConfig(cfg)
	counted.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &read} })
	dyn, err := dynamic.NewForConfig(counted)
	if err != nil {
		return nil, err
	}
	rep := &Report{Server: version, Namespace: ns}
	resources, err := listable(ctx, cs, dyn, ns, rep)
	if err != nil {
		return nil, err
	}
	if len(o.resources) > 0 {
		var missing []string
		for _, name := range o.resources {
			if !slices.ContainsFunc(resources, func(r resource) bool { return r.name() == name }) {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return nil, cli.Usage(fmt.Errorf("-resources: %s not served with list and watch, or not yours to list and watch (make probe without RESOURCES lists what is)", strings.Join(missing, ", ")))
		}
		resources = slices.DeleteFunc(resources, func(r resource) bool { return !slices.Contains(o.resources, r.name()) })
	}
	say("%d resources to probe on %s, namespaced ones in %s", len(resources), version, ns)
	for i, r := range resources {
		if i > 0 && i%10 == 0 {
			say("%d of %d probed", i, len(resources))
		}
		read.Store(0)
		start := time.Now()
		g := grade(streamOf(ctx, dyn, r, ns, o.timeout, o.maxObjects))
		g.Resource, g.Namespaced, g.Took, g.Bytes, g.APIService = r.name(), r.namespaced, time.Since(start), read.Load(), r.apiService
		rep.Grades = append(rep.Grades, g)
	}
	return rep, nil
}

// connect starts envtest, or opens the user's cluster: its config, its version, and how to stop.
func connect(ctx context.Context, o options, say func(string, ...any)) (*rest.Config, string, func(), error) {
	if o.kubeconfig != "" {
		cl, err := cluster.Open(ctx, o.kubeconfig, o.context)
		if err != nil {
			return nil, "", nil, cli.Usage(err)
		}
		return cl.Config, cl.Version, func() {}, nil
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: o.server.Version, Settings: o.server.Settings, Progress: cli.Lines(say)})
	if err != nil {
		return nil, "", nil, err
	}
	version := cp.ServerVersion
	if o.server.Settings != "" {
		version += " " + o.server.Settings // what the probe graded: 1.34.4 without its watch cache is not 1.34.4
	}
	var started []*aggregated.Server
	stop := func() {
		for _, s := range started {
			s.Stop()
		}
		cp.Stop()
	}
	if o.aggregated {
		for i, v := range envtestbin.SampleAPIServers {
			bin, err := envtestbin.SampleAPIServer(ctx, envtestbin.Options{Progress: cli.Lines(say)}, v)
			if err != nil {
				stop()
				return nil, "", nil, err
			}
			s, err := aggregated.Start(ctx, cp, bin, aggregated.NameFor(v), aggregated.GroupVersions[i])
			if err != nil {
				stop()
				return nil, "", nil, err
			}
			started = append(started, s)
			say("aggregated apiserver: sample-apiserver %s serves %s/%s through kube-apiserver's aggregator", v, aggregated.Group, s.Version)
		}
		version += " + sample-apiserver " + strings.Join(envtestbin.SampleAPIServers, ", ")
	}
	return cp.Config, version, stop, nil
}

// namespace is the user's (-namespace), or one of the probe's own, which release deletes.
func namespace(ctx context.Context, cs kubernetes.Interface, given string, say func(string, ...any)) (string, func(), error) {
	if given != "" {
		return given, func() {}, nil
	}
	ns := cluster.NewNamespace()
	if ok, err := cluster.May(ctx, cs, &authorizationv1.ResourceAttributes{Verb: "create", Resource: "namespaces"}, nil); err != nil || !ok {
		return "", nil, cli.Usage(fmt.Errorf("may not create a namespace for the probe (%v): give -namespace NAME (make probe NAMESPACE=NAME), one you may list and watch in", orNo(err)))
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return "", nil, fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return ns, func() {
		// Ctrl-C cancelled ctx: the namespace still goes.
		del, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cs.CoreV1().Namespaces().Delete(del, ns, metav1.DeleteOptions{}); err != nil {
			say("delete namespace %s: %v", ns, err)
			return
		}
		say("deleted namespace %s", ns)
	}, nil
}

func orNo(err error) string {
	if err != nil {
		return record.OneLine(err)
	}
	return "not allowed"
}

// resource is one resource discovery lists with the list and watch verbs.
type resource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	apiService string // the aggregated APIService that serves it, "" for kube-apiserver's own
}

// name is plural.group, and plural.version.group for an aggregated group version: each
// version of a group may be served by another APIService, that is another server.
func (r resource) name() string {
	switch {
	case r.apiService != "":
		return r.gvr.Resource + "." + r.gvr.Version + "." + r.gvr.Group
	case r.gvr.Group == "":
		return r.gvr.Resource
	}
	return r.gvr.Resource + "." + r.gvr.Group
}

// aggregatedServices are the APIServices served by another server than kube-apiserver (those
// with a Service), by group version: "v1alpha1.wardle.example.com (default/aggregated-x)". A
// user who may not list APIServices gets none: the preferred versions only, then.
func aggregatedServices(ctx context.Context, dyn dynamic.Interface) map[string]string {
	out := map[string]string{}
	list, err := dyn.Resource(aggregated.APIServices).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out
	}
	for _, as := range list.Items {
		ns, _, _ := unstructured.NestedString(as.Object, "spec", "service", "namespace")
		svc, withService, _ := unstructured.NestedString(as.Object, "spec", "service", "name")
		group, _, _ := unstructured.NestedString(as.Object, "spec", "group")
		version, _, _ := unstructured.NestedString(as.Object, "spec", "version")
		if withService {
			out[group+"/"+version] = fmt.Sprintf("%s (%s/%s)", as.GetName(), ns, svc)
		}
	}
	return out
}

// listable is every resource discovery names (each group's preferred version) with the list and
// watch verbs that the user may list and watch: namespaced ones in ns. The others go to
// rep.Skipped, with why.
func listable(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, ns string, rep *Report) ([]resource, error) {
	lists, err := cs.Discovery().ServerPreferredResources()
	var failed *discovery.ErrGroupDiscoveryFailed
	switch {
	case errors.As(err, &failed):
		for gv, e := range failed.Groups {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: discovery failed: %s", gv, record.OneLine(e)))
		}
	case err != nil:
		return nil, fmt.Errorf("discovery: %w", err)
	}
	// Every resource of every version of an aggregated group, not only the preferred ones (a
	// version's list there holds only the resources preferred in it): each version is its
	// APIService's, that is its server's.
	services := aggregatedServices(ctx, dyn)
	lists = slices.DeleteFunc(lists, func(l *metav1.APIResourceList) bool { return services[l.GroupVersion] != "" })
	for _, gv := range slices.Sorted(maps.Keys(services)) {
		l, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: discovery failed: %s", gv, record.OneLine(err)))
			continue
		}
		lists = append(lists, l)
	}
	var out []resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, a := range l.APIResources {
			if strings.Contains(a.Name, "/") || !slices.Contains(a.Verbs, "list") || !slices.Contains(a.Verbs, "watch") {
				continue
			}
			r := resource{gv.WithResource(a.Name), a.Namespaced, services[l.GroupVersion]}
			attrs := authorizationv1.ResourceAttributes{Group: gv.Group, Resource: a.Name}
			if a.Namespaced {
				attrs.Namespace = ns
			}
			if why := mayListWatch(ctx, cs, attrs); why != "" {
				rep.Skipped = append(rep.Skipped, r.name()+": "+why)
				continue
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b resource) int { return strings.Compare(a.name(), b.name()) })
	slices.Sort(rep.Skipped)
	return out, nil
}

// mayListWatch says why the user may not list and watch, "" when it may.
func mayListWatch(ctx context.Context, cs kubernetes.Interface, attrs authorizationv1.ResourceAttributes) string {
	for _, verb := range []string{"list", "watch"} {
		a := attrs
		a.Verb = verb
		if ok, err := cluster.May(ctx, cs, &a, nil); err != nil || !ok {
			return fmt.Sprintf("may not %s (%s)", verb, orNo(err))
		}
	}
	return ""
}

// streamOf sends the reflector's streaming list for r and reads it until its end bookmark, an
// error, its end, timeout or maxObjects.
func streamOf(ctx context.Context, dyn dynamic.Interface, r resource, ns string, timeout time.Duration, maxObjects int) stream {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	send, serverTimeout := true, int64((timeout + 5*time.Second).Seconds()) // the probe's limit comes first
	opts := metav1.ListOptions{SendInitialEvents: &send, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks: true, TimeoutSeconds: &serverTimeout}
	c := dyn.Resource(r.gvr)
	var w watch.Interface
	var err error
	if r.namespaced {
		w, err = c.Namespace(ns).Watch(ctx, opts)
	} else {
		w, err = c.Watch(ctx, opts)
	}
	if err != nil {
		return stream{err: err}
	}
	defer w.Stop()
	return read(ctx, w, timeout, maxObjects)
}
