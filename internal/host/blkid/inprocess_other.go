//go:build !(linux && cgo && libblkid)

package blkid

import (
	"errors"
	"os"
)

// InProcess is true when this binary probes with libblkid itself (built with the libblkid
// tag and cgo) rather than through a wipefs child.
const InProcess = false

// ErrNotInProcess is ProbeFile's error in a binary built without libblkid: callers run
// WipefsArgv through their executor instead.
var ErrNotInProcess = errors.New("libblkid: not linked into this binary (built without cgo and the libblkid tag): use wipefs")

// ProbeFile is the in-process probe of a binary built with libblkid; here it always fails
// with ErrNotInProcess.
func ProbeFile(*os.File, string) ([]Signature, error) { return nil, ErrNotInProcess }
