//go:build linux

package nvme

import (
	"context"
	"fmt"
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
	what := fmt.Sprintf("nvme: identify (cns %d) %s", cns, path)
	return adminRead(ctx, path, what, passthruCmd{opcode: opIdentify, nsid: nsid, cdw10: cns}, IdentifySize)
}
