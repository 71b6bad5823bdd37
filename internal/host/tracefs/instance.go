package tracefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prism-storage/prism/internal/blktrace"
)

// Options make an instance.
type Options struct {
	// Name is the instance's directory under instances/: unique to this capture.
	Name string
	// Targets are the devices whose bios the instance keeps (the event filter).
	Targets []Target
	// BufferKiB is the ring buffer per CPU; 0 keeps the kernel's default.
	BufferKiB int
}

// Instance is a private tracefs instance recording block_bio_queue for its targets, with the
// submitting process's id (option record-tgid).
type Instance struct {
	dir string
}

// Dir is the instance's directory.
func (i *Instance) Dir() string { return i.dir }

// NewInstance makes the instance and configures it: buffer size, record-tgid, the event's
// filter. The event is not enabled yet (Start). On any error the instance is removed again.
func (fs FS) NewInstance(opts Options) (_ *Instance, err error) {
	if opts.Name == "" || opts.Name == "." || opts.Name == ".." || strings.ContainsAny(opts.Name, "/\x00") {
		return nil, fmt.Errorf("tracefs instance name %q: want a single path element", opts.Name)
	}
	if len(opts.Targets) == 0 {
		return nil, errors.New("tracefs instance: no device to trace")
	}
	root, err := fs.Dir()
	if err != nil {
		return nil, err
	}
	format, err := os.ReadFile(filepath.Join(eventDir(root), "format"))
	if err != nil {
		return nil, fmt.Errorf("block_bio_queue: %w (a kernel without CONFIG_BLK_DEV_IO_TRACE's block events?)", err)
	}
	if err := CheckFormat(string(format)); err != nil {
		return nil, err
	}
	i := &Instance{dir: filepath.Join(root, "instances", opts.Name)}
	if err := os.Mkdir(i.dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("tracefs instance %s exists: another capture is running, or one was killed (remove it with rmdir)", i.dir)
		}
		return nil, fmt.Errorf("tracefs instance: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, i.Remove())
		}
	}()
	if opts.BufferKiB > 0 {
		if err := i.write("buffer_size_kb", strconv.Itoa(opts.BufferKiB)); err != nil {
			return nil, err
		}
	}
	// The process of each bio's submitter: an OSD's bios are told from other tools'.
	if err := i.write(filepath.Join("options", "record-tgid"), "1"); err != nil {
		return nil, err
	}
	var terms []string
	for _, t := range opts.Targets {
		terms = append(terms, t.Filter())
	}
	if err := i.write(filepath.Join("events", "block", "block_bio_queue", "filter"), strings.Join(terms, " || ")); err != nil {
		return nil, err
	}
	return i, nil
}

func (i *Instance) write(file, value string) error {
	if err := os.WriteFile(filepath.Join(i.dir, file), []byte(value), 0); err != nil {
		return fmt.Errorf("tracefs %s = %q: %w", file, value, err)
	}
	return nil
}

// Start empties the instance's buffer and enables the event.
func (i *Instance) Start() error {
	if err := i.write("trace", ""); err != nil {
		return err
	}
	return i.write(filepath.Join("events", "block", "block_bio_queue", "enable"), "1")
}

// Stop disables the event; what the buffer holds stays there.
func (i *Instance) Stop() error {
	return i.write(filepath.Join("events", "block", "block_bio_queue", "enable"), "0")
}

// Buffer parses what the buffer holds (the trace file: it does not consume it), with the
// events the ring buffer dropped.
func (i *Instance) Buffer() (blktrace.Trace, error) {
	f, err := os.Open(filepath.Join(i.dir, "trace"))
	if err != nil {
		return blktrace.Trace{}, err
	}
	defer f.Close()
	tr, err := blktrace.ParseTrace(f)
	if err != nil {
		return tr, fmt.Errorf("%s/trace: %w", i.dir, err)
	}
	return tr, nil
}

// removeTries bounds Remove's wait for a reader of the instance to close it (rmdir fails with
// EBUSY while a file of the instance is open).
const removeTries = 50

// Remove disables the event and removes the instance, its buffer with it. It is idempotent;
// an instance already gone is no error.
func (i *Instance) Remove() error {
	_ = i.Stop() // rmdir disables it anyway; this only stops the recording sooner
	var err error
	for try := 0; try < removeTries; try++ {
		if err = os.Remove(i.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("removing tracefs instance %s: %w", i.dir, err)
}
