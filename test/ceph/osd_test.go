//go:build linux

package ceph

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// osd is one OSD the test created from a Rook entry.
type osd struct {
	id   int
	uuid string
	// data and db are the kernel devices; dataByID and dbByID what the Rook entry names.
	data, db         string
	dataByID, dbByID string
	slot             prismv1.DBSlot
	daemon           *daemon
	// node is the Kubernetes node it runs on ("" for the test's node, nodeName): Ceph names
	// its CRUSH host after it.
	node string
}

func (o *osd) name() string { return fmt.Sprintf("osd.%d", o.id) }

// rawListEntry is one OSD of `ceph-volume raw list --format json`.
type rawListEntry struct {
	OSDID     int    `json:"osd_id"`
	OSDUUID   string `json:"osd_uuid"`
	CephFSID  string `json:"ceph_fsid"`
	Device    string `json:"device"`
	DeviceDB  string `json:"device_db"`
	DeviceWAL string `json:"device_wal"`
	Type      string `json:"type"`
}

// createOSD does what Rook's osd prepare job does for a device entry with a metadataDevice
// partition, in ceph-volume's raw mode (Rook's lvm mode needs device-mapper, which this kernel
// lacks): prepare with the slot as block.db and the entry's device class, activate, and start
// the daemon in the foreground.
func (c *cluster) createOSD(d rook.RookDevice, kernel map[string]string, fp prismv1.FastDevicePlan) *osd {
	o := &osd{dataByID: d.Name, dbByID: d.Config.MetadataDevice}
	o.data, o.db = kernel[o.dataByID], kernel[o.dbByID]
	if o.data == "" || o.db == "" {
		c.e.t.Fatalf("Rook entry %+v names devices the test did not create", d)
	}
	return c.prepareOSD(d, o, fp, deviceClass)
}

// createOSDAlone is createOSD for an entry without a metadataDevice: BlueFS, the WAL and the
// objects share the data device, as on a QLC drive without Prism.
func (c *cluster) createOSDAlone(d rook.RookDevice, kernel map[string]string, class string) *osd {
	return c.createOSDOn("", d, kernel, class)
}

// createOSDOn is createOSDAlone for an OSD of node ("": the test's node), which Ceph makes its
// CRUSH host.
func (c *cluster) createOSDOn(node string, d rook.RookDevice, kernel map[string]string, class string) *osd {
	o := &osd{dataByID: d.Name, data: kernel[d.Name], node: node}
	if o.data == "" || d.Config.MetadataDevice != "" {
		c.e.t.Fatalf("Rook entry %+v: want a device the test created and no metadataDevice", d)
	}
	return c.prepareOSD(d, o, prismv1.FastDevicePlan{}, class)
}

// prepareOSD prepares, activates and starts o (its db empty: no block.db).
func (c *cluster) prepareOSD(d rook.RookDevice, o *osd, fp prismv1.FastDevicePlan, wantClass string) *osd {
	t := c.e.t
	for _, s := range fp.Slots {
		if s.DataDevice == d.Name {
			o.slot = s
		}
	}
	if got, want := d.Config.DatabaseSizeMB, strconv.FormatInt(o.slot.Partition.SizeBytes/plan.MiB, 10); o.db != "" && (got != want || o.dbByID != prismv1.PartitionPath(fp.StablePath, o.slot.Partition.Number)) {
		t.Fatalf("Rook entry %+v does not match slot %+v", d, o.slot)
	}
	class := d.Config.Get("deviceClass")
	if class != wantClass {
		t.Fatalf("Rook entry %+v: device class %q", d, class)
	}
	withDB := func(argv ...string) []string {
		if o.db == "" {
			return argv
		}
		return append(argv, "--block.db", o.db)
	}

	out, err := c.cephVolume(slow, withDB("raw", "prepare", "--bluestore", "--data", o.data, "--crush-device-class", class, "--no-tmpfs")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(out, 40))
	}
	list := []string{"raw", "list", o.data}
	if o.db != "" {
		list = append(list, o.db)
	}
	out, err = c.cephVolume(slow, append(list, "--format", "json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(out, 40))
	}
	listed := map[string]rawListEntry{}
	if err := json.Unmarshal([]byte(jsonPart(out)), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("ceph-volume raw list %s %s: %v, %d OSDs:\n%s", o.data, o.db, err, len(listed), out)
	}
	for uuid, l := range listed {
		o.id, o.uuid = l.OSDID, uuid
		if l.Device != o.data || l.DeviceDB != o.db || l.DeviceWAL != "" || l.CephFSID != c.fsid || l.Type != "bluestore" {
			t.Fatalf("ceph-volume raw list: %+v; want device %s, device_db %s, no WAL, fsid %s", l, o.data, o.db, c.fsid)
		}
	}
	out, err = c.cephVolume(slow, append(withDB("raw", "activate", "--device", o.data), "--no-systemd", "--no-tmpfs")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(out, 40))
	}
	dataDir := c.path("varlib", "osd", fmt.Sprintf("%s-%d", clusterName, o.id))
	for link, want := range map[string]string{"block": o.data, "block.db": o.db} {
		if want == "" {
			if _, err := os.Lstat(dataDir + "/" + link); err == nil {
				t.Fatalf("%s has a %s link; the entry named no such device", dataDir, link)
			}
			continue
		}
		if got, err := os.Readlink(dataDir + "/" + link); err != nil || got != want {
			t.Fatalf("%s/%s -> %q (%v), want %s", dataDir, link, got, err, want)
		}
	}
	if _, err := os.Lstat(dataDir + "/block.wal"); err == nil {
		t.Fatalf("%s has a block.wal: the WAL must share the DB slot", dataDir)
	}
	t.Logf("%s (uuid %s): data %s (%s), block.db %s (%s), class %s", o.name(), o.uuid, o.data, o.dataByID, o.db, o.dbByID, class)
	node := cmp.Or(o.node, nodeName)
	o.daemon = c.e.startDaemonEnv(o.name(), rookOSDEnv(o.id, node), "ceph-osd", "--cluster", clusterName, "-c", c.conf, "-i", strconv.Itoa(o.id), "-f",
		"--crush-location", rookCrushLocation(node))
	c.daemons[o.name()] = o.daemon
	return o
}

