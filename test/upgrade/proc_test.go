package upgrade

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is one running Prism binary, as a pod would run it: its own process, the cluster
// reached through a kubeconfig, stopped with SIGTERM as the kubelet stops a pod.
type proc struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
}

// start runs path with args; its output goes to a log file that a failing test prints.
func start(t *testing.T, kubeconfig, name, path string, args ...string) *proc {
	t.Helper()
	log := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &proc{name: name, log: log, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			p.printLog(t)
		}
	})
	return p
}

// stop sends SIGTERM and waits up to 10 s before SIGKILL. Stopping twice is harmless.
func (p *proc) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Logf("%s did not stop within 10 s of SIGTERM: killed", p.name)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// exited says whether the process has ended (a binary that refused to run, say).
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// printLog logs the last 40 lines of the process's output.
func (p *proc) printLog(t *testing.T) {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	t.Logf("last lines of %s:\n%s", p.name, strings.Join(lines, "\n"))
}

// logHas reports whether the process's output so far contains s.
func (p *proc) logHas(s string) bool {
	b, _ := os.ReadFile(p.log)
	return strings.Contains(string(b), s)
}
