package lab

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"informer-lab/lab/wire"
	"informer-lab/record"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// directList makes the call a controller makes outside its informers: one typed
// CoreV1().ConfigMaps(ns).List(), through its own logged client tagged record.TagDirect.
//
// It is not an informer's handshake. With the WatchListClient gate on, client-go v0.31–v0.33's
// typed List first tries a streaming list (rest.Request.WatchList) and falls back to a plain
// LIST when that fails; v0.32/v0.33 also refuse an initial-events-end bookmark without the
// kubernetes.io/initial-events-list-blueprint annotation (kubernetes/kubernetes#138167), which
// the reflector never reads. client-go says why it fell back only in a klog warning, so the
// warnings logged during the call are recorded too.
func directList(ctx context.Context, base *rest.Config, ns string, out *record.Writer) {
	cfg := rest.CopyConfig(base)
	cfg.Wrap(wire.Wrap(record.TagDirect, out))
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		out.Setup(record.TagDirect, record.StepDirect, "failed", err.Error())
		return
	}
	stop := recordKlog(out)
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	stop()
	if err != nil {
		out.Setup(record.TagDirect, record.StepDirect, "failed", err.Error())
		return
	}
	out.Setup(record.TagDirect, record.StepDirect, fmt.Sprintf("returned %d items, resourceVersion=%s", len(list.Items), list.ResourceVersion), "")
}

// recordKlog sends klog's output to out, one SETUP klog record per line (the klog header cut),
// until the returned func puts it back on stderr. klog is process-wide: a line the informers log
// meanwhile would be recorded too, tagged as the direct call's; they are idle by then (synced).
func recordKlog(out *record.Writer) (stop func()) {
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if _, msg, ok := strings.Cut(line, "] "); ok { // "W1129 21:50:00.123456   42 type.go:185] msg"
				line = msg
			}
			out.Setup(record.TagDirect, record.StepWarning, line, "")
		}
		io.Copy(io.Discard, r) // a line longer than 1 MiB: drop the rest rather than block klog
	}()
	// klog writes a message to the output of its own severity and of every lower one: the INFO
	// output alone gets each line once.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	klog.SetOutputBySeverity("INFO", w)
	return func() {
		klog.Flush()
		klog.LogToStderr(true)
		klog.SetOutput(io.Discard)
		w.Close()
		<-done
	}
}
