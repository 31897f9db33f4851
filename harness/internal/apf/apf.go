// Package apf is make apf: what API Priority and Fairness charges informers that start at once,
// LIST→WATCH against streaming lists, per kube-apiserver version. It reads every request's
// priority level, flow schema, seats and status from kube-apiserver's own request log (-v=3),
// for a user that a FlowSchema of its own puts in a small priority level.
package apf

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/servers"
	"informer-lab/lab/controlplane"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The lab every run starts: client-go v0.35, whose -watch-list flag picks LIST→WATCH (off) or the
// streaming list (on).
const labModule = "client-v035"

// Name is the lab user's name and group, and the name of its FlowSchema and priority level.
const Name = "informer-lab-apf"

// Modes are the lab's -watch-list values, in the order each server runs them.
var Modes = []string{"off", "on"}

// Options are one run's settings.
type Options struct {
	Servers     []servers.Server // kube-apiserver versions (and settings), one control plane each
	Objects     int              // ConfigMaps seeded into the watched namespace
	Informers   int              // K: informers one lab starts at once
	Shares      []int32          // the priority level's nominalConcurrencyShares, one setting after the other
	QueueLength int32            // its queueLengthLimit (one queue, hand size 1)
	PollPeriod  time.Duration    // kube-apiserver's --etcd-count-metric-poll-period
	SyncTimeout time.Duration    // how long a lab's informers get to sync
}

// Server is what one kube-apiserver version charged.
type Server struct {
	Name     string  // servers.Server.Name(), e.g. "1.32.13"
	Reported string  // its /version
	Levels   []Level // one per Options.Shares
}

// Level is one setting of the priority level, and the lab starts measured in it.
type Level struct {
	Shares int32
	// NominalSeats is the priority level's concurrency limit as the server computed it
	// (apiserver_flowcontrol_nominal_limit_seats), "" if its metrics did not say.
	NominalSeats string
	Modes        []Mode
}

// Mode is one lab's start: K informers, one -watch-list setting.
type Mode struct {
	WatchList string // the lab's -watch-list
	Synced    bool
	SyncTime  time.Duration // lab process start to every informer synced, on the harness's clock
	Requests  []Request     // the requests of the watched collection, in the order they ended
}

// Measure runs every version of o, one after the other; its kube-apiserver logs stay in runDir.
func Measure(ctx context.Context, o Options, root, runDir string, say func(string, ...any)) ([]Server, error) {
	bin, clientGo, err := labproc.Build(ctx, filepath.Join(root, labModule))
	if err != nil {
		return nil, err
	}
	say("built %s (client-go %s)", labModule, clientGo)
	var out []Server
	for _, sv := range o.Servers {
		s, err := measureServer(ctx, o, sv, bin, runDir, say)
		if err != nil {
			return out, fmt.Errorf("kube-apiserver %s: %w", sv.Name(), err)
		}
		out = append(out, s)
	}
	return out, nil
}

func measureServer(ctx context.Context, o Options, sv servers.Server, bin, runDir string, say func(string, ...any)) (s Server, err error) {
	s.Name = sv.Name()
	logPath := filepath.Join(runDir, "kube-apiserver-"+sv.Slug()+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return s, err
	}
	defer logFile.Close()
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: sv.Version, Settings: sv.Settings, Progress: cli.Lines(say),
		// -v=3: one line per request with its APF charge; the poll period: how soon APF learns
		// how many objects a LIST will go through (the default is a minute).
		APIServerFlags: map[string]string{"v": "3", "etcd-count-metric-poll-period": o.PollPeriod.String()},
		APIServerLog:   logFile})
	if err != nil {
		return s, err
	}
	defer cp.Stop()
	s.Reported = cp.ServerVersion
	admin := rest.CopyConfig(cp.Config)
	admin.QPS, admin.Burst = 1000, 1000
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return s, err
	}
	ns := "apf-" + utilrand.String(5)
	if err := controlplane.EnsureNamespace(ctx, cs, ns); err != nil {
		return s, err
	}
	if err := seed(ctx, cs, ns, o.Objects, say); err != nil {
		return s, err
	}
	if err := configure(ctx, cs, o.QueueLength, o.Shares[0]); err != nil {
		return s, err
	}
	tmp, err := os.MkdirTemp("", "informer-lab-apf-")
	if err != nil {
		return s, err
	}
	defer os.RemoveAll(tmp) // the user's kubeconfig: its client key
	kc, err := cp.UserKubeconfig(Name, Name)
	if err != nil {
		return s, err
	}
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return s, err
	}
	// The object count is polled every PollPeriod: give it a few periods.
	time.Sleep(3 * o.PollPeriod)
	s.Levels, err = measureLevels(ctx, o, cs, sv, s.Reported, bin, kubeconfig, ns, logPath, runDir, say)
	return s, err
}

// seed creates n ConfigMaps of 512 bytes in ns, one after the other.
func seed(ctx context.Context, cs kubernetes.Interface, ns string, n int, say func(string, ...any)) error {
	start := time.Now()
	for i := 0; i < n; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("apf-%06d", i)}, Data: map[string]string{"data": strings.Repeat("x", 512)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("seed ConfigMap %d of %d: %w", i+1, n, err)
		}
	}
	say("seeded %d ConfigMaps in %s in %s", n, ns, time.Since(start).Round(time.Millisecond))
	return nil
}