// rookOSDEnv is what Rook's OSD pods tell Ceph about where they run (Rook v1.20
// pkg/operator/k8sutil/pod.go, ClusterDaemonEnvVars): POD_NAME makes Ceph consider itself
// in a container, and then it reports NODE_NAME (the pod's spec.nodeName) as the OSD's
// hostname in `ceph osd metadata`, which the mgr's prometheus module exports as the
// instance label of ceph_disk_occupation(_human). Prism's node label is the same
// Kubernetes node name.
func rookOSDEnv(id int, node string) []string {
	return []string{fmt.Sprintf("POD_NAME=rook-ceph-osd-%d-prismtest", id), "NODE_NAME=" + node}
}

// rookCrushLocation is the --crush-location Rook's OSD pods start with (Rook v1.20
// pkg/operator/ceph/cluster/osd: the root and the node's CRUSH host, plus the node's topology
// labels, none here): Ceph 16 names the host after the machine otherwise, NODE_NAME aside.
func rookCrushLocation(node string) string {
	return "root=default host=" + rook.CrushHost(node, "")
}

// jsonPart drops whatever ceph-volume logs before its JSON document.
func jsonPart(s string) string {
	if i := strings.Index(s, "{"); i >= 0 {
		return s[i:]
	}
	return s
}

func (c *cluster) waitOSDsUpIn(osds []*osd) {
	c.e.waitFor(3*time.Minute, "every OSD up and in", func() (bool, string) {
		for _, o := range osds {
			if !o.daemon.running() {
				c.e.t.Fatalf("%s exited: %v\n%s", o.name(), o.daemon.err, c.logTail(o.name()))
			}
		}
		var dump struct {
			OSDs []struct {
				OSD  int    `json:"osd"`
				UUID string `json:"uuid"`
				Up   int    `json:"up"`
				In   int    `json:"in"`
			} `json:"osds"`
		}
		if err := c.cephJSON(&dump, "osd", "dump"); err != nil {
			return false, err.Error()
		}
		n := 0
		for _, d := range dump.OSDs {
			for _, o := range osds {
				if d.OSD == o.id && d.UUID == o.uuid && d.Up == 1 && d.In == 1 {
					n++
				}
			}
		}
		return n == len(osds), fmt.Sprintf("%+v", dump.OSDs)
	})
}

// bluestoreLabel is one device of `ceph-bluestore-tool show-label`.
type bluestoreLabel struct {
	OSDUUID     string `json:"osd_uuid"`
	Size        int64  `json:"size"`
	Description string `json:"description"`
	CephFSID    string `json:"ceph_fsid"`
	Whoami      string `json:"whoami"`
}

func (c *cluster) showLabel(dev string) bluestoreLabel {
	out := c.e.must(quick, "ceph-bluestore-tool", "show-label", "--dev", dev)
	labels := map[string]bluestoreLabel{}
	if err := json.Unmarshal([]byte(out), &labels); err != nil {
		c.e.t.Fatalf("show-label --dev %s: %v\n%s", dev, err, out)
	}
	l, ok := labels[dev]
	if !ok {
		c.e.t.Fatalf("show-label --dev %s: no label for it: %s", dev, out)
	}
	return l
}

