//go:build linux

package guest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// disk is one emulated NVMe disk and the drive the guest sees through NVMe-oF.
type disk struct {
	qemuSerial, fabricSerial, model string
	// size is the drive's IDEMA capacity, so that the drive database's capacity match applies.
	size int64
	tier prismv1.Tier
}

// The first pair is planned by Prism (test/guest/testdata/policy.yaml names its models); the
// second goes through Rook's whole-disk path. P5800X is 3D XPoint (Fast), D5-P5316 is QLC.
var disks = []disk{
	{"bk-fast-a", "PRISM-FAST-A", "INTEL SSDPF21Q800GB", 800166076416, prismv1.TierFast},
	{"bk-qlc-a", "PRISM-QLC-A", "INTEL SSDPF2NV307TZ", 30725971992576, prismv1.TierCapacity},
	{"bk-fast-b", "PRISM-FAST-B", "INTEL SSDPF21Q400GB", 400088457216, prismv1.TierFast},
	{"bk-qlc-b", "PRISM-QLC-B", "INTEL SSDPF2NV153TZ", 15362991415296, prismv1.TierCapacity},
}

// unseenDisk backs the drive the database lacks (rook-path.sh step 8): a virtio-blk disk with
// 4 KiB logical and 16 KiB physical blocks, exported by the kernel's NVMe target, whose model
// and Identify fields (NPWG from the physical block size) come from that kernel, not QEMU.
var unseenDisk = disk{qemuSerial: "bk-unseen", fabricSerial: "PRISM-UNSEEN", model: "OEM QLC NVMe-oF 16K NO-ENDGRP", size: 16 << 30, tier: prismv1.TierOther}

const (
	// guestTimeout bounds the whole guest run (boot, cluster, OSDs); a warm run takes about
	// 3-5 minutes of TCG on this machine kind.
	guestTimeout = 25 * time.Minute
	buildTimeout = 20 * time.Minute
)

// TestRookPathInGuest builds (or reuses) the guest, runs test/guest/rook-path.sh in it and
// checks every result from the tools' own output.
func TestRookPathInGuest(t *testing.T) {
	if dir := os.Getenv("PRISM_GUEST_RESULTS"); dir != "" {
		// Re-check the results a kept run saved (PRISM_GUEST_KEEP=1 keeps them in share/out).
		checkResults(t, dir)
		return
	}
	began := time.Now()
	out := guestRun{script: "rook-path.sh", disks: disks, timeout: guestTimeout,
		virtioDisks: []string{fmt.Sprintf("%s:%d:4096:16384", unseenDisk.qemuSerial, unseenDisk.size)}}.run(t)
	checkResults(t, out)
	t.Logf("total %.0f s", time.Since(began).Seconds())
}

// guestRun is one boot of the test guest that runs one script of this directory.
type guestRun struct {
	// script is the file in test/guest that the guest runs.
	script string
	// disks are the emulated NVMe disks, which the guest's prism-nvmet-loop gives their models
	// (/prism/targets); virtioDisks are run.sh's --virtio-disk arguments.
	disks       []disk
	virtioDisks []string
	timeout     time.Duration
}

