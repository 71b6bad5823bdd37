//go:build linux

package nvme

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// passthruCmd mirrors struct nvme_passthru_cmd (== struct nvme_admin_cmd)
// from <linux/nvme_ioctl.h>: 72 bytes, no padding on any Linux ABI.
type passthruCmd struct {
	opcode      uint8
	flags       uint8
	rsvd1       uint16
	nsid        uint32
	cdw2        uint32
	cdw3        uint32
	metadata    uint64
	addr        uint64
	metadataLen uint32
	dataLen     uint32
	cdw10       uint32
	cdw11       uint32
	cdw12       uint32
	cdw13       uint32
	cdw14       uint32
	cdw15       uint32
	timeoutMS   uint32
	result      uint32
}

const (
	opIdentify = 0x06
	cnsNS      = 0x00
	cnsCtrl    = 0x01
	// NVME_IOCTL_ADMIN_CMD = _IOWR('N', 0x41, struct nvme_admin_cmd).
	ioctlAdminCmd = 3<<30 | uintptr(unsafe.Sizeof(passthruCmd{}))<<16 | 'N'<<8 | 0x41
)

// IdentifyController sends Identify (CNS 01h) to a controller character
// device (/dev/nvme0) or a namespace block device and returns the 4 KiB page.
func IdentifyController(ctx context.Context, devicePath string) ([]byte, error) {
	return identify(ctx, devicePath, 0, cnsCtrl)
}

// IdentifyNamespace sends Identify (CNS 00h) for nsid.
func IdentifyNamespace(ctx context.Context, devicePath string, nsid uint32) ([]byte, error) {
	if nsid == 0 {
		return nil, fmt.Errorf("nvme: identify namespace %s: nsid 0 is not a namespace", devicePath)
	}
	return identify(ctx, devicePath, nsid, cnsNS)
}

func identify(ctx context.Context, path string, nsid uint32, cns uint32) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("nvme: identify (cns %d) %s", cns, path)
	// Read-only and shared: this must never block or disturb a mounted device.
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("%s: %w: %w", what, ErrPermission, err)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	} else if st.Mode()&os.ModeDevice == 0 {
		return nil, fmt.Errorf("%s: %w: not a device node", what, ErrNotNVMe)
	}

	buf := make([]byte, IdentifySize)
	cmd := passthruCmd{
		opcode:  opIdentify,
		nsid:    nsid,
		addr:    uint64(uintptr(unsafe.Pointer(&buf[0]))),
		dataLen: IdentifySize,
		cdw10:   cns,
	}
	if dl, ok := ctx.Deadline(); ok {
		cmd.timeoutMS = uint32(min(max(time.Until(dl).Milliseconds(), 1), math.MaxUint32))
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var status uintptr
	var errno syscall.Errno
	if cerr := rc.Control(func(fd uintptr) {
		status, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlAdminCmd, uintptr(unsafe.Pointer(&cmd)))
	}); cerr != nil {
		return nil, fmt.Errorf("%s: %w", what, cerr)
	}
	runtime.KeepAlive(buf)
	switch {
	case errno == syscall.ENOTTY || errno == syscall.EINVAL:
		return nil, fmt.Errorf("%s: %w: %w", what, ErrNotNVMe, errno)
	case errno == syscall.EACCES || errno == syscall.EPERM:
		return nil, fmt.Errorf("%s: %w: %w", what, ErrPermission, errno)
	case errno != 0:
		return nil, fmt.Errorf("%s: %w", what, errno)
	case status != 0:
		// A positive return is the NVMe completion status (SCT/SC).
		return nil, fmt.Errorf("%s: controller returned NVMe status 0x%x", what, status)
	}
	return buf, nil
}
