package layout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// maxTracked is the largest file the repository keeps outside a testdata folder: anything
// bigger is a build output or a recording that belongs under testdata.
const maxTracked = 1 << 20

// executableMagic lists the leading bytes of the executable formats Go can build.
var executableMagic = []struct {
	format string
	magic  []byte
}{
	{"ELF", []byte("\x7fELF")},
	{"Mach-O", []byte{0xcf, 0xfa, 0xed, 0xfe}},
	{"Mach-O", []byte{0xce, 0xfa, 0xed, 0xfe}},
	{"Mach-O universal", []byte{0xca, 0xfe, 0xba, 0xbe}},
	{"PE", []byte("MZ")},
}

// notSource says why a tracked file should not be tracked, or "" when it may be.
func notSource(path string, head []byte, size int64) string {
	for _, m := range executableMagic {
		if bytes.HasPrefix(head, m.magic) {
			return fmt.Sprintf("%s is a built %s executable: build outputs go to bin/, which is ignored", path, m.format)
		}
	}
	if size > maxTracked && !underTestdata(path) {
		return fmt.Sprintf("%s is %d bytes, over the %d-byte limit for a file outside testdata", path, size, maxTracked)
	}
	return ""
}

func underTestdata(path string) bool {
	for _, dir := range strings.Split(filepath.ToSlash(filepath.Dir(path)), "/") {
		if dir == "testdata" {
			return true
		}
	}
	return false
}

func TestNotSource(t *testing.T) {
	for _, tc := range []struct {
		path string
		head []byte
		size int64
		bad  bool
	}{
		{"kubectl-prism", []byte("\x7fELF\x02\x01\x01"), 48 << 20, true},
		{"cmd/agent/agent", []byte("\x7fELF"), 100, true},
		{"bin/tool.exe", []byte("MZ\x90\x00"), 100, true},
		{"darwin-tool", []byte{0xcf, 0xfa, 0xed, 0xfe, 7}, 100, true},
		{"docs/big.md", []byte("# big"), maxTracked + 1, true},
		{"docs/limit.md", []byte("# at the limit"), maxTracked, false},
		{"internal/x/testdata/trace.csv", []byte("time,op"), 5 << 20, false},
		{"internal/x/testdata/sub/a.bin", []byte("\x00\x01"), 5 << 20, false},
		{"internal/testdatax/a.bin", []byte("\x00\x01"), 5 << 20, true},
		{"hack/demo.sh", []byte("#!/usr/bin/env bash"), 2000, false},
		{"empty", nil, 0, false},
	} {
		if got := notSource(tc.path, tc.head, tc.size); (got != "") != tc.bad {
			t.Errorf("notSource(%q, %q, %d) = %q, want bad=%v", tc.path, tc.head, tc.size, got, tc.bad)
		}
	}
}

// TestNoBuiltOrLargeFileTracked reads every tracked file's size and first bytes.
func TestNoBuiltOrLargeFileTracked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	var exitErr *exec.ExitError
	if errors.Is(err, exec.ErrNotFound) || (errors.As(err, &exitErr) && strings.Contains(string(exitErr.Stderr), "not a git repository")) {
		t.Skipf("the tracked files are known only in a git checkout with git installed: %v", err)
	}
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if path == "" {
			continue
		}
		full := filepath.Join("../..", path)
		info, err := os.Lstat(full)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree, not committed yet
		}
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		head, err := readHead(full)
		if err != nil {
			t.Fatal(err)
		}
		if why := notSource(path, head, info.Size()); why != "" {
			t.Error(why)
		}
	}
}

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 8)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head[:n], nil
}
