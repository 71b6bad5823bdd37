// Package workpool runs independent calls on a bounded number of goroutines.
package workpool

import (
	"sync"
	"sync/atomic"
)

// Each calls fn(i) for every i in [0, n) on up to workers goroutines, each taking the next
// index as it finishes one, and returns once every call has returned. With workers <= 1 (or
// n <= 1) the calls run in order on the caller's goroutine. fn must be safe to call
// concurrently; writing only its own index of a result slice is.
func Each(n, workers int, fn func(i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}
