package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ceph runs the ceph CLI in Rook's operator pod, with the admin key the operator keeps (its
// image is the Ceph image), and returns its standard output. kubectl exec, as kubebuilder's
// e2e suites drive their clusters.
func ceph(args ...string) ([]byte, error) {
	dir := "/var/lib/rook/" + cfg.cephNS
	argv := append([]string{"--kubeconfig", cfg.kubeconfig, "-n", cfg.cephNS, "exec", "deploy/rook-ceph-operator", "--",
		"ceph", "--connect-timeout", "30", "-c", dir + "/" + cfg.cephNS + ".config",
		"-k", dir + "/client.admin.keyring"}, args...)
	out, err := kubectl(nil, argv...)
	if err != nil {
		return nil, fmt.Errorf("ceph %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// kubectl runs the kubectl binary with argv (each caller places --kubeconfig: a plugin takes
// it after its own name) and extra environment; it returns the standard output, and an error
// that carries the standard error.
func kubectl(env []string, argv ...string) ([]byte, error) {
	cmd := exec.Command(cfg.kubectl, argv...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// osdState is one OSD of `ceph osd dump`: up_from is the epoch its daemon last came up in, so
// an unchanged up_from means the daemon did not restart.
type osdState struct {
	OSD    int `json:"osd"`
	Up     int `json:"up"`
	In     int `json:"in"`
	UpFrom int `json:"up_from"`
}

func osdDump(g Gomega) map[int]osdState {
	out, err := ceph("osd", "dump", "--format", "json")
	g.Expect(err).NotTo(HaveOccurred())
	var dump struct {
		OSDs []osdState `json:"osds"`
	}
	g.Expect(json.Unmarshal(out, &dump)).To(Succeed(), "osd dump: %s", out)
	m := map[int]osdState{}
	for _, o := range dump.OSDs {
		m[o.OSD] = o
	}
	return m
}

// osdMetadata is `ceph osd metadata` by OSD id: what each daemon reports of its devices.
func osdMetadata(g Gomega) map[int]map[string]any {
	out, err := ceph("osd", "metadata", "--format", "json")
	g.Expect(err).NotTo(HaveOccurred())
	var list []map[string]any
	g.Expect(json.Unmarshal(out, &list)).To(Succeed(), "osd metadata: %s", out)
	m := map[int]map[string]any{}
	for _, o := range list {
		id, ok := o["id"].(float64)
		g.Expect(ok).To(BeTrue(), "osd metadata without an id: %v", o)
		m[int(id)] = o
	}
	return m
}

// deviceClasses is each OSD's CRUSH device class (`ceph osd tree`).
func deviceClasses(g Gomega) map[int]string {
	out, err := ceph("osd", "tree", "--format", "json")
	g.Expect(err).NotTo(HaveOccurred())
	var tree struct {
		Nodes []struct {
			ID          int    `json:"id"`
			Type        string `json:"type"`
			DeviceClass string `json:"device_class"`
		} `json:"nodes"`
	}
	g.Expect(json.Unmarshal(out, &tree)).To(Succeed(), "osd tree: %s", out)
	m := map[int]string{}
	for _, n := range tree.Nodes {
		if n.Type == "osd" {
			m[n.ID] = n.DeviceClass
		}
	}
	return m
}

// osdOn is the OSD whose data is on the disk with that kernel name, from its metadata; -1 if none.
func osdOn(meta map[int]map[string]any, disk string) int {
	for id, m := range meta {
		if slices.Contains(devList(m["bluestore_bdev_devices"]), disk) {
			return id
		}
	}
	return -1
}

// devList is a metadata field of comma-separated kernel names.
func devList(v any) []string {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// expectDBOnPrismSlot checks, from what the OSD daemon itself reports, that its data is on the
// data disk and its BlueFS DB on the fast disk, dedicated, exactly the size of Prism's slot:
// its logical volume (decision 0036), or its partition when Rook was handed the partition.
func expectDBOnPrismSlot(m map[string]any, host, dataDisk, fastDisk string, dbBytes int64) {
	GinkgoWriter.Printf("osd.%v metadata: objectstore %v, devices %v, bdev %v (%v bytes), db %v (%v bytes, dedicated %v, %v), version %v\n",
		m["id"], m["osd_objectstore"], m["devices"], m["bluestore_bdev_devices"], m["bluestore_bdev_size"],
		m["bluefs_db_devices"], m["bluefs_db_size"], m["bluefs_dedicated_db"], m["bluefs_db_partition_path"], m["ceph_version"])
	Expect(m).To(HaveKeyWithValue("osd_objectstore", "bluestore"))
	Expect(devList(m["bluestore_bdev_devices"])).To(Equal([]string{dataDisk}), "data device")
	Expect(m).To(HaveKeyWithValue("bluefs_dedicated_db", "1"))
	Expect(devList(m["bluefs_db_devices"])).To(Equal([]string{fastDisk}), "BlueFS DB device")
	Expect(m).To(HaveKeyWithValue("bluefs_db_size", strconv.FormatInt(dbBytes, 10)), "BlueFS DB size against Prism's slot")
	Expect(m).To(HaveKeyWithValue("hostname", host))
}

// osdPod is what shows a Rook OSD pod restarted: a new pod, or a container restart.
type osdPod struct {
	uid      string
	restarts int32
}

// osdPods are Rook's OSD pods on the suite's node, by their ceph-osd-id label.
func osdPods(g Gomega) map[string]osdPod {
	pods := &corev1.PodList{}
	g.Expect(k8s.List(ctx(), pods, client.InNamespace(cfg.cephNS), client.MatchingLabels{"app": "rook-ceph-osd"})).To(Succeed())
	m := map[string]osdPod{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != cfg.node || p.DeletionTimestamp != nil {
			continue
		}
		var r int32
		for _, c := range p.Status.ContainerStatuses {
			r += c.RestartCount
		}
		m[p.Labels["ceph-osd-id"]] = osdPod{uid: string(p.UID), restarts: r}
	}
	return m
}

// osdsUp is the number of OSDs up and in.
func osdsUp(d map[int]osdState) int {
	n := 0
	for _, o := range d {
		if o.Up == 1 && o.In == 1 {
			n++
		}
	}
	return n
}
