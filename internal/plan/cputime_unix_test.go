//go:build unix

package plan

import "syscall"

// processCPUNanos is the user and system CPU time of the process so far, in nanoseconds.
func processCPUNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
