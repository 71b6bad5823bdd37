package hostexec

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLocalRunsArgvWithCLocale(t *testing.T) {
	out, err := Local{}.Run(context.Background(), []string{"sh", "-c", `printf '%s|%s' "$LC_ALL" "$1"`, "sh", "a b;c"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The argument with a space and a semicolon arrives as one argv element: no shell splitting.
	if got := string(out); got != "C|a b;c" {
		t.Fatalf("got %q, want %q", got, "C|a b;c")
	}
}

func TestLocalPassesStdin(t *testing.T) {
	out, err := Local{}.Run(context.Background(), []string{"cat"}, []byte("csv,data\n"))
	if err != nil || string(out) != "csv,data\n" {
		t.Fatalf("got %q, %v", out, err)
	}
}

func TestLocalReportsExitCodeAndStderr(t *testing.T) {
	_, err := Local{}.Run(context.Background(), []string{"sh", "-c", "echo broken >&2; exit 3"}, nil)
	var exitErr *ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("want *ExitError, got %T %v", err, err)
	}
	if exitErr.ExitCode != 3 || exitErr.Stderr != "broken" {
		t.Fatalf("got code %d stderr %q", exitErr.ExitCode, exitErr.Stderr)
	}
}

func TestLocalTimesOut(t *testing.T) {
	start := time.Now()
	_, err := Local{Timeout: 200 * time.Millisecond}.Run(context.Background(), []string{"sleep", "10"}, nil)
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("want deadline error, got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("timeout not enforced: took %s", time.Since(start))
	}
}

func TestLocalRejectsEmptyArgv(t *testing.T) {
	if _, err := (Local{}).Run(context.Background(), nil, nil); err == nil {
		t.Fatal("want error for empty argv")
	}
}
