package process

import "syscall"

// sysProcAttr: a process group of its own, and SIGKILL when the thread that started the child
// dies (Linux's parent-death signal; the reaper covers the rest).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