// run builds (or reuses) the guest and Prism's static binaries, boots the guest with the
// policy, the disks and the script, and returns the directory of the script's results
// (share/out). Without root it skips the test. PRISM_GUEST_KEEP keeps the work directory.
func (g guestRun) run(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root (debootstrap, QEMU, apt-get); running as euid %d. Run: sudo make test-guest", os.Geteuid())
	}
	ctx := t.Context()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Minute))
		t.Cleanup(cancel)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work, err := os.MkdirTemp("/var/tmp", "prism-guest-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopQEMU(t, filepath.Join(work, "qemu.pid"))
		if os.Getenv("PRISM_GUEST_KEEP") != "" {
			t.Logf("PRISM_GUEST_KEEP is set: keeping %s", work)
			return
		}
		_ = os.RemoveAll(work)
	})

	// 1. The guest itself (cached across runs), timed apart from the boot.
	start := time.Now()
	buildOut, err := runLogged(ctx, buildTimeout, filepath.Join(work, "build.log"), filepath.Join(repo, "hack/guest/build.sh"))
	if err != nil {
		t.Fatalf("hack/guest/build.sh: %v\n%s", err, tail(buildOut, 40))
	}
	cached := strings.Contains(buildOut, "cached guest")
	t.Logf("guest build: %.0f s (cached: %t) %s", time.Since(start).Seconds(), cached, lastLine(buildOut))
	if env, err := os.ReadFile(filepath.Join(lastLine(buildOut), "kernel.env")); err == nil {
		t.Logf("guest kernel: %s", strings.Join(strings.Fields(string(env)), " "))
	}

	// 2. Prism's binaries, static, and the run's data, in the overlay copied into the initramfs.
	start = time.Now()
	overlay := filepath.Join(work, "overlay")
	bin := filepath.Join(overlay, "usr/local/bin")
	for name, pkg := range map[string]string{"prism-agent": "./cmd/agent", "kubectl-prism": "./cmd/kubectl-prism", "prism-apply-plan": "./test/guest/applyplan"} {
		out, err := goBuild(ctx, repo, filepath.Join(bin, name), pkg)
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	writeFile(t, filepath.Join(overlay, "prism/targets"), targetsFile(g.disks))
	writeFile(t, filepath.Join(overlay, "prism/policy.yaml"), string(readPolicy(t)))
	lib, err := os.ReadFile("lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(overlay, "prism/lib.sh"), string(lib))
	t.Logf("static binaries built (CGO_ENABLED=0) in %.0f s", time.Since(start).Seconds())

	// 3. Boot, run, power off.
	share := filepath.Join(work, "share")
	if err := os.MkdirAll(share, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(repo, "hack/guest/run.sh"), "--run", filepath.Join(repo, "test/guest", g.script),
		"--overlay", overlay, "--share", share, "--workdir", filepath.Join(work, "vm"), "--keep",
		"--timeout", strconv.Itoa(int(g.timeout.Seconds()))}
	for _, d := range g.disks {
		args = append(args, "--disk", fmt.Sprintf("%s:%d", d.qemuSerial, d.size))
	}
	for _, d := range g.virtioDisks {
		args = append(args, "--virtio-disk", d)
	}
	start = time.Now()
	console, err := runLogged(ctx, g.timeout+time.Minute, filepath.Join(work, "console.log"), args...)
	t.Cleanup(func() { stopQEMU(t, filepath.Join(work, "vm", "qemu.pid")) })
	guestSecs := time.Since(start).Seconds()
	if err != nil {
		failure, _ := os.ReadFile(filepath.Join(share, "out", "failure.txt"))
		t.Fatalf("guest run failed after %.0f s: %v %s\n--- console (last lines)\n%s", guestSecs, err, failure, tail(console, 80))
	}
	for _, line := range strings.Split(console, "\n") {
		if strings.HasPrefix(line, "PRISM-GUEST-") || strings.HasPrefix(line, "PRISM-STEP") {
			t.Logf("guest: %s", strings.TrimSpace(line))
		}
	}
	t.Logf("guest boot + run + power-off: %.0f s", guestSecs)
	return filepath.Join(share, "out")
}

func checkResults(t *testing.T, dir string) {
	r := loadResults(t, dir)
	r.checkModelsAndTiers(t, disks)
	r.checkPlan(t, readPolicy(t))
	r.checkPartitions(t)
	r.loadOSDMetadata(t)
	r.checkPrepareOSD(t)
	r.checkBatchOSD(t)
	r.checkCluster(t)
	r.checkUnseen(t)
}

// readPolicy is the policy the guest plans with (both scripts).
func readPolicy(t *testing.T) []byte {
	t.Helper()
	policy, err := os.ReadFile("testdata/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return policy
}

func targetsFile(ds []disk) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s %s %s\n", d.qemuSerial, d.fabricSerial, d.model)
	}
	return b.String()
}

// runLogged runs argv with its combined output going to logFile, and returns that output.
// The context ending sends SIGTERM first, so that run.sh stops QEMU itself.
func runLogged(ctx context.Context, timeout time.Duration, logFile string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	f, err := os.Create(logFile)
	if err != nil {
		return "", err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	runErr := cmd.Run()
	out, err := os.ReadFile(logFile)
	if err != nil {
		return "", err
	}
	return string(out), runErr
}

func goBuild(ctx context.Context, repo, out, pkg string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// stopQEMU kills the QEMU whose pid file run.sh asked it to write, if it still runs.
func stopQEMU(t *testing.T, pidFile string) {
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil || !strings.HasPrefix(string(comm), "qemu") {
		return
	}
	t.Logf("stopping QEMU pid %d", pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func lastLine(s string) string {
	var last string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			last = l
		}
	}
	return last
}
