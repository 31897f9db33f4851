// Package standin makes a control plane started apart from the harness stand in for a user's
// cluster in tests: users that are neither admins nor anything but what RBAC binds them to
// (kube-apiserver runs with --authorization-mode=RBAC, see controlplane.UserKubeconfig), each
// reached through an exec plugin, the way a user's kubeconfig often authenticates.
package standin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"informer-lab/harness/internal/cluster"
	"informer-lab/lab/controlplane"
	"informer-lab/record"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Grant binds user, by a ClusterRole and its binding both named after the user, to perms.
func Grant(t *testing.T, admin kubernetes.Interface, user string, perms []cluster.Permission) {
	t.Helper()
	var rules []rbacv1.PolicyRule
	for _, p := range perms {
		i := slices.IndexFunc(rules, func(r rbacv1.PolicyRule) bool { return r.Resources[0] == p.Resource })
		if i < 0 {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{p.Resource}})
			i = len(rules) - 1
		}
		rules[i].Verbs = append(rules[i].Verbs, p.Verb)
	}
	ctx := t.Context()
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Kubeconfig writes a kubeconfig for cp with one context per user, named after it, the first the
// current-context; each user authenticates through an exec plugin, `cat` of an ExecCredential
// holding the client certificate envtest signed for that user.
func Kubeconfig(t *testing.T, cp *controlplane.ControlPlane, users ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := clientcmdapi.NewConfig()
	for _, u := range users {
		raw, err := cp.UserKubeconfig(u)
		if err != nil {
			t.Fatal(err)
		}
		own, err := clientcmd.Load(raw)
		if err != nil {
			t.Fatal(err)
		}
		c := own.Contexts[own.CurrentContext]
		auth := own.AuthInfos[c.AuthInfo]
		cred, err := json.Marshal(clientauthv1.ExecCredential{
			TypeMeta: metav1.TypeMeta{APIVersion: clientauthv1.SchemeGroupVersion.String(), Kind: "ExecCredential"},
			Status:   &clientauthv1.ExecCredentialStatus{ClientCertificateData: string(auth.ClientCertificateData), ClientKeyData: string(auth.ClientKeyData)},
		})
		if err != nil {
			t.Fatal(err)
		}
		credPath := filepath.Join(dir, u+".credential.json")
		if err := os.WriteFile(credPath, cred, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.Clusters["stand-in"] = own.Clusters[c.Cluster]
		cfg.AuthInfos[u] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: clientauthv1.SchemeGroupVersion.String(), Command: "cat", Args: []string{credPath},
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}}
		cfg.Contexts[u] = &clientcmdapi.Context{Cluster: "stand-in", AuthInfo: u}
		if cfg.CurrentContext == "" {
			cfg.CurrentContext = u
		}
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// The stand-in's users: Restricted may exactly what a run needs (cluster.Needs), NoWatch all of
// that but watch, whose refusal a test shows.
const (
	Restricted = "restricted"
	NoWatch    = "restricted-no-watch"
)

// Start starts a control plane with opts as the stand-in cluster (stopped when the test ends),
// grants Restricted and NoWatch their permissions, and returns it with an admin client.
func Start(t *testing.T, opts controlplane.Options) (*controlplane.ControlPlane, kubernetes.Interface) {
	t.Helper()
	cp, err := controlplane.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Stop() })
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	needs := cluster.Needs("any")
	Grant(t, admin, Restricted, needs)
	Grant(t, admin, NoWatch, slices.DeleteFunc(slices.Clone(needs), func(p cluster.Permission) bool { return p.Verb == "watch" }))
	return cp, admin
}

// Namespaces are the names of every namespace a run made on the stand-in (labelled
// record.RunLabel), deleted or not.
func Namespaces(t *testing.T, admin kubernetes.Interface) []string {
	t.Helper()
	l, err := admin.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{LabelSelector: record.RunLabel})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range l.Items {
		names = append(names, ns.Name)
	}
	return names
}

// Left says what runs left on the stand-in, "" for nothing: a run namespace not being deleted
// (envtest has no namespace controller, so a deleted one stays Terminating), or one with a
// ConfigMap in it, or a ConfigMap anywhere that carries the run label.
func Left(t *testing.T, admin kubernetes.Interface) string {
	t.Helper()
	ctx := t.Context()
	var left []string
	for _, name := range Namespaces(t, admin) {
		ns, err := admin.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if !strings.HasPrefix(name, cluster.NamespacePrefix) || err != nil && !apierrors.IsNotFound(err) || err == nil && ns.DeletionTimestamp == nil {
			left = append(left, fmt.Sprintf("namespace %s not deleted (%v)", name, err))
		}
		if cms, err := admin.CoreV1().ConfigMaps(name).List(ctx, metav1.ListOptions{}); err != nil || len(cms.Items) > 0 {
			left = append(left, fmt.Sprintf("%d ConfigMaps in %s (%v)", len(cms.Items), name, err))
		}
	}
	if cms, err := admin.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: record.RunLabel}); err != nil || len(cms.Items) > 0 {
		left = append(left, fmt.Sprintf("%d ConfigMaps labelled %s (%v)", len(cms.Items), record.RunLabel, err))
	}
	return strings.Join(left, "; ")
}
