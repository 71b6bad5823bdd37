// Tests of the two-node e2e (PRISM_E2E_NODES=2, docs/decisions/0054-two-nodes-in-the-e2e.md)
// that run without a guest: the QEMU arguments hack/guest/run.sh builds for each node (QEMU
// replaced by a script that records them), the wiring in hack/e2e/run.sh, and the functions of
// hack/e2e/guest-cluster.sh that set up each node's link, CNI range and credentials, run with
// bash against stubs. None of it proves the guests boot or talk: that has not run yet.
package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func needBash(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
}

// bashOut runs SCRIPT with bash and ARGS, and returns its stdout.
func bashOut(t *testing.T, env []string, script string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"-c", script, "bash"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		t.Logf("stderr: %s", ee.Stderr)
	}
	return string(out), err
}

// fakeQEMU records its arguments, one a line, in $QEMU_ARGV and answers as a guest whose
// script exited 0 (the rc file of the share).
const fakeQEMU = `#!/bin/bash
printf '%s\n' "$@" >"$QEMU_ARGV"
echo 0 >"$FAKE_SHARE/rc"
`

// guestArgv runs a copy of hack/guest/run.sh (beside a build.sh that prints a fake guest) with
// ARGS plus --run, --share and --workdir, and returns QEMU's arguments and the exit status.
func guestArgv(t *testing.T, args ...string) ([]string, error) {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("../guest/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	guest := filepath.Join(dir, "guest")
	share := filepath.Join(dir, "share")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{guest, share, bin, filepath.Join(dir, "hack")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"hack/run.sh":            string(src),
		"hack/build.sh":          "#!/bin/bash\necho " + guest + "\n",
		"bin/qemu-system-x86_64": fakeQEMU,
		"guest/base.cpio":        "",
		"guest/vmlinuz":          "",
		"script.sh":              "true\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	argv := filepath.Join(dir, "argv")
	cmd := exec.Command(filepath.Join(dir, "hack/run.sh"), append([]string{"--run", filepath.Join(dir, "script.sh"),
		"--share", share, "--workdir", filepath.Join(dir, "vm"), "--timeout", "20"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "QEMU_ARGV="+argv, "FAKE_SHARE="+share)
	out, runErr := cmd.CombinedOutput()
	b, err := os.ReadFile(argv)
	if err != nil {
		if runErr == nil {
			t.Fatalf("QEMU was not started: %s", out)
		}
		return nil, runErr
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n"), runErr
}

// after is, in ARGV, the value of the first FLAG whose value starts with PREFIX, or "".
func after(argv []string, flag, prefix string) string {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == flag && strings.HasPrefix(argv[i+1], prefix) {
			return argv[i+1]
		}
	}
	return ""
}

// TestGuestRunLink: without --link QEMU's arguments have no NIC (-nic none) and no netdev, as
// before; with it, a virtio-net NIC with the fixed MAC on a dgram netdev bound to 127.0.0.1 only,
// and --share-tag a second 9p share. Bad values stop the script before QEMU, naming the option.
func TestGuestRunLink(t *testing.T) {
	needBash(t)
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("no cpio")
	}
	plain, err := guestArgv(t)
	if err != nil {
		t.Fatalf("default: %v", err)
	}
	joined := strings.Join(plain, " ")
	if !strings.Contains(joined, "-nic none") || strings.Contains(joined, "-netdev") || strings.Contains(joined, "virtio-net") {
		t.Errorf("default argv has a NIC or netdev, or lacks -nic none: %s", joined)
	}
	xfer := t.TempDir()
	argv, err := guestArgv(t, "--link", "40010:40011", "--mac", "52:54:00:e2:e0:01", "--share-tag", "prism-xfer="+xfer)
	if err != nil {
		t.Fatalf("with --link: %v", err)
	}
	for _, c := range []struct{ flag, prefix, want string }{
		{"-netdev", "dgram", "dgram,id=link0,local.type=inet,local.host=127.0.0.1,local.port=40010,remote.type=inet,remote.host=127.0.0.1,remote.port=40011"},
		{"-device", "virtio-net-pci", "virtio-net-pci,netdev=link0,mac=52:54:00:e2:e0:01"},
		{"-virtfs", "local,path=" + xfer + ",", "local,path=" + xfer + ",mount_tag=prism-xfer,security_model=none,id=prism-xfer"},
		{"-nic", "", "none"},
	} {
		if got := after(argv, c.flag, c.prefix); got != c.want {
			t.Errorf("%s %q, want %q (argv %q)", c.flag, got, c.want, argv)
		}
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"link without mac", []string{"--link", "40010:40011"}},
		{"mac without link", []string{"--mac", "52:54:00:e2:e0:01"}},
		{"upper-case mac", []string{"--link", "40010:40011", "--mac", "52:54:00:E2:E0:01"}},
		{"multicast mac", []string{"--link", "40010:40011", "--mac", "53:54:00:e2:e0:01"}},
		{"one port", []string{"--link", "40010", "--mac", "52:54:00:e2:e0:01"}},
		{"the same port twice", []string{"--link", "40010:40010", "--mac", "52:54:00:e2:e0:01"}},
		{"port out of range", []string{"--link", "40010:70000", "--mac", "52:54:00:e2:e0:01"}},
		{"tag prism (the main share's)", []string{"--share-tag", "prism=" + xfer}},
		{"tag without a directory", []string{"--share-tag", "prism-xfer=" + filepath.Join(xfer, "none")}},
	} {
		if argv, err := guestArgv(t, c.args...); err == nil || argv != nil {
			t.Errorf("%s: QEMU started with %q (err %v); want exit 2 before it", c.name, argv, err)
		} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("%s: %v, want exit status 2", c.name, err)
		}
	}
}

// runFunctions is hack/e2e/run.sh's two-node functions.
func runFunctions(t *testing.T) string {
	src := read(t, "run.sh")
	var fns string
	for _, name := range []string{"node_mac", "link_ports", "node_env", "node2_env", "guest_link_args", "node2_drives"} {
		m := regexp.MustCompile(`(?ms)^` + name + `\(\) \{.*?\n\}\n|^` + name + `\(\) \{[^\n]*\}\n`).FindString(src)
		if m == "" {
			t.Fatalf("run.sh: no function %s", name)
		}
		fns += m
	}
	return fns
}

// TestTwoNodeGuestsAreLinkedToEachOther: the two guests run.sh starts have different fixed MACs,
// each bound to the port the other sends to (QEMU's arguments as hack/guest/run.sh builds them
// from guest_link_args), the same hand-over directory, and each the env lines its guest script
// reads; node 2's env file is node 1's with only those lines changed.
func TestTwoNodeGuestsAreLinkedToEachOther(t *testing.T) {
	needBash(t)
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("no cpio")
	}
	fns := runFunctions(t)
	ports, err := bashOut(t, nil, fns+`link_ports 12345`)
	if err != nil || strings.TrimSpace(ports) != "44690 44691" {
		t.Fatalf("link_ports 12345 = %q, %v; want 44690 44691", ports, err)
	}
	xfer := t.TempDir()
	var argvs [2][]string
	for i, n := range []string{"1", "2"} {
		out, err := bashOut(t, nil, fns+`guest_link_args "$1" 44690 44691 "$2"`, n, xfer)
		if err != nil {
			t.Fatal(err)
		}
		argvs[i], err = guestArgv(t, strings.Split(strings.TrimSpace(out), "\n")...)
		if err != nil {
			t.Fatalf("node %s: hack/guest/run.sh %s: %v", n, out, err)
		}
	}
	port := regexp.MustCompile(`local\.port=(\d+),.*remote\.port=(\d+)$`)
	a := port.FindStringSubmatch(after(argvs[0], "-netdev", "dgram"))
	b := port.FindStringSubmatch(after(argvs[1], "-netdev", "dgram"))
	if a == nil || b == nil || a[1] != b[2] || a[2] != b[1] || a[1] == a[2] {
		t.Errorf("node 1 netdev ports %v, node 2 %v: want each bound where the other sends", a, b)
	}
	mac1, mac2 := after(argvs[0], "-device", "virtio-net-pci"), after(argvs[1], "-device", "virtio-net-pci")
	if mac1 == "" || mac1 == mac2 {
		t.Errorf("NICs %q and %q: want two, with different MACs", mac1, mac2)
	}
	for i := range argvs {
		if got := after(argvs[i], "-virtfs", "local,path="+xfer+","); !strings.Contains(got, "mount_tag=prism-xfer") {
			t.Errorf("node %d: no prism-xfer share of %s: %q", i+1, xfer, argvs[i])
		}
	}
	// The env file: node 1's gets node_env 1 appended; node 2's is the same file with node 2's lines.
	env := filepath.Join(t.TempDir(), "prism-e2e.env")
	base := "E2E_STAGE=chain\nE2E_TIMEOUT=900\nPATH=/mnt/host/bin:/usr/bin\n"
	if err := os.WriteFile(env, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := bashOut(t, nil, fns+`node_env 1 >>"$1"; cat "$1"; echo ---; node2_env "$1"`, env)
	if err != nil {
		t.Fatal(err)
	}
	one, two, _ := strings.Cut(out, "---\n")
	if want := base + "E2E_NODES=2\nE2E_NODE=1\nE2E_NIC_MAC=52:54:00:e2:e0:01\n"; one != want {
		t.Errorf("node 1's env file:\n%s\nwant\n%s", one, want)
	}
	if want := base + "E2E_NODES=2\nE2E_NODE=2\nE2E_NIC_MAC=52:54:00:e2:e0:02\n"; two != want {
		t.Errorf("node 2's env file:\n%s\nwant\n%s", two, want)
	}
	if !strings.Contains(mac1, "mac=52:54:00:e2:e0:01") || !strings.Contains(mac2, "mac=52:54:00:e2:e0:02") {
		t.Errorf("the NICs' MACs (%q, %q) are not the ones the env files name", mac1, mac2)
	}
	// Node 2's drives: the chain's sizes and models, serials of its own.
	drives, err := bashOut(t, nil, fns+`node2_drives 400088457216 30725971992576`)
	if want := "sparse:400088457216 PRISM-E2E2-FAST INTEL SSDPF21Q400GB\nsparse:30725971992576 PRISM-E2E2-QLC INTEL SSDPF2NV307TZ\n"; err != nil || drives != want {
		t.Errorf("node2_drives = %q, %v; want %q", drives, err, want)
	}
	run := read(t, "run.sh")
	for _, serial := range regexp.MustCompile(`PRISM-E2E-[A-Z0-9]+`).FindAllString(run, -1) {
		if strings.Contains(drives, serial+" ") {
			t.Errorf("node 2 has node 1's serial %s", serial)
		}
	}
	// The guest script mounts the share by the tag run.sh gives it.
	if !strings.Contains(read(t, "guest-cluster.sh"), "prism-xfer /mnt/xfer") {
		t.Error("guest-cluster.sh does not mount the prism-xfer share at /mnt/xfer")
	}
	for _, want := range []string{`"${link1[@]}" $keep >"$work/console.log"`, `"${link2[@]}" $keep >"$work/console-2.log" 2>&1 &`,
		`node_env 1 >>"$work/overlay/etc/prism-e2e.env"`, `node2_env "$work/overlay/etc/prism-e2e.env" >"$work/overlay-2/etc/prism-e2e.env"`} {
		if !strings.Contains(run, want) {
			t.Errorf("run.sh lacks %s", want)
		}
	}
}

// The bridge network's configuration of every one-node run until now (guest-cluster.sh before
// the two-node change): one node must get exactly this file.
const oneNodeConflist = `{
  "cniVersion": "1.0.0",
  "name": "prism-e2e",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

// TestTwoNodeNetworkSetup: each node's identity, the NIC found by its MAC, the commands that put
// its address, the route to the other node's pods and the default route on it (ip and modprobe
// stubbed), and its CNI range: one node's configuration byte for byte as before, two nodes'
// their own ranges without masquerade.
func TestTwoNodeNetworkSetup(t *testing.T) {
	needBash(t)
	src := read(t, "guest-cluster.sh")
	// cni_conflist's here-document has a "}" line of its own: the function ends at "EOF\n}".
	conflist := regexp.MustCompile(`(?ms)^cni_conflist\(\) \{\n.*?^EOF\n\}\n`).FindString(src)
	if conflist == "" {
		t.Fatal("guest-cluster.sh: no function cni_conflist")
	}
	fns := function(t, src, "node_identity") + function(t, src, "nic_by_mac") + function(t, src, "two_node_link") + conflist
	for n, want := range map[string]string{
		"1": "prism-guest 10.250.0.1 10.244.0.0/24 10.250.0.2 10.244.1.0/24",
		"2": "prism-guest-2 10.250.0.2 10.244.1.0/24 10.250.0.1 10.244.0.0/24",
	} {
		if got, err := bashOut(t, nil, fns+`node_identity "$1"`, n); err != nil || strings.TrimSpace(got) != want {
			t.Errorf("node_identity %s = %q, %v; want %q", n, got, err, want)
		}
	}
	if _, err := bashOut(t, nil, fns+`node_identity 3`); err == nil {
		t.Error("node_identity 3 succeeded; want an error")
	}
	sys := t.TempDir()
	for name, mac := range map[string]string{"lo": "00:00:00:00:00:00", "enp0s3": "52:54:00:e2:e0:02", "cni0": "52:54:00:e2:e0:0a"} {
		if err := os.MkdirAll(filepath.Join(sys, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sys, name, "address"), []byte(mac+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := bashOut(t, nil, fns+`nic_by_mac "$1" "$2"`, "52:54:00:e2:e0:02", sys); err != nil || strings.TrimSpace(got) != "enp0s3" {
		t.Errorf("nic_by_mac = %q, %v; want enp0s3", got, err)
	}
	if got, err := bashOut(t, nil, fns+`nic_by_mac "$1" "$2"`, "52:54:00:e2:e0:01", sys); err == nil {
		t.Errorf("nic_by_mac of an absent MAC = %q; want an error", got)
	}
	// two_node_link with node 2's identity, the NIC under the stubbed sysfs.
	stubs := `modprobe() { echo "modprobe $*"; }; ip() { echo "ip $*"; }; sleep() { :; }
nic_by_mac() { [[ $1 == 52:54:00:e2:e0:02 ]] && echo enp0s3; }
read -r name addr pods peer peer_pods <<<"$(node_identity 2)"
`
	got, err := bashOut(t, nil, fns+stubs+`two_node_link "$1" "$addr" "$peer" "$peer_pods"`, "52:54:00:e2:e0:02")
	want := "modprobe virtio_net\nip addr add 10.250.0.2/24 dev enp0s3\nip link set enp0s3 up\n" +
		"ip route add 10.244.0.0/24 via 10.250.0.1 dev enp0s3\nip route add default dev enp0s3\n"
	if err != nil || got != want {
		t.Errorf("two_node_link (node 2):\n%s(%v)\nwant\n%s", got, err, want)
	}
	if got, err := bashOut(t, nil, fns+stubs+`two_node_link "$1" "$addr" "$peer" "$peer_pods"`, "52:54:00:e2:e0:01"); err == nil || strings.Contains(got, "ip ") {
		t.Errorf("two_node_link without the NIC: %q, %v; want an error and no ip command", got, err)
	}
	// CNI: one node exactly as before; two nodes their own ranges, no masquerade.
	if got, err := bashOut(t, nil, fns+`cni_conflist 10.244.0.0/24 true`); err != nil || got != oneNodeConflist {
		t.Errorf("one node's conflist changed:\n%s\nwant\n%s", got, oneNodeConflist)
	}
	if !strings.Contains(src, "node_name=prism-guest node_ip=10.250.0.1 pod_cidr=10.244.0.0/24 ip_masq=true\n") ||
		!strings.Contains(src, `cni_conflist "$pod_cidr" "$ip_masq" >/etc/cni/net.d/10-prism-e2e.conflist`) {
		t.Error("guest-cluster.sh: one node's defaults or the conflist's call changed")
	}
	for _, n := range []string{"1", "2"} {
		out, err := bashOut(t, nil, fns+`read -r _ _ pods _ <<<"$(node_identity "$1")"; cni_conflist "$pods" false`, n)
		var conf struct {
			Plugins []struct {
				IPMasq *bool `json:"ipMasq"`
				IPAM   struct {
					Ranges [][]struct{ Subnet string } `json:"ranges"`
				} `json:"ipam"`
			} `json:"plugins"`
		}
		if err != nil || json.Unmarshal([]byte(out), &conf) != nil || len(conf.Plugins) != 2 {
			t.Fatalf("node %s: conflist %q, %v: not two plugins of JSON", n, out, err)
		}
		p := conf.Plugins[0]
		want := map[string]string{"1": "10.244.0.0/24", "2": "10.244.1.0/24"}[n]
		if p.IPMasq == nil || *p.IPMasq || len(p.IPAM.Ranges) != 1 || p.IPAM.Ranges[0][0].Subnet != want {
			t.Errorf("node %s: bridge %+v, want subnet %s and ipMasq false", n, p, want)
		}
	}
}

// TestTwoNodeCredentialHandOver: node 1's handover writes, with its own kubeconfig function and
// tokens, node 2's kubeconfigs naming node 1's apiserver and node 2's own node user, and the CA;
// node 2's take_over puts them where node 1 keeps its own. One node's kubeconfigs keep
// 127.0.0.1.
func TestTwoNodeCredentialHandOver(t *testing.T) {
	needBash(t)
	src := read(t, "guest-cluster.sh")
	kubeconfig := regexp.MustCompile(`(?ms)^kubeconfig\(\) \{ # FILE USER \[SERVER\]\n.*?^\}\n`).FindString(src)
	if kubeconfig == "" {
		t.Fatal("guest-cluster.sh: no kubeconfig FILE USER [SERVER] function")
	}
	fns := kubeconfig + function(t, src, "handover") + function(t, src, "take_over")
	dir := t.TempDir()
	node1, node2, xfer := filepath.Join(dir, "n1/etc/kubernetes"), filepath.Join(dir, "n2/etc/kubernetes"), filepath.Join(dir, "xfer")
	for _, d := range []string{node1 + "/pki", xfer} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(node1+"/pki/ca.crt", []byte("the CA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fns + `declare -A tokens=([admin]=tA [system:kube-proxy]=tP [system:node:prism-guest-2]=tN2 [system:node:prism-guest]=tN1)
pki=$1/pki
kubeconfig "$1/kubelet.conf" system:node:prism-guest
handover "$3" || exit 1
pki=$2/pki
take_over "$3"`
	if _, err := bashOut(t, nil, script, node1, node2, xfer); err != nil {
		t.Fatalf("handover and take_over: %v", err)
	}
	if b, err := os.ReadFile(node1 + "/kubelet.conf"); err != nil || !strings.Contains(string(b), `server: "https://127.0.0.1:6443"`) {
		t.Errorf("node 1's own kubeconfig: %q, %v; want the apiserver at 127.0.0.1 as before", b, err)
	}
	for file, user := range map[string]string{"kubelet.conf": "tN2", "proxy.conf": "tP", "admin.conf": "tA"} {
		b, err := os.ReadFile(filepath.Join(node2, file))
		if err != nil {
			t.Errorf("node 2 has no %s: %v", file, err)
			continue
		}
		for _, want := range []string{`server: "https://10.250.0.1:6443"`, "certificate-authority: " + node1 + "/pki/ca.crt", `token: "` + user + `"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("node 2's %s lacks %s:\n%s", file, want, b)
			}
		}
	}
	if b, err := os.ReadFile(node2 + "/pki/ca.crt"); err != nil || string(b) != "the CA\n" {
		t.Errorf("node 2's CA: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(xfer, "node2.tmp")); err == nil {
		t.Error("handover left node2.tmp behind")
	}
	// The wiring: node 1 adds node 2's user before writing kubeconfigs, hands over after them;
	// node 2 waits for the directory, and skips the control plane for node 1's apiserver.
	for _, want := range []string{
		"[[ ${E2E_NODES:-1} != 2 ]] || user system:node:prism-guest-2 system:nodes\n",
		`handover /mnt/xfer || fail`,
		`wait_for "$((3 * E2E_TIMEOUT))" "node 1's credentials for node 2" test -d /mnt/xfer/node2`,
		`wait_for "$((3 * E2E_TIMEOUT))" "node 1's apiserver ready" k get --raw /readyz`,
	} {
		if !strings.Contains(src, want) {
			t.Errorf("guest-cluster.sh lacks %s", want)
		}
	}
	if strings.Index(src, "user system:node:prism-guest-2") > strings.Index(src, "kubeconfig /etc/kubernetes/admin.conf admin") ||
		strings.Index(src, "handover /mnt/xfer") < strings.Index(src, "kubeconfig /etc/kubernetes/proxy.conf system:kube-proxy") {
		t.Error("guest-cluster.sh: node 2's token must exist before the kubeconfigs, the hand-over come after them")
	}
}

// TestGuestBuildHasVirtioNet: the forky guest's module list names virtio_net (its dependencies
// net_failover and failover come from the kernel's modules.dep).
func TestGuestBuildHasVirtioNet(t *testing.T) {
	build := read(t, "../guest/build.sh")
	if !strings.Contains(build, "kernel/drivers/net/virtio_net.ko.xz kernel/drivers/net/virtio_net.ko\n") {
		t.Error("hack/guest/build.sh does not copy virtio_net into the e2e guest")
	}
}

// TestTwoNodeSuiteWiring: with two nodes node 1 hands the suite node 2's name as node_identity
// gives it, in the variable test/e2e reads for its two-node specs.
func TestTwoNodeSuiteWiring(t *testing.T) {
	needBash(t)
	src := read(t, "guest-cluster.sh")
	name, err := bashOut(t, nil, function(t, src, "node_identity")+`read -r name _ <<<"$(node_identity 2)"; echo "$name"`)
	if err != nil {
		t.Fatal(err)
	}
	want := "PRISM_E2E_NODE2=" + strings.TrimSpace(name)
	if stage := function(t, src, "prism_stage"); !strings.Contains(stage, want) {
		t.Errorf("prism_stage does not give the suite %s", want)
	}
	if !strings.Contains(read(t, "../../test/e2e/e2e_suite_test.go"), `os.Getenv("PRISM_E2E_NODE2")`) {
		t.Error("test/e2e does not read PRISM_E2E_NODE2")
	}
}