// measureLevels runs a lab per mode at each of o.Shares, the priority level given those shares
// in turn.
func measureLevels(ctx context.Context, o Options, cs kubernetes.Interface, sv servers.Server, reported, bin, kubeconfig, ns, logPath, runDir string, say func(string, ...any)) ([]Level, error) {
	var levels []Level
	before := ""
	for i, shares := range o.Shares {
		if i > 0 {
			if err := setShares(ctx, cs, shares); err != nil {
				return levels, err
			}
		}
		l := Level{Shares: shares, NominalSeats: applied(ctx, cs, before)}
		before = l.NominalSeats
		say("kube-apiserver %s: priority level %s (nominalConcurrencyShares %d) has %s seats; %d ConfigMaps; %d informers per lab", reported, Name, shares, l.NominalSeats, o.Objects, o.Informers)
		for _, m := range Modes {
			label := fmt.Sprintf("%s-shares-%d-watch-list-%s", sv.Slug(), shares, m)
			r, err := startLab(ctx, o, bin, kubeconfig, ns, m, label, logPath, runDir)
			if err != nil {
				return levels, err
			}
			say("-watch-list %s: synced=%t in %s, %d requests", m, r.Synced, r.SyncTime.Round(time.Millisecond), len(r.Requests))
			l.Modes = append(l.Modes, r)
		}
		levels = append(levels, l)
	}
	return levels, nil
}

// setShares gives the priority level another nominalConcurrencyShares.
func setShares(ctx context.Context, cs kubernetes.Interface, shares int32) error {
	pls := cs.FlowcontrolV1().PriorityLevelConfigurations()
	pl, err := pls.Get(ctx, Name, metav1.GetOptions{})
	if err == nil {
		pl.Spec.Limited.NominalConcurrencyShares = &shares
		_, err = pls.Update(ctx, pl, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("set the nominalConcurrencyShares of %s to %d: %w", Name, shares, err)
	}
	return nil
}

// applied waits, up to ten seconds, until the server's APF controller (which reads the objects
// through informers) has applied a setting of the priority level: until its seats are known and
// no longer before, the seats of the setting before. It returns them ("" if never known).
func applied(ctx context.Context, cs kubernetes.Interface, before string) string {
	seats := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if seats = nominalSeats(ctx, cs); seats != "" && seats != before {
			break
		}
	}
	return seats
}

// configure puts the lab's user in a priority level of its own: shares, no
// lending or borrowing, one queue of QueueLength, and lets it read ConfigMaps.
func configure(ctx context.Context, cs kubernetes.Interface, queueLength, shares int32) error {
	zero := int32(0)
	pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: Name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares, LendablePercent: &zero, BorrowingLimitPercent: &zero,
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: queueLength}}}}}
	if _, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, pl, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create PriorityLevelConfiguration %s: %w", Name, err)
	}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: Name},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: Name},
			MatchingPrecedence:  500, // before global-default (9900), which every authenticated user matches
			DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: Name}}},
				ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}}}}
	if _, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create FlowSchema %s: %w", Name, err)
	}
	// Not ClusterRole view: it is an aggregated role, filled by kube-controller-manager, which
	// envtest does not run.
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: Name},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ClusterRole %s: %w", Name, err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: Name}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("let group %s read: %w", Name, err)
	}
	return nil
}

// nominalSeats reads the priority level's concurrency limit from the server's metrics.
func nominalSeats(ctx context.Context, cs kubernetes.Interface) string {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "apiserver_flowcontrol_nominal_limit_seats{") && strings.Contains(l, `priority_level="`+Name+`"`) {
			return l[strings.LastIndexByte(l, ' ')+1:]
		}
	}
	return ""
}

// startLab starts one lab with K informers on the user's kubeconfig, waits for them to sync,
// stops it and reads what kube-apiserver logged of its requests meanwhile.
func startLab(ctx context.Context, o Options, bin, kubeconfig, ns, mode, label, logPath, runDir string) (Mode, error) {
	r := Mode{WatchList: mode}
	from, err := os.Stat(logPath)
	if err != nil {
		return r, err
	}
	name := "lab-" + label
	args := []string{"-kubeconfig", kubeconfig, "-records", "-", "-name", labModule, "-namespace", ns,
		"-informers", fmt.Sprint(o.Informers), "-watch-list", mode, "-quiet"}
	start := time.Now()
	p, err := labproc.StartSetups(labModule, bin, args, filepath.Join(runDir, name+".jsonl"), filepath.Join(runDir, name+".stderr"))
	if err != nil {
		return r, err
	}
	tags := record.InformerTags(o.Informers)
	for deadline := start.Add(o.SyncTimeout); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		if p.Synced(tags...) {
			r.Synced, r.SyncTime = true, time.Since(start)
			break
		}
		if why := p.Exited(); why != "" {
			return r, fmt.Errorf("%s: %s", name, why)
		}
	}
	if err := p.Stop(15 * time.Second); err != nil {
		return r, fmt.Errorf("stop %s: %w", name, err)
	}
	// A watch's line is written when it ends: after the lab's connections closed.
	time.Sleep(time.Second)
	f, err := os.Open(logPath)
	if err != nil {
		return r, err
	}
	defer f.Close()
	if _, err := f.Seek(from.Size(), io.SeekStart); err != nil {
		return r, err
	}
	r.Requests, err = ParseLog(f, "/api/v1/namespaces/"+ns+"/configmaps")
	return r, err
}
