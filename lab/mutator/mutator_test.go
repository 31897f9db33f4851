package mutator

import "testing"

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
	next := Cycle()
	want := []Step{{Create, "lab-cm-1", 1}, {Update, "lab-cm-1", 2}, {Update, "lab-cm-1", 3}, {Delete, "lab-cm-1", 4}, {Create, "lab-cm-2", 5}}
	for i, w := range want {
		if got := next(); got != w {
			t.Errorf("step %d: got %+v, want %+v", i, got, w)
		}
	}
}
