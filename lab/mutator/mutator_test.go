package mutator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"informer-lab/record"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/fake"
)

func TestScriptCoversEveryWriteAndIsSeeded(t *testing.T) {
	for _, seed := range []int64{1, 2, 42} {
		for _, min := range []int{1, 2, 5} {
			s := Script(seed, min)
			count := map[Op]int{}
			live := map[string]bool{}
			for _, st := range s {
				count[st.Op]++
				switch st.Op {
				case Create:
					if live[st.Name] {
						t.Fatalf("seed %d: create of live %s", seed, st.Name)
					}
					live[st.Name] = true
				case Update, Delete:
					if !live[st.Name] {
						t.Fatalf("seed %d: %s of %s, which does not exist", seed, st.Op, st.Name)
					}
					if st.Op == Delete {
						delete(live, st.Name)
					}
				}
			}
			for _, op := range []Op{Create, Update, Delete} {
				if count[op] < min {
					t.Errorf("seed %d min %d: %d %s writes, want at least %d", seed, min, count[op], op, min)
				}
			}
			if len(live) != 0 {
				t.Errorf("seed %d: script leaves %v behind", seed, live)
			}
			again := Script(seed, min)
			for i := range s {
				if s[i] != again[i] {
					t.Fatalf("seed %d: two scripts differ at %d: %v vs %v", seed, i, s[i], again[i])
				}
			}
		}
	}
}

func TestCycle(t *testing.T) {
	want := []Step{{Create, "lab-cm-1", 1}, {Update, "lab-cm-1", 2}, {Update, "lab-cm-1", 3}, {Delete, "lab-cm-1", 4}, {Create, "lab-cm-2", 5}}
	var got []Step
	for s := range Cycle() {
		if got = append(got, s); len(got) == len(want) {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// Play calls before, writes, and hands wrote the write's record, step after step; an error from
// wrote ends it, and so does ctx while it waits.
func TestPlay(t *testing.T) {
	target := &Target{GVR: ConfigMaps, kind: "ConfigMap", field: []string{"data"}, dyn: fake.NewSimpleDynamicClient(runtime.NewScheme())}
	steps := []Step{{Create, "a", 1}, {Update, "a", 2}, {Create, "b", 3}}
	var got []string
	before := func(i int, s Step) error { got = append(got, fmt.Sprintf("before %d %s", i, s.Name)); return nil }
	stop := errors.New("stop")
	wrote := func(r record.Record, err error) error {
		got = append(got, fmt.Sprintf("wrote %s %s/%s tick=%d err=%v", r.Event, r.Namespace, r.Name, r.Tick, err))
		if r.Name == "b" {
			return stop
		}
		return nil
	}
	err := Play(context.Background(), target, "ns", slices.Values(append(steps, Step{Delete, "a", 4})), time.Millisecond, before, wrote)
	want := []string{"before 0 a", "wrote CREATE ns/a tick=1 err=<nil>", "before 1 a", "wrote UPDATE ns/a tick=2 err=<nil>",
		"before 2 b", "wrote CREATE ns/b tick=3 err=<nil>"}
	if !errors.Is(err, stop) || !slices.Equal(got, want) {
		t.Errorf("got %v and\n  %s\nwant %v and\n  %s", err, strings.Join(got, "\n  "), stop, strings.Join(want, "\n  "))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Play(ctx, target, "ns", Cycle(), time.Hour, nil, wrote); err != context.Canceled {
		t.Errorf("ctx ended while Play waits: got %v, want %v", err, context.Canceled)
	}
}
