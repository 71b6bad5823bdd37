package provision

import (
	"reflect"
	"strings"
	"testing"
)

// mountinfo lines as this machine's kernel writes them (fusefat and fuseiso name themselves
// as the source; ntfs-3g's fuseblk has the device's number), plus made-up FUSE sources.
const mountinfoSample = `27 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw
40 27 7:3 / /mnt/ext rw,relatime shared:20 - ext4 /dev/loop3 rw
41 27 0:40 / /tmp/ffm rw,nosuid,nodev,relatime - fuse.fusefat fusefat rw,user_id=0,group_id=0
42 27 0:41 / /tmp/iso rw,nosuid,nodev,relatime - fuse.fuseiso fuseiso rw,user_id=0,group_id=0
43 27 0:42 / /mnt/img rw,nosuid,nodev,relatime shared:30 master:2 - fuse.squashfuse /dev/loop4 rw,user_id=0
44 27 0:43 / /mnt/sp\040ace rw - fuse /dev/disk\040x rw
45 27 0:44 / /mnt/other rw - fuse.sshfs host:/dir rw
46 27 0:45 / /mnt/notfuse rw - tmpfs /dev/loop4 rw
47 27 0:46 / /mnt/short rw - fuse.x
`

func TestMountsOf(t *testing.T) {
	sources := map[string]string{"/dev/loop4": "7:4", "/dev/disk x": "7:5", "/dev/loop3": "7:3"}
	sourceDev := func(s string) (string, bool) {
		d, ok := sources[s]
		return d, ok
	}
	for _, tc := range []struct {
		name string
		devs map[string]string
		want []string
	}{
		{"by device number", map[string]string{"7:3": "loop3"}, []string{"loop3 on /mnt/ext"}},
		// Not the tmpfs whose source is spelled /dev/loop4 too: only FUSE mounts are matched so.
		{"a FUSE mount by its source's device", map[string]string{"7:4": "loop4"}, []string{"loop4 on /mnt/img (fuse.squashfuse)"}},
		{"an escaped source", map[string]string{"7:5": "loop5p1"}, []string{"loop5p1 on /mnt/sp\\040ace (fuse)"}},
		{"fusefat's own name is no device", map[string]string{"0:40": "x"}, []string{"x on /tmp/ffm"}},
		{"nothing", map[string]string{"8:0": "sda"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mountsOf([]byte(mountinfoSample), tc.devs, sourceDev)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzMountsOf(f *testing.F) {
	f.Add([]byte(mountinfoSample))
	f.Add([]byte("1 2 0:1 / /x rw - fuse.a /dev/loop0 rw\n1 2 0:1 / /x rw -\n - - - - - -"))
	f.Fuzz(func(t *testing.T, b []byte) {
		devs := map[string]string{"7:0": "loop0", "0:1": "zero"}
		for _, m := range mountsOf(b, devs, func(s string) (string, bool) { return "7:0", strings.HasPrefix(s, "/") }) {
			if !strings.HasPrefix(m, "loop0 on ") && !strings.HasPrefix(m, "zero on ") {
				t.Errorf("mountsOf gave %q, which names no device of devs", m)
			}
		}
	})
}
