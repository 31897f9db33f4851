// Package aggregated runs a real aggregated apiserver, k8s.io/sample-apiserver built from the Go
// module proxy, beside a control plane, and registers it with kube-apiserver's aggregator: its
// own etcd prefix on the control plane's etcd, delegated authentication and authorization
// against kube-apiserver, and an APIService whose Service (of type ExternalName) names the
// local address, so the aggregator reaches a process without a node network.
package aggregated

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"informer-lab/lab/controlplane"
	"informer-lab/lab/process"
	"informer-lab/lab/reaper"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Group is what sample-apiserver serves: flunders and fischers of wardle.example.com.
const Group = record.AggregatedGroup

// GroupVersions are the versions of Group each sample-apiserver is registered for, one per
// server (the aggregator sends one group version to one APIService; each sample-apiserver
// serves both): the first for envtestbin.SampleAPIServers' first, and so on.
var GroupVersions = []string{"v1alpha1", "v1beta1"}

// APIServices are kube-aggregator's registrations: which server serves which group version.
var APIServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// NameFor is the name of the server of sample-apiserver version: "sample-v0-33-5".
func NameFor(version string) string { return "sample-v" + strings.ReplaceAll(version, ".", "-") }

// Server is a running sample-apiserver, registered for Version of Group.
type Server struct {
	Version string // the group version it is registered for, e.g. "v1alpha1"
	Port    int
	proc    *process.Process
	dir     string // its kubeconfig, certificates and log
	dyn     dynamic.Interface
	cs      kubernetes.Interface
	name    string
}

// Start runs binary (a sample-apiserver) against cp's etcd under its own prefix, registers it
// for version of Group (APIService, Service) and waits until the aggregator has it available.
// name tells it apart (its etcd prefix, Service and process).
func Start(ctx context.Context, cp *controlplane.ControlPlane, binary, name, version string) (s *Server, err error) {
	etcd, err := cp.EtcdURL()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "informer-lab-aggregated-")
	if err != nil {
		return nil, err
	}
	if err := reaper.WatchDir(dir, "sample-apiserver's kubeconfig and certificates"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s = &Server{Version: version, dir: dir, name: name}
	defer func() {
		if err != nil {
			log := s.logTail() // before Stop removes it
			s.Stop()
			err = fmt.Errorf("aggregated apiserver %s: %w (its log: %s)", name, err, log)
		}
	}()
	kc, err := cp.AdminKubeconfig("aggregated-" + name)
	if err != nil {
		return s, err
	}
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, kc, 0o600); err != nil {
		return s, err
	}
	if s.Port, err = controlplane.FreePort(); err != nil {
		return s, err
	}
	cmd := exec.Command(binary,
		"--etcd-servers="+etcd, "--etcd-prefix=/informer-lab-aggregated/"+name,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(s.Port), "--cert-dir="+filepath.Join(dir, "certs"),
		"--kubeconfig="+kcPath, "--authentication-kubeconfig="+kcPath, "--authorization-kubeconfig="+kcPath)
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		return s, err
	}
	defer log.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = log, log
	if s.proc, err = process.Start(cmd, process.Options{What: "sample-apiserver " + name, StopSignal: syscall.SIGTERM}); err != nil {
		return s, err
	}
	if err := s.waitReady(ctx); err != nil {
		return s, err
	}
	if s.cs, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return s, err
	}
	if s.dyn, err = dynamic.NewForConfig(cp.Config); err != nil {
		return s, err
	}
	return s, s.register(ctx)
}

// waitReady waits until the server answers /readyz (always allowed without credentials).
func (s *Server) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", s.Port))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.proc.Done():
			_, err := s.proc.Exited()
			return fmt.Errorf("exited before it was ready: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("not ready within 2m")
		}
	}
}

// register makes the Service and the APIService, and waits until the aggregator says the
// APIService is available.
func (s *Server) register(ctx context.Context) error {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: s.service(), Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if _, err := s.cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create Service %s: %w", svc.Name, err)
	}
	as := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": s.Version + "." + Group},
		"spec": map[string]any{
			"group": Group, "version": s.Version, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"namespace": "default", "name": s.service(), "port": int64(s.Port)},
		},
	}}
	if _, err := s.dyn.Resource(APIServices).Create(ctx, as, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create APIService %s: %w", as.GetName(), err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := s.dyn.Resource(APIServices).Get(ctx, as.GetName(), metav1.GetOptions{})
		if err == nil && available(got) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("APIService %s not available within 2m: %v", as.GetName(), conditions(got))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (s *Server) service() string { return "aggregated-" + s.name }

func available(as *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(as.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func conditions(as *unstructured.Unstructured) any {
	if as == nil {
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(as.Object, "status", "conditions")
	return conds
}

// Stop unregisters the server (so that discovery does not fail on it) and stops it.
func (s *Server) Stop() error {
	var errs []error
	if s.dyn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.dyn.Resource(APIServices).Delete(ctx, s.Version+"."+Group, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		cancel()
	}
	if s.proc != nil {
		errs = append(errs, s.proc.Stop(10*time.Second))
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return errors.Join(errs...)
}

// logTail is the end of the server's log, for an error.
func (s *Server) logTail() string {
	const max = 2000
	b, _ := os.ReadFile(filepath.Join(s.dir, "log"))
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(bytes.TrimSpace(b))
}
