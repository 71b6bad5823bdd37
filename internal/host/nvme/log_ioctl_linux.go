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

const (
	opGetLogPage = 0x02
	// cdw10RAE is Retain Asynchronous Event (CDW10 bit 15): without it a
	// SMART read clears a pending SMART/health event that another host tool
	// may still be waiting for. The agent only observes, so it retains.
	cdw10RAE = 1 << 15
)

// getLogCDW packs the Get Log Page dwords: NUMD is the 0's based dword
// count, split into NUMDL (CDW10 bits 31:16) and NUMDU (CDW11 bits 15:0);
// the log id is CDW10 bits 7:0.
func getLogCDW(logID uint8, length int) (cdw10, cdw11 uint32) {
	return getLogCDWSpecific(logID, 0, length)
}

// getLogCDWSpecific also sets the Log Specific Identifier (CDW11 bits 31:16), which names the
// endurance group for log 09h.
func getLogCDWSpecific(logID uint8, lsi uint16, length int) (cdw10, cdw11 uint32) {
	numd := uint32(length/4 - 1)
	return uint32(logID) | cdw10RAE | (numd&0xffff)<<16, numd>>16 | uint32(lsi)<<16
}

// GetLogPage reads length bytes of log page logID for nsid through the NVMe
// admin passthrough ioctl. It opens the device read-only and sends only Get
// Log Page (opcode 02h), which does not change the drive's data.
func GetLogPage(ctx context.Context, devicePath string, nsid uint32, logID uint8, length int) ([]byte, error) {
	what := fmt.Sprintf("nvme: get log page %#02x %s", logID, devicePath)
	if err := checkLogLength(length); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	cdw10, cdw11 := getLogCDW(logID, length)
	return adminRead(ctx, devicePath, what, passthruCmd{opcode: opGetLogPage, nsid: nsid, cdw10: cdw10, cdw11: cdw11}, length)
}

// GetLogPageSpecific is GetLogPage with a Log Specific Identifier (the endurance group of
// log 09h), for the whole controller.
func GetLogPageSpecific(ctx context.Context, devicePath string, logID uint8, lsi uint16, length int) ([]byte, error) {
	what := fmt.Sprintf("nvme: get log page %#02x (lsi %d) %s", logID, lsi, devicePath)
	if err := checkLogLength(length); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	cdw10, cdw11 := getLogCDWSpecific(logID, lsi, length)
	return adminRead(ctx, devicePath, what, passthruCmd{opcode: opGetLogPage, nsid: 0, cdw10: cdw10, cdw11: cdw11}, length)
}

// adminRead sends one data-in admin command (Identify, Get Log Page) through
// NVME_IOCTL_ADMIN_CMD on a read-only descriptor and returns its length-byte
// buffer, mapping errno and the NVMe completion status to errors.
func adminRead(ctx context.Context, path, what string, cmd passthruCmd, length int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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

	buf := make([]byte, length)
	cmd.addr = uint64(uintptr(unsafe.Pointer(&buf[0])))
	cmd.dataLen = uint32(length)
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
		// Positive: NVMe status (SCT/SC), e.g. an unsupported vendor log id.
		return nil, fmt.Errorf("%s: controller returned NVMe status 0x%x", what, status)
	}
	return buf, nil
}
