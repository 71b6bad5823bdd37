package gpt

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// WipeSignaturesArgv is `wipefs --all --force <dev>`: every signature libblkid knows
// (filesystems, LVM, RAID, crypt, partition tables), for a device a policy lets Prism wipe.
// --force: Prism holds the device open exclusively while it runs, so wipefs's own exclusive
// open would fail; Prism's hold is the same guarantee (nothing mounts or claims it meanwhile).
func WipeSignaturesArgv(dev string) ([]string, error) {
	if err := hostexec.CheckDevicePath(dev); err != nil {
		return nil, err
	}
	return []string{"wipefs", "--all", "--force", dev}, nil
}

// RereadArgv is `partx --update --nr 1:<maxNumber> <dev>`: the kernel learns the partitions
// 1..maxNumber as they are on disk (added, or resized in place when in use). The explicit
// range matters: without it partx (util-linux 2.38) only walks 1..max(the kernel's highest
// partition, the number of partitions on disk), so it misses partition 3 of a table holding
// 1 and 3. partx also exits 0 when adding a partition fails, so callers must check the kernel
// view afterwards.
func RereadArgv(dev string, maxNumber int) ([]string, error) {
	if err := hostexec.CheckDevicePath(dev); err != nil {
		return nil, err
	}
	if maxNumber < 1 || maxNumber > MaxPartitionNumber {
		return nil, fmt.Errorf("partition range 1:%d: want an upper bound from 1 to %d", maxNumber, MaxPartitionNumber)
	}
	return []string{"partx", "--update", "--nr", "1:" + strconv.Itoa(maxNumber), dev}, nil
}

// ForgetPartitionsArgv is `partx --delete --nr 1:<maxNumber> <dev>`: the kernel drops the
// partitions it still lists after a wipe (partx --update never removes a partition that is no
// longer on disk). It fails for a partition that is in use. partx exits non-zero when the
// kernel lists no partition at all, so use it only when it lists some.
func ForgetPartitionsArgv(dev string, maxNumber int) ([]string, error) {
	if err := hostexec.CheckDevicePath(dev); err != nil {
		return nil, err
	}
	if maxNumber < 1 {
		return nil, fmt.Errorf("partition range 1:%d: want an upper bound of at least 1", maxNumber)
	}
	return []string{"partx", "--delete", "--nr", "1:" + strconv.Itoa(maxNumber), dev}, nil
}

// SettleTimeoutSeconds bounds udevadm settle.
const SettleTimeoutSeconds = 30

// SettleArgv is `udevadm settle --timeout=30`: wait until udev has processed the events of
// the new partitions, so their /dev/disk/by-id/...-partN links exist. Run it only when
// udevadm exists (the agent image may not carry it; then nothing waits for the links).
func SettleArgv() []string {
	return []string{"udevadm", "settle", "--timeout=" + strconv.Itoa(SettleTimeoutSeconds)}
}

func checkName(name string) error {
	if name == "" {
		return errors.New("empty partition name")
	}
	for _, r := range name {
		if r == 0 {
			return fmt.Errorf("partition name %q contains NUL", name)
		}
	}
	if n := len(utf16.Encode([]rune(name))); n > 36 {
		return fmt.Errorf("partition name %q is %d UTF-16 code units, GPT holds 36", name, n)
	}
	return nil
}
