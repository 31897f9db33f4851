package bench

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Pods at scale (-cases pods): Pods of about 10 KB, the object the field's largest lists are
// made of (kubernetes/kubernetes#134837 watches 80k of them, #138327 165k), at several counts,
// each a case pods-N of its own, so that every cost can be fitted against the count and the
// fitted line carried past what this machine holds (podFit).

// DefaultPodCounts are -pods-counts' default: four counts, each twice the one before. At 40,000
// envtest's etcd, which it starts without a --quota-backend-bytes of its own, ran out of space
// ("etcdserver: mvcc: database space exceeded") while the harness deleted them after the runs of
// three counts before.
var DefaultPodCounts = "2500,5000,10000,20000"

// DefaultPodServers are the servers of a run of the Pod cases alone when -servers is not given:
// 1.32.13 sends a streaming list uncompressed, as every server before 1.37 does, and gzips a
// LIST; 1.37.2 gzips both (kubernetes/kubernetes#138327 measured 1572 MB against 232 MB on the
// wire at 165K Pods before it).
var DefaultPodServers = "1.32.13,1.37.2"

// The counts the docs extrapolate to: #134837's 80k Pods and #138327's 165k.
var podTargets = []int{80000, 165000}

// podSchedulerName keeps a seeded Pod Pending on a cluster: no scheduler answers to it, so no
// node runs it. envtest runs no scheduler at all.
const podSchedulerName = "informer-lab-none"

// podDefaults is -cases pods alone without -servers: DefaultPodServers.
func podDefaults(fs *flag.FlagSet, o *options, v *flagValues) {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "servers" })
	if !set && o.kubeconfig == "" && strings.ReplaceAll(o.cases, " ", "") == "pods" {
		v.servers = DefaultPodServers
	}
}

// Every Pod carries one of podShards values of podShardLabel, so that deleting a case's Pods
// can go a shard at a time (deleteCollection).
const (
	podShardLabel = "shard"
	podShards     = 16
)

// podCases are the Pod-scale cases: one per count, each at K k only.
func podCases(counts []int, size int64, k int) []Case {
	var cs []Case
	for _, n := range counts {
		cs = append(cs, Case{Name: podCaseName(n), Objects: n, Size: size, Resource: record.ResourcePods, Ks: []int{k}})
	}
	return cs
}

// podCaseName names a count's case so that names sort as counts do: pods-005000.
func podCaseName(n int) string { return fmt.Sprintf("pods-%06d", n) }

// parsePodCounts reads -pods-counts: at least four counts (a fit of fewer says little), each
// a positive number, none twice.
func parsePodCounts(s string) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-pods-counts: %q is not a number of Pods", f)
		}
		if slices.Contains(counts, n) {
			return nil, fmt.Errorf("-pods-counts: %d is given twice", n)
		}
		counts = append(counts, n)
	}
	if len(counts) < 4 {
		return nil, fmt.Errorf("-pods-counts: %d counts, and a fit needs at least 4 (e.g. %s)", len(counts), DefaultPodCounts)
	}
	slices.Sort(counts)
	return counts, nil
}

// capPodCounts is -pods-counts on a cluster (-max-objects): counts not given become
// max/8, max/4, max/2 and max when the default's largest is above it; larger ones given are
// refused.
func capPodCounts(fs *flag.FlagSet, v *flagValues, maxObjects int) (capped string, err error) {
	counts, err := parsePodCounts(v.podCounts)
	if err != nil || counts[len(counts)-1] <= maxObjects {
		return "", err
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "pods-counts" })
	if set {
		return "", fmt.Errorf("-pods-counts %s has more than -max-objects %d, the most objects make bench creates in a cluster per case: lower it, or raise -max-objects", v.podCounts, maxObjects)
	}
	if maxObjects < 8 {
		return "", errors.New("-cases pods needs -max-objects of at least 8: its four counts are an eighth, a quarter, a half and all of it")
	}
	v.podCounts = fmt.Sprintf("%d,%d,%d,%d", maxObjects/8, maxObjects/4, maxObjects/2, maxObjects)
	return fmt.Sprintf("-pods-counts %s (not %s: -max-objects)", v.podCounts, DefaultPodCounts), nil
}