// checkOSD asserts, from Ceph's own tools, that the OSD's DB is its planned slot.
func (c *cluster) checkOSD(o *osd) {
	t := c.e.t
	main, db := c.showLabel(o.data), c.showLabel(o.db)
	if main.Description != "main" || main.OSDUUID != o.uuid || main.Whoami != strconv.Itoa(o.id) || main.CephFSID != c.fsid {
		t.Errorf("%s: label of %s: %+v", o.name(), o.data, main)
	}
	if db.Description != "bluefs db" || db.OSDUUID != main.OSDUUID || db.Size != o.slot.Partition.SizeBytes {
		t.Errorf("%s: label of the slot %s: %+v; want the bluefs db of osd_uuid %s, %d bytes", o.name(), o.db, db, main.OSDUUID, o.slot.Partition.SizeBytes)
	}
	t.Logf("%s: show-label %s: %q osd_uuid %s size %d; %s: %q whoami %s", o.name(), o.db, db.Description, db.OSDUUID, db.Size, o.data, main.Description, main.Whoami)

	md := c.metadata(o)
	fastName := strings.TrimPrefix(strings.TrimSuffix(o.db, "p"+strconv.Itoa(int(o.slot.Partition.Number))), "/dev/")
	want := map[string]string{
		"bluefs_dedicated_db":           "1",
		"bluefs_dedicated_wal":          "0",
		"bluefs_single_shared_device":   "0",
		"bluefs_db_partition_path":      o.db,
		"bluefs_db_dev_node":            o.db,
		"bluefs_db_devices":             fastName,
		"bluefs_db_size":                strconv.FormatInt(o.slot.Partition.SizeBytes, 10),
		"bluefs_db_rotational":          "0",
		"bluestore_bdev_partition_path": o.data,
		"bluestore_bdev_rotational":     "0",
		"osd_objectstore":               "bluestore",
	}
	for k, v := range want {
		if md[k] != v {
			t.Errorf("%s: ceph osd metadata %s = %q, want %q", o.name(), k, md[k], v)
		}
	}
	t.Logf("%s: osd metadata: dedicated db %s at %s (dev node %s, %s bytes), dedicated wal %s, bdev %s, min_alloc %q",
		o.name(), md["bluefs_dedicated_db"], md["bluefs_db_partition_path"], md["bluefs_db_dev_node"], md["bluefs_db_size"],
		md["bluefs_dedicated_wal"], md["bluestore_bdev_partition_path"], md["bluestore_min_alloc_size"])

	var class struct {
		Nodes []struct {
			ID          int    `json:"id"`
			DeviceClass string `json:"device_class"`
		} `json:"nodes"`
	}
	c.mustCephJSON(&class, "osd", "tree")
	for _, n := range class.Nodes {
		if n.ID == o.id && n.DeviceClass != deviceClass {
			t.Errorf("%s: crush device class %q, want %q", o.name(), n.DeviceClass, deviceClass)
		}
	}
}

// checkNoSpill asserts that RocksDB lives on the slot only: bytes on the DB device, none on
// the slow device.
func (c *cluster) checkNoSpill(o *osd) {
	t := c.e.t
	b := c.bluefsCounters(o)
	t.Logf("%s: bluefs db_total %d db_used %d wal_total %d wal_used %d slow_total %d slow_used %d; written wal %d sst %d slow %d",
		o.name(), b["db_total_bytes"], b["db_used_bytes"], b["wal_total_bytes"], b["wal_used_bytes"], b["slow_total_bytes"], b["slow_used_bytes"],
		b["bytes_written_wal"], b["bytes_written_sst"], b["bytes_written_slow"])
	if b["db_used_bytes"] <= 0 {
		t.Errorf("%s: db_used_bytes = %d, want > 0", o.name(), b["db_used_bytes"])
	}
	if b["slow_used_bytes"] != 0 {
		t.Errorf("%s: slow_used_bytes = %d: RocksDB spilled onto the slow device", o.name(), b["slow_used_bytes"])
	}
	// The RocksDB WAL shares the slot, as Prism plans it: BlueFS has no WAL device, yet
	// WAL bytes were written (to the DB device).
	if b["wal_total_bytes"] != 0 || b["bytes_written_wal"] <= 0 {
		t.Errorf("%s: wal_total_bytes %d, bytes_written_wal %d: want no WAL device and the WAL written on the DB slot", o.name(), b["wal_total_bytes"], b["bytes_written_wal"])
	}
	if b["bytes_written_slow"] != 0 {
		t.Errorf("%s: bytes_written_slow = %d: BlueFS wrote to the slow device", o.name(), b["bytes_written_slow"])
	}
	if b["db_total_bytes"] <= 0 || b["db_total_bytes"] > o.slot.Partition.SizeBytes {
		t.Errorf("%s: db_total_bytes = %d, want the slot (%d bytes) or a little less", o.name(), b["db_total_bytes"], o.slot.Partition.SizeBytes)
	}
}

// metadata is `ceph osd metadata N`, every value as a string.
func (c *cluster) metadata(o *osd) map[string]string {
	raw := map[string]any{}
	c.mustCephJSON(&raw, "osd", "metadata", strconv.Itoa(o.id))
	md := map[string]string{}
	for k, v := range raw {
		md[k] = fmt.Sprint(v)
	}
	return md
}
