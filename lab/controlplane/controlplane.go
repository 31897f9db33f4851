// Package controlplane boots a real etcd + kube-apiserver with controller-runtime's envtest,
// using the binaries the project provisions itself (informer-lab/envtestbin).
package controlplane

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/lab/process"
	"informer-lab/lab/procs"
	"informer-lab/lab/reaper"
	"informer-lab/record"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Options choose the server.
type Options struct {
	Version string // Kubernetes version, e.g. "1.32.13"; empty means envtestbin.DefaultVersion
	// Settings are kube-apiserver's feature gates and flags (record.SplitServerSettings), e.g.
	// "WatchList=false" or "watch-cache=false"; empty leaves its defaults.
	Settings string
	Progress io.Writer // provisioning and boot status
	// Wrap, if set, wraps the transport of the requests Start itself makes (GET /version, the
	// default namespace), so that a caller that logs its wire sees them too.
	Wrap func(http.RoundTripper) http.RoundTripper
	// APIServerFlags are kube-apiserver flags set as given (name without dashes -> value), for a
	// caller that measures the server itself: "v": "3" makes it log one line per request
	// (k8s.io/apiserver pkg/server/httplog), "etcd-count-metric-poll-period" how soon APF learns
	// a resource's object count.
	APIServerFlags map[string]string
	// APIServerLog, if set, receives kube-apiserver's stdout and stderr (its klog lines).
	APIServerLog io.Writer
}

// ControlPlane is a running etcd + kube-apiserver.
type ControlPlane struct {
	Config        *rest.Config // admin credentials (client certificate)
	ServerVersion string       // what the apiserver's /version reports
	Assets        string       // where the binaries came from
	env           *envtest.Environment
	restarted     *process.Process // a kube-apiserver started again after KillAPIServer; ours to stop
	restartArgs   []string         // the killed kube-apiserver's command line
	peers         []*Peer          // second kube-apiservers on its etcd (StartPeer)
	tmp           string           // etcd's data and kube-apiserver's certificates
}

// Start provisions the binaries if needed (building them the first time), boots etcd and
// kube-apiserver, hands both to this process's reaper (so that they die with it, whatever kills
// it), and makes sure namespace default exists.
func Start(ctx context.Context, opts Options) (cp *ControlPlane, err error) {
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Version == "" {
		opts.Version = envtestbin.DefaultVersion
	}
	dir, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: opts.Version, Progress: opts.Progress})
	if err != nil {
		return nil, err
	}
	gates, flags, err := record.SplitServerSettings(opts.Settings)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver settings: %w", err)
	}
	tmp, err := ownDir()
	if err != nil {
		return nil, err
	}
	env := environment(dir, tmp, gates, flags)
	api := env.ControlPlane.GetAPIServer()
	for name, value := range opts.APIServerFlags {
		api.Configure().Set(name, value)
	}
	if opts.APIServerLog != nil {
		api.Out, api.Err = opts.APIServerLog, opts.APIServerLog
	}
	if err := frontProxy(env.ControlPlane.GetAPIServer(), filepath.Join(tmp, certDir)); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	start := time.Now()
	fmt.Fprintf(opts.Progress, "booting etcd + kube-apiserver %s (binaries: %s)\n", opts.Version, dir)
	reaping := startReaping(map[string]string{env.ControlPlane.Etcd.Path: "etcd", env.ControlPlane.APIServer.Path: "kube-apiserver"})
	cfg, err := env.Start()
	reaped := reaping()
	if err != nil {
		env.Stop()
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("start envtest (etcd + kube-apiserver from %s): %w", dir, err)
	}
	started := &ControlPlane{Config: cfg, Assets: dir, env: env, tmp: tmp}
	defer func() {
		if err != nil { // any failure below leaves nothing running (cp is nil by then)
			started.Stop()
		}
	}()
	cp = started
	if reaped != nil {
		return nil, reaped
	}
	// envtest makes this one itself, in Start, always.
	if err := reaper.WatchDir(env.WebhookInstallOptions.LocalServingCertDir, "envtest's serving certificates"); err != nil {
		return nil, err
	}
	own := rest.CopyConfig(cfg)
	if opts.Wrap != nil {
		own.Wrap(opts.Wrap)
	}
	cs, err := kubernetes.NewForConfig(own)
	if err != nil {
		return nil, err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("read server version: %w", err)
	}
	cp.ServerVersion = v.GitVersion
	if err := EnsureNamespace(ctx, cs, "default"); err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.Progress, "etcd + kube-apiserver %s up in %s (binaries: %s)\n", cp.ServerVersion, time.Since(start).Round(time.Millisecond), dir)
	return cp, nil
}

