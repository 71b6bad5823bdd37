package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// Call is one command the agent ran, as the transcript (--record) keeps it: enough to replay
// the same argv against another casadm (the emulator) and compare what each answered.
type Call struct {
	Argv   []string `json:"argv"`
	Stdin  string   `json:"stdin,omitempty"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr,omitempty"`
	// Exit is the exit status; -1 when the command did not run (not found, timeout).
	Exit  int    `json:"exit"`
	Error string `json:"error,omitempty"`
}

// recorder appends every call of the executor it wraps to a JSON-lines file.
type recorder struct {
	inner hostexec.Executor
	mu    sync.Mutex
	file  *os.File
}

func (r *recorder) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	out, err := r.inner.Run(ctx, argv, stdin)
	c := Call{Argv: argv, Stdin: string(stdin), Stdout: string(out)}
	var exitErr *hostexec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		c.Exit, c.Stderr = exitErr.ExitCode, exitErr.Stderr
	default:
		c.Exit, c.Error = -1, err.Error()
	}
	line, jerr := json.Marshal(c)
	if jerr != nil {
		return out, jerr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, werr := r.file.Write(append(line, '\n')); werr != nil {
		return out, werr
	}
	return out, err
}
