package smart

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// exitWith is an executor whose command printed out and exited with code.
type exitWith struct {
	out  string
	code int
	argv *[]string
}

func (e exitWith) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	*e.argv = argv
	if e.code == 0 {
		return []byte(e.out), nil
	}
	return []byte(e.out), &hostexec.ExitError{ExitCode: e.code}
}

// TestSmartctlExitStatus: smartctl's exit status is a bit mask (smartctl(8) RETURN VALUES):
// bits 0-1 are command failures; bit 2 and up report the drive's condition with full output.
func TestSmartctlExitStatus(t *testing.T) {
	for _, c := range []struct {
		code   int
		out    string
		wantOK bool
	}{
		{0, `{"ok":1}`, true},
		{4, `{"ok":1}`, true},  // some SMART command failed, the rest printed
		{64, `{"ok":1}`, true}, // error log has errors
		{2, `{"ok":1}`, false}, // device open failed
		{1, `{"ok":1}`, false}, // command line did not parse
		{4 | 1, ``, false},
		{8, ``, false}, // nothing printed
	} {
		var argv []string
		out, err := Smartctl{Exec: exitWith{c.out, c.code, &argv}, Root: "/host"}.SmartctlJSON(context.Background(), "sdb")
		if (err == nil) != c.wantOK {
			t.Errorf("exit %d with %q: err %v, want ok %v", c.code, c.out, err, c.wantOK)
		}
		if c.wantOK && string(out) != c.out {
			t.Errorf("exit %d: output %q", c.code, out)
		}
		var exitErr *hostexec.ExitError
		if !c.wantOK && err != nil && !errors.As(err, &exitErr) {
			t.Errorf("exit %d: error %v lost the exit status", c.code, err)
		}
		if strings.Join(argv, " ") != "smartctl -j -a /host/dev/sdb" {
			t.Errorf("argv %q", argv)
		}
	}
}
