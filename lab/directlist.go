package lab

import (
	"context"
	"fmt"

	"informer-lab/lab/wire"
	"informer-lab/record"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// directList makes the call a controller makes outside its informers: one typed
// CoreV1().ConfigMaps(ns).List(), through its own logged client tagged record.TagDirect.
//
// It is not an informer's handshake. With the WatchListClient gate on, client-go v0.31–v0.33's
// typed List first tries a streaming list (rest.Request.WatchList) and falls back to a plain
// LIST when that fails; v0.32/v0.33 also refuse an initial-events-end bookmark without the
// kubernetes.io/initial-events-list-blueprint annotation (kubernetes/kubernetes#138167), which
// the reflector never reads. client-go says why it fell back only through klog: the lines it logs
// during the call are recorded with the call's tag.
func directList(ctx context.Context, base *rest.Config, ns string, out *record.Writer, klogs *klogRecorder) {
	cfg := rest.CopyConfig(base)
	cfg.Wrap(wire.Wrap(record.TagDirect, out))
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		out.Setup(record.TagDirect, record.StepDirect, "failed", err.Error())
		return
	}
	release := klogs.own(record.TagDirect)
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	release()
	if err != nil {
		out.Setup(record.TagDirect, record.StepDirect, "failed", err.Error())
		return
	}
	out.Setup(record.TagDirect, record.StepDirect, fmt.Sprintf("returned %d items, resourceVersion=%s", len(list.Items), list.ResourceVersion), "")
}
