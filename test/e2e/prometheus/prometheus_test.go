package prometheus

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/prism-storage/prism/test/support/panelcheck"
)

// TestConfigPassesPromtool: Debian's promtool (hack/packages.txt, test), the same build as the
// image's prometheus, accepts the configuration (2.42's does not read the targets file:
// TestPrometheusScrapesWithTheToken runs them).
func TestConfigPassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool (hack/install-deps.sh test)")
	}
	dir := t.TempDir()
	cm, err := ConfigMap([]Target{{"10.244.0.5:9464", "node-1", "prism-agent-abcde"}, {"10.244.1.7:9464", "node-2", "prism-agent-fghij"}})
	if err != nil {
		t.Fatal(err)
	}
	// promtool reads the token and the targets: point it at files in dir.
	cfg := strings.NewReplacer(tokenFile, filepath.Join(dir, "token"), configDir, dir).Replace(cm.Data["prometheus.yml"])
	for name, body := range map[string]string{"token": "t", "targets.json": cm.Data["targets.json"], "prometheus.yml": cfg} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(promtool, "check", "config", filepath.Join(dir, "prometheus.yml")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "is valid prometheus config file syntax") {
		t.Fatalf("promtool check config: %v\n%s\n%s", err, out, cfg)
	}
}

// TestConfigScrapesTheAgentsAsThePodMonitor: one job over HTTPS with the pod's own token, the
// agents' own node labels honoured, the targets from the ConfigMap's file, each labelled with
// its node (up{} too) and pod; a target without them is refused.
func TestConfigScrapesTheAgentsAsThePodMonitor(t *testing.T) {
	var cfg struct {
		Global        map[string]string `json:"global"`
		ScrapeConfigs []struct {
			JobName       string            `json:"job_name"`
			Scheme        string            `json:"scheme"`
			TLS           map[string]bool   `json:"tls_config"`
			HonorLabels   bool              `json:"honor_labels"`
			Authorization map[string]string `json:"authorization"`
			FileSD        []struct {
				Files   []string `json:"files"`
				Refresh string   `json:"refresh_interval"`
			} `json:"file_sd_configs"`
		} `json:"scrape_configs"`
	}
	if err := yaml.UnmarshalStrict([]byte(Config()), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Global["scrape_interval"] != ScrapeInterval || len(cfg.ScrapeConfigs) != 1 {
		t.Fatalf("config %+v", cfg)
	}
	s := cfg.ScrapeConfigs[0]
	if s.JobName != Job || s.Scheme != "https" || !s.HonorLabels || s.Authorization["credentials_file"] != tokenFile {
		t.Errorf("job %+v", s)
	}
	if len(s.FileSD) != 1 || strings.Join(s.FileSD[0].Files, ",") != configDir+"/targets.json" {
		t.Errorf("file_sd_configs %+v", s.FileSD)
	}
	got, err := Targets([]Target{{"10.244.0.5:9464", "node-1", "prism-agent-abcde"}})
	if want := `[{"targets":["10.244.0.5:9464"],"labels":{"node":"node-1","pod":"prism-agent-abcde"}}]`; err != nil || got != want {
		t.Errorf("Targets = %s, %v; want %s", got, err, want)
	}
	if _, err := Targets([]Target{{"10.244.0.5:9464", "", "prism-agent-abcde"}}); err == nil {
		t.Error("a target without a node: no error")
	}
}

// TestObjects: the ServiceAccount is bound to the chart's prism-metrics-reader; the pod runs on the named node, from the imported image, under
// Pod Security restricted's rules, with a memory limit; the Service's fixed address is URL's
// and lies in the API server's static band of 10.96.0.0/16.
func TestObjects(t *testing.T) {
	objs, err := Objects("node-1", "img:v1", []Target{{"10.244.0.5:9464", "node-1", "prism-agent-abcde"}})
	if err != nil {
		t.Fatal(err)
	}
	var crb *rbacv1.ClusterRoleBinding
	var dep *appsv1.Deployment
	var svc *corev1.Service
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.ClusterRoleBinding:
			crb = o
		case *appsv1.Deployment:
			dep = o
		case *corev1.Service:
			svc = o
		}
	}
	if _, ok := objs[0].(*corev1.Namespace); !ok || objs[0].GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("first object %T %v: want the restricted namespace", objs[0], objs[0].GetLabels())
	}
	rbac, err := os.ReadFile("../../../charts/prism/templates/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if crb == nil || crb.RoleRef.Name != "prism-metrics-reader" || !strings.Contains(string(rbac), "name: "+crb.RoleRef.Name+"\n") ||
		len(crb.Subjects) != 1 || crb.Subjects[0].Name != Name || crb.Subjects[0].Namespace != Namespace {
		t.Errorf("ClusterRoleBinding %+v", crb)
	}
	if dep == nil {
		t.Fatal("no Deployment")
	}
	if cm := dep.Spec.Template.Spec.Volumes[0].ConfigMap; cm == nil || cm.Name != Name {
		t.Errorf("the config volume %+v is not the ConfigMap %s", dep.Spec.Template.Spec.Volumes[0], Name)
	}
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	if pod.NodeName != "node-1" || pod.ServiceAccountName != Name || c.Image != "img:v1" || c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("pod %+v", pod)
	}
	if !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		*c.SecurityContext.AllowPrivilegeEscalation || len(c.SecurityContext.Capabilities.Drop) != 1 || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("security %+v %+v", pod.SecurityContext, c.SecurityContext)
	}
	if c.Resources.Limits.Memory().IsZero() {
		t.Error("no memory limit")
	}
	if svc == nil || svc.Spec.ClusterIP != ClusterIP || URL != "http://"+ClusterIP+":9090" || svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name {
		t.Errorf("Service %+v, URL %s", svc, URL)
	}
	if !netip.MustParsePrefix("10.96.0.0/24").Contains(netip.MustParseAddr(svc.Spec.ClusterIP)) {
		t.Errorf("ClusterIP %s is not in 10.96.0.0/24", svc.Spec.ClusterIP)
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, the pod has %q", k, v, dep.Spec.Template.Labels[k])
		}
	}
}