// podObject is the i-th Pod of a case: the shape of a Deployment's Pod as a cluster holds many
// (two containers with ports, environment, resources, probes and volume mounts, labels,
// annotations, tolerations, volumes), padded with an annotation of random base64 text until
// its JSON as created is size bytes (kube-apiserver adds defaults, managedFields and a status).
// Its scheduler is none (podSchedulerName), so it stays Pending wherever it is created.
func podObject(ns string, i uint64, size int64) *corev1.Pod {
	name := fmt.Sprintf("bench-%06d", i)
	env := func(prefix string, n int) []corev1.EnvVar {
		var e []corev1.EnvVar
		for j := 0; j < n; j++ {
			e = append(e, corev1.EnvVar{Name: fmt.Sprintf("%s_SETTING_%02d", prefix, j), Value: fmt.Sprintf("value-%02d-of-%s", j, name)})
		}
		return e
	}
	container := func(cname, image string, envPrefix string, port int32) corev1.Container {
		probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(port)}}, PeriodSeconds: 10, FailureThreshold: 3}
		return corev1.Container{
			Name: cname, Image: image, Args: []string{fmt.Sprintf("--port=%d", port), "--log-level=info", fmt.Sprintf("--metrics-port=%d", port+1)},
			Ports: []corev1.ContainerPort{{Name: cname[:3] + "-http", ContainerPort: port}, {Name: cname[:3] + "-metrics", ContainerPort: port + 1}},
			Env:   env(envPrefix, 12),
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			LivenessProbe: probe, ReadinessProbe: probe,
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "cache", MountPath: "/var/cache/app"}},
		}
	}
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels:      map[string]string{"app": "bench", "tier": "backend", "pod-template-hash": "5d8f7c9b6", podShardLabel: strconv.FormatUint(i%podShards, 10)},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
		},
		Spec: corev1.PodSpec{
			SchedulerName: podSchedulerName,
			Containers:    []corev1.Container{container("app", "registry.example/app:v1.2.3", "APP", 8080), container("sidecar", "registry.example/proxy:v0.9.1", "PROXY", 15000)},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
	}
	if pad := size - podJSONSize(pod) - int64(len(`,"informer-lab/padding":""`)); pad > 0 {
		pod.Annotations["informer-lab/padding"] = payload(i, pad)
	}
	return pod
}

// podJSONSize is the bytes of pod's JSON.
func podJSONSize(pod *corev1.Pod) int64 {
	b, err := json.Marshal(pod)
	if err != nil { // a Pod of plain fields always marshals
		panic(err)
	}
	return int64(len(b))
}

// podFit is a cost's line through the runs of one server and mode: y = At0 + PerPod·n, fitted
// by least squares over every run (not the medians), and R², how much of the runs' spread the
// line explains (1: all of it).
type podFit struct {
	At0, PerPod, R2 float64
	N               int  // runs fitted
	MaxCount        int  // the largest count measured: the line beyond it is extrapolated
	ok              bool // at least two distinct counts
}

// at is the line's value at n Pods.
func (f podFit) at(n int) float64 { return f.At0 + f.PerPod*float64(n) }

// fitPods fits m of server's runs in mode across the Pod cases.
func fitPods(results []Result, server string, cases []Case, m Mode, metric Metric) podFit {
	var xs, ys []float64
	f := podFit{}
	for _, c := range cases {
		k := c.Ks[0]
		for _, y := range (Point{server, c.Name, k, m, false}).Values(results, metric) {
			xs, ys = append(xs, float64(c.Objects)), append(ys, y)
			f.MaxCount = max(f.MaxCount, c.Objects)
		}
	}
	f.N = len(xs)
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	if f.N < 2 {
		return f
	}
	mx, my = mx/float64(f.N), my/float64(f.N)
	var sxx, sxy, syy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	if sxx == 0 {
		return f
	}
	f.PerPod = sxy / sxx
	f.At0 = my - f.PerPod*mx
	f.R2 = 1.0
	if syy > 0 {
		f.R2 = sxy * sxy / (sxx * syy)
	}
	f.ok = !math.IsNaN(f.PerPod)
	return f
}
