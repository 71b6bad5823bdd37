package casadm

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// transcript is one testdata file: the command, its stdout, rc and stderr.
type transcript struct {
	cmd, stdout, stderr string
	rc                  int
}

func readTranscript(t testing.TB, name string) transcript {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	var tr transcript
	tr.cmd = strings.TrimPrefix(lines[0], "$ ")
	i := 1
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "[rc="); i++ {
		tr.stdout += lines[i] + "\n"
	}
	if i == len(lines) {
		t.Fatalf("%s: no [rc=] line", name)
	}
	tr.rc, err = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(lines[i], "[rc="), "]"))
	if err != nil {
		t.Fatal(err)
	}
	if i+1 < len(lines) && lines[i+1] == "[stderr]" {
		tr.stderr = strings.Join(lines[i+2:], "\n")
	}
	return tr
}

func reflectString(v any) string { return fmt.Sprintf("%v", v) }
