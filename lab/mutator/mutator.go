// Package mutator is the single writer: it creates, patches and deletes ConfigMaps, so that
// every watcher has the same writes to report.
package mutator

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"

	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Op is a write: CREATE, UPDATE (a merge patch of data.tick) or DELETE.
type Op string

const (
	Create Op = "CREATE"
	Update Op = "UPDATE"
	Delete Op = "DELETE"
)

// Step is one write of a scenario.
type Step struct {
	Op   Op
	Name string
	Tick int
}

// Cycle returns the standalone lab's endless sequence, one step per call: create lab-cm-N,
// update it twice, delete it, go on with lab-cm-N+1. The tick counts every write.
func Cycle() func() Step {
	n, tick, phase := 1, 0, 0
	return func() Step {
		tick++
		name := fmt.Sprintf("lab-cm-%d", n)
		var op Op
		switch phase {
		case 0:
			op = Create
		case 3:
			op = Delete
		default:
			op = Update
		}
		phase++
		if phase == 4 {
			phase, n = 0, n+1
		}
		return Step{Op: op, Name: name, Tick: tick}
	}
}

// Script returns a fixed scenario for a seed: writes over a few ConfigMaps in an order the
// seed decides, with at least min writes of each kind. The same seed gives the same script.
func Script(seed int64, min int) []Step {
	rng := rand.New(rand.NewSource(seed))
	var steps []Step
	live := []string{}
	next, tick := 1, 0
	count := map[Op]int{}
	for count[Create] < min || count[Update] < min || count[Delete] < min || len(live) > 0 {
		tick++
		var op Op
		switch {
		case len(live) == 0:
			op = Create
		case count[Create] < min && rng.Intn(3) == 0:
			op = Create
		case count[Update] < min || rng.Intn(2) == 0:
			op = Update
		default:
			op = Delete
		}
		if count[Create] >= min && count[Update] >= min && len(live) > 0 && op == Create {
			op = Delete
		}
		var name string
		switch op {
		case Create:
			name = fmt.Sprintf("lab-cm-%d", next)
			next++
			live = append(live, name)
		case Update:
			name = live[rng.Intn(len(live))]
		case Delete:
			i := rng.Intn(len(live))
			name = live[i]
			live = append(live[:i], live[i+1:]...)
		}
		count[op]++
		steps = append(steps, Step{Op: op, Name: name, Tick: tick})
	}
	return steps
}

// Apply makes one write in namespace ns and returns the resourceVersion the apiserver gave it
// (for a DELETE, the rv of the deletion, which watchers see on their DELETED event).
func Apply(ctx context.Context, cs kubernetes.Interface, ns string, s Step) (string, error) {
	cms := cs.CoreV1().ConfigMaps(ns)
	switch s.Op {
	case Create:
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: map[string]string{"app": "informer-lab"}},
			Data:       map[string]string{"tick": strconv.Itoa(s.Tick)},
		}
		got, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			return "", fmt.Errorf("create %s/%s: %w", ns, s.Name, err)
		}
		return got.ResourceVersion, nil
	case Update:
		patch := fmt.Sprintf(`{"data":{"tick":%q}}`, strconv.Itoa(s.Tick))
		got, err := cms.Patch(ctx, s.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil {
			return "", fmt.Errorf("patch %s/%s: %w", ns, s.Name, err)
		}
		return got.ResourceVersion, nil
	case Delete:
		// The typed client's Delete drops the response body, but the body is the deleted
		// object stamped with the deletion's resourceVersion: the rv watchers see on DELETED.
		obj, err := cs.CoreV1().RESTClient().Delete().Namespace(ns).Resource("configmaps").Name(s.Name).
			Body(&metav1.DeleteOptions{}).Do(ctx).Get()
		if err != nil {
			return "", fmt.Errorf("delete %s/%s: %w", ns, s.Name, err)
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			return cm.ResourceVersion, nil
		}
		return "", nil
	}
	return "", fmt.Errorf("unknown write %q", s.Op)
}

// Record is the MUTATOR record of a write.
func Record(ns string, s Step, rv string, err error) record.Record {
	r := record.Record{Kind: record.Mutator, Tag: record.TagWriter, Event: string(s.Op), Namespace: ns, Name: s.Name, Tick: s.Tick, RV: rv}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}
