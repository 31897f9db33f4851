package controlplane

import (
	"context"
	"encoding/json"
	"informer-lab/lab/lifecycle"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"informer-lab/envtestbin"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// CompactEtcd on real envtest control planes: after it, a LIST at an older resourceVersion
// with resourceVersionMatch=Exact (which the apiserver must answer at exactly that revision)
// fails with 410 Gone, where the same LIST succeeded before. Each server version whose
// binaries are in the store is checked; only the default one is built when missing.
// The tests start etcd and kube-apiserver: this binary is their reaper if it is killed.
func TestMain(m *testing.M) { lifecycle.TestMain(m) }

func TestCompactEtcdReal(t *testing.T) {
	if testing.Short() {
		t.Skip("boots envtest")
	}
	for _, v := range []string{envtestbin.DefaultVersion, "1.35.4", "1.37.2"} {
		t.Run(v, func(t *testing.T) {
			if v != envtestbin.DefaultVersion {
				if os.Getenv("KUBEBUILDER_ASSETS") != "" {
					t.Skipf("KUBEBUILDER_ASSETS is set: it would be used instead of %s", v)
				}
				if dir := envtestbin.StoreDir(envtestbin.Options{Version: v}); !hasBinaries(dir) {
					t.Skipf("kube-apiserver and etcd %s are not in %s (make envtest K8S_VERSION=%s)", v, dir, v)
				}
			}
			compactReal(t, v)
		})
	}
}

func hasBinaries(dir string) bool {
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if st, err := os.Stat(dir + "/" + b); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

func compactReal(t *testing.T, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	cp, err := Start(ctx, Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	if !strings.HasPrefix(cp.ServerVersion, "v"+version) {
		t.Skipf("asked for %s, the server reports %s (KUBEBUILDER_ASSETS?)", version, cp.ServerVersion)
	}
	t.Logf("kube-apiserver %s up in %s", cp.ServerVersion, time.Since(start).Round(time.Millisecond))
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "compact-probe"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldRV := cm.ResourceVersion
	exact := metav1.ListOptions{ResourceVersion: oldRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	if l, err := cms.List(ctx, exact); err != nil {
		t.Fatalf("before compaction, LIST resourceVersion=%s&resourceVersionMatch=Exact: %v", oldRV, err)
	} else if l.ResourceVersion != oldRV || len(l.Items) != 1 {
		t.Fatalf("before compaction, LIST at exactly %s: got rv %s with %d items, want rv %s with the probe", oldRV, l.ResourceVersion, len(l.Items), oldRV)
	}
	var last int64
	for i := 1; i <= 3; i++ {
		cm.Data["n"] = strconv.Itoa(i)
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		last, _ = strconv.ParseInt(cm.ResourceVersion, 10, 64)
	}

	begin := time.Now()
	rev, err := cp.CompactEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CompactEtcd: compacted at revision %d in %s (probe created at rv %s, last update rv %d)", rev, time.Since(begin).Round(time.Microsecond), oldRV, last)
	if rev < last {
		t.Errorf("compacted at revision %d, before the last write (rv %d)", rev, last)
	}

	// The apiserver may serve an Exact LIST from its watch cache's snapshots (1.34+,
	// ListFromCacheSnapshot) until it learns of the compaction: wait for the 410, and say how
	// long it took.
	begin = time.Now()
	deadline := begin.Add(45 * time.Second)
	for {
		_, err = cms.List(ctx, exact)
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			t.Logf("after compaction, LIST resourceVersion=%s&resourceVersionMatch=Exact: %s: %v (after %s)", oldRV, apierrors.ReasonForError(err), err, time.Since(begin).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after compaction, LIST resourceVersion=%s&resourceVersionMatch=Exact still answers %v after %s, want 410 Gone", oldRV, errOrOK(err), time.Since(begin).Round(time.Second))
		}
		time.Sleep(250 * time.Millisecond)
	}
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != http.StatusGone {
		t.Errorf("want HTTP 410, got %#v", err)
	}
	// The present is still readable.
	if l, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Errorf("after compaction, a plain LIST: %v (items %v)", err, l)
	}
}

func errOrOK(err error) string {
	if err == nil {
		return "200 OK"
	}
	return err.Error()
}

// What CompactEtcd says when etcd's gateway is missing or refuses.
func TestCompactEtcdErrors(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    []string
	}{
		{"no gateway", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			[]string{"read current revision", "/v3/kv/range", "404 Not Found", "gateway is not serving", "404 page not found"}},
		{"no revision", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"header":{}}`) },
			[]string{"read current revision", "no revision"}},
		{"compaction refused", func(w http.ResponseWriter, r *http.Request) {
			var body map[string]any
			json.NewDecoder(r.Body).Decode(&body)
			switch r.URL.Path {
			case "/v3/kv/range":
				io.WriteString(w, `{"header":{"cluster_id":"1","revision":"42"},"kvs":[{"key":"Y29tcGFjdF9yZXZfa2V5","version":"3","value":"MzA="}],"count":"1"}`)
			case "/v3/kv/txn":
				want := `{"compare":[{"key":"Y29tcGFjdF9yZXZfa2V5","result":"EQUAL","target":"VERSION","version":"3"}],"success":[{"request_put":{"key":"Y29tcGFjdF9yZXZfa2V5","value":"NDI="}}]}`
				if got, _ := json.Marshal(body); string(got) != want {
					t.Errorf("txn request\n%s\nwant\n%s", got, want)
				}
				io.WriteString(w, `{"header":{"revision":"43"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"43"}}}]}`)
			case "/v3/kv/compaction":
				if body["revision"] != "42" || body["physical"] != true {
					t.Errorf("compaction request %v, want revision 42, physical", body)
				}
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":"etcdserver: mvcc: required revision has been compacted","code":11,"message":"etcdserver: mvcc: required revision has been compacted"}`)
			}
		}, []string{"compact etcd at revision 42", "/v3/kv/compaction", "400 Bad Request", "required revision has been compacted"}},
		{"compact_rev_key keeps moving", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v3/kv/range" {
				io.WriteString(w, `{"header":{"revision":"42"}}`)
				return
			}
			io.WriteString(w, `{"header":{"revision":"42"}}`) // succeeded: false is left out
		}, []string{"record revision 42 in compact_rev_key", "kept changing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			_, err := compactEtcd(context.Background(), srv.URL)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := (&ControlPlane{}).CompactEtcd(context.Background()); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("stopped control plane: %v", err)
	}
}
