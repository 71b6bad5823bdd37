package tracefs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prism-storage/prism/internal/blktrace"
)

// Limits bound a capture: it stops after Duration, or once MaxEvents bios were kept,
// whichever comes first.
type Limits struct {
	Duration  time.Duration
	MaxEvents uint64
}

// Why a capture stopped.
const (
	StoppedByDuration    = "duration"
	StoppedByMaxEvents   = "max-events"
	StoppedByInterrupted = "interrupted"
)

// maxLine bounds a trace_pipe line: the event's text is under 100 bytes.
const maxLine = 64 << 10

// lineReader turns trace_pipe's bytes into records: it splits whole lines (a read may end
// mid-line), counts the lines reporting dropped events, and parses the others with
// blktrace.ParseLine. It is pure, so that chunking can be fuzzed.
type lineReader struct {
	partial []byte
	max     uint64
	keep    func(blktrace.Record)
	events  uint64
	lost    uint64
	line    uint64
}

// feed consumes a chunk; full reports that max records were kept (the rest is dropped).
func (r *lineReader) feed(chunk []byte) (full bool, err error) {
	for len(chunk) > 0 && !r.full() {
		nl := bytes.IndexByte(chunk, '\n')
		if nl < 0 {
			if len(r.partial)+len(chunk) > maxLine {
				return false, fmt.Errorf("trace_pipe line %d: longer than %d bytes", r.line+1, maxLine)
			}
			r.partial = append(r.partial, chunk...)
			return false, nil
		}
		line := chunk[:nl]
		if len(r.partial) > 0 {
			line = append(r.partial, line...)
			r.partial = r.partial[:0]
		}
		chunk = chunk[nl+1:]
		if err := r.parse(string(line)); err != nil {
			return false, err
		}
	}
	return r.full(), nil
}

func (r *lineReader) full() bool { return r.max > 0 && r.events >= r.max }

func (r *lineReader) parse(line string) error {
	r.line++
	if n, ok, err := blktrace.LostEvents(line); err != nil || ok {
		if err != nil {
			return fmt.Errorf("trace_pipe line %d: %w", r.line, err)
		}
		r.lost += n
		return nil
	}
	rec, ok, err := blktrace.ParseLine(line)
	if err != nil {
		return fmt.Errorf("trace_pipe line %d: %w", r.line, err)
	}
	if ok {
		r.events++
		r.keep(rec)
	}
	return nil
}

// pollInterval is how often a wait on trace_pipe looks at the context and the clock.
const pollInterval = 200 * time.Millisecond

// drainQuiet is how long trace_pipe must stay empty after the event is disabled for the
// drain to end: bios queued before the disable are in the buffer by then.
const drainQuiet = 300 * time.Millisecond

// Stream enables the event and reads trace_pipe (which consumes the buffer, so a capture of
// any length needs only a small one) until the duration passes, MaxEvents bios were kept or
// ctx ends, handing each record to keep in timestamp order (trace_pipe merges the CPUs'
// buffers). It then disables the event and drains what was queued before (unless MaxEvents
// was reached). lost counts the events the ring buffer dropped because the reader fell
// behind.
func (i *Instance) Stream(ctx context.Context, lim Limits, keep func(blktrace.Record)) (events, lost uint64, stoppedBy string, err error) {
	if lim.Duration <= 0 {
		return 0, 0, "", fmt.Errorf("capture duration %v: want a positive duration", lim.Duration)
	}
	// O_NONBLOCK: trace_pipe supports poll, so Go's poller waits on it and read deadlines
	// work; on a kernel where it does not, a read returns EAGAIN and the loop sleeps.
	f, err := os.OpenFile(filepath.Join(i.dir, "trace_pipe"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, 0, "", err
	}
	defer f.Close()
	r := &lineReader{max: lim.MaxEvents, keep: keep}
	if err := i.Start(); err != nil {
		return 0, 0, "", err
	}
	end := time.Now().Add(lim.Duration)
	buf := make([]byte, 256<<10)
	read := func(until time.Time) (bool, error) {
		wait := min(time.Until(until), pollInterval)
		if err := f.SetReadDeadline(time.Now().Add(wait)); err != nil && !errors.Is(err, os.ErrNoDeadline) {
			return false, err
		}
		n, err := f.Read(buf)
		if n > 0 {
			return r.feed(buf[:n])
		}
		switch {
		case err == nil, errors.Is(err, os.ErrDeadlineExceeded):
		case errors.Is(err, syscall.EAGAIN):
			time.Sleep(wait)
		default:
			return false, fmt.Errorf("reading %s/trace_pipe: %w", i.dir, err)
		}
		return false, nil
	}
	for {
		if ctx.Err() != nil {
			stoppedBy = StoppedByInterrupted
			break
		}
		if !time.Now().Before(end) {
			stoppedBy = StoppedByDuration
			break
		}
		full, err := read(end)
		if err != nil {
			_ = i.Stop()
			return r.events, r.lost, "", err
		}
		if full {
			stoppedBy = StoppedByMaxEvents
			break
		}
	}
	if err := i.Stop(); err != nil {
		return r.events, r.lost, stoppedBy, err
	}
	if stoppedBy == StoppedByMaxEvents {
		return r.events, r.lost, stoppedBy, nil
	}
	// Drain: read until the pipe has been empty for drainQuiet (bounded by MaxEvents).
	quietSince := time.Now()
	for time.Since(quietSince) < drainQuiet {
		before := r.line
		full, err := read(time.Now().Add(drainQuiet / 3))
		if err != nil {
			return r.events, r.lost, stoppedBy, err
		}
		if full {
			break
		}
		if r.line != before {
			quietSince = time.Now()
		}
	}
	return r.events, r.lost, stoppedBy, nil
}

// Result is how a capture went.
type Result struct {
	Events    uint64
	Lost      uint64
	StoppedBy string
	Started   time.Time
	Elapsed   time.Duration
}

// Capture traces one target in a new instance called name until a limit is reached or ctx
// ends, handing each record to keep, and always removes the instance before it returns, also
// on an error or a cancelled ctx.
func (fs FS) Capture(ctx context.Context, name string, t Target, bufferKiB int, lim Limits, keep func(blktrace.Record)) (res Result, err error) {
	inst, err := fs.NewInstance(Options{Name: name, Targets: []Target{t}, BufferKiB: bufferKiB})
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, inst.Remove()) }()
	res.Started = time.Now()
	res.Events, res.Lost, res.StoppedBy, err = inst.Stream(ctx, lim, keep)
	res.Elapsed = time.Since(res.Started)
	return res, err
}
