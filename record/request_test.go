package record

import "testing"

func TestClassifyRequest(t *testing.T) {
	for _, tt := range []struct {
		path, query string
		want        Request
	}{
		{"/api/v1/configmaps", "limit=500&resourceVersion=0", Request{Resource: "configmaps", Collection: true}},
		{"/api/v1/namespaces/default/configmaps", "watch=true&allowWatchBookmarks=true", Request{Resource: "configmaps", Collection: true, Watch: true}},
		{"/api/v1/configmaps", "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", Request{Resource: "configmaps", Collection: true, Watch: true, Stream: true}},
		// As the apiserver reads a boolean: "0" and "false" are false, anything else is true.
		{"/api/v1/configmaps", "watch=False", Request{Resource: "configmaps", Collection: true}},
		{"/api/v1/configmaps", "watch=0&sendInitialEvents=true", Request{Resource: "configmaps", Collection: true}},
		{"/api/v1/configmaps", "watch=", Request{Resource: "configmaps", Collection: true, Watch: true}},
		{"/api/v1/watch/namespaces/default/configmaps", "", Request{Resource: "configmaps", Collection: true, Watch: true}},
		{"/apis/informer-lab.dev/v1/watch/widgets", "sendInitialEvents=true", Request{Resource: "informer-lab.dev/widgets", Collection: true, Watch: true, Stream: true}},
		{"/api/v1/namespaces/default/configmaps/lab-cm-1", "", Request{Resource: "configmaps"}},
		{"/api/v1/namespaces/default/pods/p/log", "", Request{Resource: "pods/log"}},
		{"/api/v1/namespaces/default", "", Request{Resource: "namespaces"}},
		{"/apis/apps/v1/deployments", "", Request{Resource: "apps/deployments", Collection: true}},
		// client-go's inconsistency detector reading the rv an informer synced at, from etcd.
		{"/api/v1/namespaces/ns/configmaps", "resourceVersion=704&resourceVersionMatch=Exact", Request{Resource: "configmaps", Collection: true, Exact: true}},
		{"/version", "", Request{Resource: TagNoResource}},
		{"/apis", "", Request{Resource: TagNoResource}},
	} {
		if got := ClassifyRequest(tt.path, tt.query); got != tt.want {
			t.Errorf("ClassifyRequest(%s?%s) = %+v, want %+v", tt.path, tt.query, got, tt.want)
		}
	}
}
