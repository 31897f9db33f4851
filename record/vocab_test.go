package record

import (
	"strings"
	"testing"
)

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/default/configmaps":                  "configmaps",
		"/api/v1/configmaps":                                     "configmaps",
		"/api/v1/namespaces/ns/configmaps/cm-1":                  "configmaps",
		"/api/v1/namespaces/ns/pods/p/log":                       "pods/log",
		"/api/v1/namespaces/ns":                                  "namespaces",
		"/api/v1/namespaces":                                     "namespaces",
		"/apis/apps/v1/namespaces/ns/deployments":                "apps/deployments",
		"/apis/informer-lab.dev/v1/widgets":                      "informer-lab.dev/widgets",
		"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews": "authorization.k8s.io/selfsubjectaccessreviews",
		"/api":          TagNoResource,
		"/api/v1":       TagNoResource,
		"/apis":         TagNoResource,
		"/apis/apps/v1": TagNoResource,
		"/version":      TagNoResource,
		"/openapi/v3":   TagNoResource,
	} {
		if got := ResourceOf(path); got != want {
			t.Errorf("ResourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestSplitServerSettings(t *testing.T) {
	gates, flags, err := SplitServerSettings("WatchList=true, watch-cache=false,WatchListCompression=false")
	if err != nil || gates != "WatchList=true,WatchListCompression=false" || flags != "watch-cache=false" {
		t.Errorf("SplitServerSettings = %q, %q, %v; want the gates and the flag apart", gates, flags, err)
	}
	for _, bad := range []string{"etcd-servers=http://x", "watch-cache", "=false", "WatchList="} {
		if _, _, err := SplitServerSettings(bad); err == nil {
			t.Errorf("SplitServerSettings(%q): no error, want one naming what a server may set", bad)
		}
	}
}

// The informers' tags are the letters their log lines carry: A for the first.
func TestInformerTags(t *testing.T) {
	if got := strings.Join(InformerTags(3), ","); got != "A,B,C" || InformerTag(25) != "Z" || len(InformerTags(0)) != 0 {
		t.Errorf("InformerTags(3) = %s, InformerTag(25) = %s", got, InformerTag(25))
	}
}
