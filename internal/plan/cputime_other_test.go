//go:build !unix

package plan

// processCPUNanos is 0 where getrusage does not exist: no cpu-ns/op metric.
func processCPUNanos() int64 { return 0 }
