package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// WatchUdev signals on the returned channel when udev's database directory changes (udev
// rewrites a device's file on every add, change and remove event), debounced so that a burst
// of events (a disk and its partitions) causes one inventory. It returns a nil channel when
// the directory does not exist (no udev on the host).
func WatchUdev(ctx context.Context, dir string, debounce time.Duration) (<-chan struct{}, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return nil, err
	}
	out := make(chan struct{}, 1)
	go func() {
		defer w.Close()
		var timer <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				timer = time.After(debounce)
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				logf.FromContext(ctx).Error(err, "Watching udev database")
			case <-timer:
				timer = nil
				select {
				case out <- struct{}{}:
				default: // a signal is already pending
				}
			}
		}
	}()
	return out, nil
}
