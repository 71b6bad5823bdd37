// Package hostexec runs host tools for the node agent. Every tool runs through one
// injected Executor, with an argv slice (never a shell string), a context with a
// timeout and LC_ALL=C so that machine-readable output does not depend on the locale.
package hostexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Executor runs one command and returns its standard output.
type Executor interface {
	Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error)
}

// DefaultTimeout bounds a host tool call when the context has no earlier deadline.
const DefaultTimeout = 2 * time.Minute

// Local runs commands on this machine.
type Local struct {
	// Timeout bounds each call; DefaultTimeout when zero.
	Timeout time.Duration
}

// ExitError reports a command that ran and failed, with its stderr for the message.
type ExitError struct {
	Argv     []string
	ExitCode int
	// Signal names the signal that ended the command ("killed"); ExitCode is then -1.
	Signal string
	Stderr string
}

func (e *ExitError) Error() string {
	if e.Signal != "" {
		return fmt.Sprintf("%s was killed by signal %s: %s", strings.Join(e.Argv, " "), e.Signal, e.Stderr)
	}
	return fmt.Sprintf("%s exited with status %d: %s", strings.Join(e.Argv, " "), e.ExitCode, e.Stderr)
}

// Run executes argv[0] with argv[1:] as arguments.
func (l Local) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("hostexec: empty argv")
	}
	timeout := l.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	if ctx.Err() != nil {
		return stdout.Bytes(), fmt.Errorf("%s: %w (timeout %s)", argv[0], ctx.Err(), timeout)
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		e := &ExitError{Argv: argv, ExitCode: exitErr.ExitCode(), Stderr: strings.TrimSpace(stderr.String())}
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
		return stdout.Bytes(), e
	}
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("running %s: %w", argv[0], err)
	}
	return stdout.Bytes(), nil
}
