package hostexec

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A tool given HeldPath opens what the descriptor holds, not what the name means by then.
func TestHeldPathReachesTheOpenFileNotTheName(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "dev")
	if err := os.WriteFile(name, []byte("held"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The name moves on to another file.
	if err := os.Rename(name, name+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte("another"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := Local{}.Run(context.Background(), []string{"cat", HeldPath(f)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "held" {
		t.Fatalf("the tool read %q through %s, want the held file's %q", out, HeldPath(f), "held")
	}
}
