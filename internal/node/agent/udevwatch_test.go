package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWatchUdevSignalsOnceForABurst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	ch, err := WatchUdev(ctx, dir, 100*time.Millisecond)
	if err != nil || ch == nil {
		t.Fatalf("WatchUdev = %v, %v", ch, err)
	}
	// A disk and its partitions: udev rewrites several database files at once.
	for _, f := range []string{"b259:0", "b259:1", "b259:2"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("E:ID_BUS=nvme\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no signal after udev database changes")
	}
	select {
	case <-ch:
		t.Fatal("a burst of changes must give one signal")
	case <-time.After(500 * time.Millisecond):
	}
}

func TestWatchUdevWithoutUdev(t *testing.T) {
	ch, err := WatchUdev(context.Background(), filepath.Join(t.TempDir(), "missing"), time.Second)
	if err != nil || ch != nil {
		t.Fatalf("a host without udev must give a nil channel and no error, got %v, %v", ch, err)
	}
}
