//go:build !linux

package process

import "syscall"

// sysProcAttr: a process group of its own. No parent-death signal outside Linux: the reaper
// alone kills the child when this process dies.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
