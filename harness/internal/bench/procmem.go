package bench

import (
	"informer-lab/lab/procs"

	"fmt"
	"os"
	"sync"
	"time"
)

// ResetHWM sets the process's VmHWM back to its current VmRSS (Linux 4.0 and later: "5" to
// /proc/<pid>/clear_refs), so that VmHWM afterwards is the peak of what follows.
func ResetHWM(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// Sampler reads VmRSS of some processes at a fixed interval and keeps each one's maximum.
type Sampler struct {
	mu       sync.Mutex
	pids     []int
	peak     map[int]int64
	samples  int
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

// StartSampler samples pids every interval until Stop; AddPID adds a process later (a lab
// whose pid is known once it started).
func StartSampler(interval time.Duration, pids ...int) *Sampler {
	s := &Sampler{pids: pids, peak: map[int]int64{}, stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				s.sample()
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

// AddPID samples pid too, from now on.
func (s *Sampler) AddPID(pid int) {
	s.mu.Lock()
	s.pids = append(s.pids, pid)
	s.mu.Unlock()
	s.sample()
}

func (s *Sampler) sample() {
	s.mu.Lock()
	pids := append([]int(nil), s.pids...)
	s.mu.Unlock()
	for _, pid := range pids {
		m, err := procs.ReadMem(pid)
		if err != nil {
			continue // exited: its peak so far stands
		}
		s.mu.Lock()
		if m.RSS > s.peak[pid] {
			s.peak[pid] = m.RSS
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.samples++
	s.mu.Unlock()
}

// Stop takes a last sample and returns each process's peak VmRSS and the number of samples; a
// second call returns them again.
func (s *Sampler) Stop() (map[int]int64, int) {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.samples
}