// ownDir makes the directory for etcd's data and kube-apiserver's certificates (client keys
// among them): ours, handed to the reaper, so that it goes if this process is killed; envtest's
// own temporary directories would stay behind.
func ownDir() (string, error) {
	tmp, err := os.MkdirTemp("", "informer-lab-envtest-")
	if err == nil {
		err = os.Mkdir(filepath.Join(tmp, certDir), 0o700) // etcd makes its own
	}
	if err != nil {
		return "", fmt.Errorf("make a directory for etcd and kube-apiserver: %w", err)
	}
	if err := reaper.WatchDir(tmp, "etcd's data and kube-apiserver's certificates"); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

// The subdirectories of ownDir's.
const (
	certDir = "kube-apiserver"
	dataDir = "etcd"
)

// environment is envtest's description of a control plane from the binaries in dir, its
// files in tmp, with kube-apiserver's feature gates and flags (each "" for its defaults).
func environment(dir, tmp, gates, flags string) *envtest.Environment {
	// envtest logs through controller-runtime's logger; unset, it prints a warning with a
	// stack trace after 30 s. Its messages say nothing the Progress lines do not.
	ctrllog.SetLogger(logr.Discard())
	// envtest gives kube-apiserver 20 s to become healthy, then kills it and starts another,
	// five times. On a loaded 2-core machine (make test boots a dozen at once) a boot can take
	// longer, and every retry starts over and loads the machine more: wait instead.
	env := &envtest.Environment{BinaryAssetsDirectory: dir, ControlPlaneStartTimeout: 2 * time.Minute}
	api := env.ControlPlane.GetAPIServer()
	// Both binaries are taken from dir; envtest would otherwise prefer KUBEBUILDER_ASSETS,
	// which envtestbin.Lookup has already honoured.
	api.Path = dir + "/kube-apiserver"
	api.CertDir = filepath.Join(tmp, certDir)
	env.ControlPlane.Etcd = &envtest.Etcd{Path: dir + "/etcd", DataDir: filepath.Join(tmp, dataDir)}
	if gates != "" {
		api.Configure().Set("feature-gates", gates)
	}
	for _, flag := range strings.Split(flags, ",") {
		name, value, ok := strings.Cut(flag, "=")
		if f, _ := record.ServerFlagOf(name); ok && !f.Beside { // a server beside it is the caller's to start
			api.Configure().Set(name, value)
		}
	}
	return env
}

// Stop kills kube-apiserver and etcd and removes their temporary directories.
func (cp *ControlPlane) Stop() error {
	if cp == nil || cp.env == nil {
		return nil
	}
	env := cp.env
	cp.env = nil
	cp.stopPeers()
	cp.stopRestarted()
	err := env.Stop()
	if rmErr := os.RemoveAll(cp.tmp); err == nil {
		err = rmErr
	}
	return err
}

// AdminKubeconfig returns a kubeconfig for a new system:masters user of this control plane.
func (cp *ControlPlane) AdminKubeconfig(user string) ([]byte, error) {
	return cp.UserKubeconfig(user, "system:masters")
}

// UserKubeconfig returns a kubeconfig for a new user of this control plane, in groups (none: an
// authenticated user and nothing more), with a client certificate envtest signs for it (its
// common name is user). kube-apiserver authorizes it with RBAC: envtest starts it with
// --authorization-mode=RBAC (sigs.k8s.io/controller-runtime@v0.20.4
// pkg/internal/testing/controlplane/apiserver.go, (*APIServer).defaultArgs), so such a user may do
// only what a binding gives it, and what every authenticated user may (discovery, /version,
// SelfSubjectAccessReviews).
func (cp *ControlPlane) UserKubeconfig(user string, groups ...string) ([]byte, error) {
	u, err := cp.env.ControlPlane.AddUser(envtest.User{Name: user, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", user, err)
	}
	return u.KubeConfig()
}

// EnsureNamespace creates namespace ns unless it exists: a bare apiserver without its
// controllers may not have created it yet.
func EnsureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

// APIServerPID returns the process id of this control plane's kube-apiserver, found by its
// binary and its --secure-port (envtest keeps its process handle private). A benchmark reads
// the apiserver's memory with it.
func (cp *ControlPlane) APIServerPID() (int, error) {
	if cp == nil || cp.env == nil {
		return 0, fmt.Errorf("control plane not running")
	}
	api := cp.env.ControlPlane.APIServer
	return procs.FindOne(api.Path, "--secure-port="+api.SecureServing.Port)
}
