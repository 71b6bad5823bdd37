package workpool

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEachCallsEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {5, 1}, {5, 0}, {100, 7}, {3, 16}} {
		calls := make([]atomic.Int32, tc.n)
		Each(tc.n, tc.workers, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d workers=%d: index %d called %d times", tc.n, tc.workers, i, c)
			}
		}
	}
}

func TestEachInOrderWithOneWorker(t *testing.T) {
	var got []int
	Each(5, 1, func(i int) { got = append(got, i) })
	for i, v := range got {
		if v != i {
			t.Fatalf("order %v, want 0..4", got)
		}
	}
}

// TestEachBoundsConcurrency: no more than workers calls run at once, and more than one do.
func TestEachBoundsConcurrency(t *testing.T) {
	const workers = 3
	var mu sync.Mutex
	running, most := 0, 0
	Each(30, workers, func(int) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
	})
	if most > workers || most < 2 {
		t.Errorf("at most %d calls ran at once, want 2..%d", most, workers)
	}
}