// TestPrometheusScrapesWithTheToken: Debian's prometheus (hack/packages.txt, test; the image's
// build) run with Config and the ConfigMap's targets, its scrape interval shortened, scrapes an
// HTTPS endpoint with a self-signed certificate sending the token file's token, keeps the
// series' own node label and gives up{} the target's node and pod.
func TestPrometheusScrapesWithTheToken(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus (hack/install-deps.sh test)")
	}
	agent := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer the-token" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprintln(w, `prism_device_info{node="node-1",device="nvme0n1"} 1`)
	}))
	defer agent.Close()
	dir := t.TempDir()
	cm, err := ConfigMap([]Target{{strings.TrimPrefix(agent.URL, "https://"), "node-1", "prism-agent-abcde"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.NewReplacer(tokenFile, filepath.Join(dir, "token"), configDir, dir, "scrape_interval: "+ScrapeInterval, "scrape_interval: 1s",
		"scrape_timeout: 10s", "scrape_timeout: 1s").Replace(cm.Data["prometheus.yml"])
	for name, body := range map[string]string{"token": "the-token\n", "targets.json": cm.Data["targets.json"], "prometheus.yml": cfg} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	prom := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	var up, info []string
	for time.Now().Before(deadline) {
		up, _ = panelcheck.Labels(ctx, prom, `up{job="`+Job+`"} == 1`, "node")
		info, _ = panelcheck.Labels(ctx, prom, `prism_device_info{pod="prism-agent-abcde"}`, "node")
		if len(up) == 1 && len(info) == 1 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if strings.Join(up, ",") != "node-1" || strings.Join(info, ",") != "node-1" {
		t.Fatalf("up{} == 1 on nodes %q, prism_device_info on nodes %q; want node-1 for both\n%s", up, info, log.String())
	}
}
