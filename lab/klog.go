package lab

import (
	"bufio"
	"flag"
	"io"
	"strconv"
	"strings"
	"sync"

	"informer-lab/record"

	"k8s.io/klog/v2"
)

// klogRecorder records what client-go logs through klog as SETUP klog records, apart from the
// lab's own lines. client-go gives its reasons only there: why a streaming list fell back to
// LIST, why a watch was retried. From v0.34 the reflector logs its fallback reason at V(4) only
// (docs/upstream.md), invisible at klog's default verbosity, so the lab raises it.
type klogRecorder struct {
	mu    sync.Mutex
	owner string // the tag of the call under way that klog lines are attributed to ("" for none)
	stop  func()
	once  sync.Once
}

// recordKlog sends klog's output, at verbosity v, to out until the returned recorder stops.
// klog is process-wide: a line is attributed to whichever call set itself as owner (the direct
// List()), or to no tag; a line that an informer's reflector logged (klog's header names the
// file) never to the owner. The file:line goes in the record's Detail.
func recordKlog(out *record.Writer, v int) *klogRecorder {
	k := &klogRecorder{}
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	fs.Set("v", strconv.Itoa(v))
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			msg, file := splitKlogHeader(sc.Text())
			k.mu.Lock()
			tag := k.owner
			k.mu.Unlock()
			if name, _, _ := strings.Cut(file, ":"); informerFiles[name] {
				tag = "" // logged by an informer's reflector, whoever else was busy meanwhile
			}
			out.Setup(tag, record.StepKlog, msg, file)
		}
		io.Copy(io.Discard, r) // a line longer than 1 MiB: drop the rest rather than block klog
	}()
	// klog writes a message to the output of its own severity and of every lower one: the INFO
	// output alone gets each line once.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	klog.SetOutputBySeverity("INFO", w)
	k.stop = func() {
		klog.Flush()
		klog.SetOutputBySeverity("INFO", io.Discard)
		w.Close()
		<-done
	}
	return k
}

// informerFiles are the client-go files whose klog lines are an informer's: the reflector and
// the trace it keeps of its list (k8s.io/utils/trace).
var informerFiles = map[string]bool{"reflector.go": true, "trace.go": true}

// splitKlogHeader cuts klog's header off a line and returns the message and the file:line
// that logged it: "W1129 21:50:00.123456   42 type.go:185] msg" → "msg", "type.go:185".
// A line without a header (a continuation) is all message.
func splitKlogHeader(line string) (msg, file string) {
	head, msg, ok := strings.Cut(line, "] ")
	if !ok {
		return line, ""
	}
	f := strings.Fields(head)
	if len(f) < 4 {
		return line, ""
	}
	return msg, f[len(f)-1]
}

// own attributes klog's lines to tag until the returned func is called.
func (k *klogRecorder) own(tag string) (release func()) {
	k.mu.Lock()
	k.owner = tag
	k.mu.Unlock()
	return func() {
		klog.Flush() // the call's lines are its own, not whoever comes next
		k.mu.Lock()
		k.owner = ""
		k.mu.Unlock()
	}
}

// Stop flushes klog, waits until every line it had is recorded, and discards what klog logs
// from then on. Stop comes once the informers are shut down, and Shutdown does not wait for
// every goroutine client-go started: v0.32's reflector lists in a goroutine of its own, with
// context.Background(), and returns on stop without it (reflector.go). What such a goroutine
// logs is about an informer already stopped; on stderr it would follow the lab's last line.
// Calls after the first do nothing.
func (k *klogRecorder) Stop() { k.once.Do(k.stop) }
