package envtest

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/prism-storage/prism/internal/kube/access"
	"github.com/prism-storage/prism/internal/kube/operatormetrics"
	"github.com/prism-storage/prism/internal/kube/serving"
	"github.com/prism-storage/prism/internal/node/agentclient"
	"github.com/prism-storage/prism/internal/node/exporter"
	"github.com/prism-storage/prism/internal/node/metricsauth"
	"github.com/prism-storage/prism/internal/webui"
)

// TestEndpointsAskWhoCalls starts every endpoint Prism serves as the binaries wire them, each
// with its own service account's rights (config/rbac), and calls them as the API server's real
// TokenReview and SubjectAccessReview see the caller: no token (401), an unknown token (401), a
// service account without the role (403), one with the role (200). The roles are the chart's:
// prism-metrics-reader (get /metrics) and prism-endurance-reader (get storagenodes).
func TestEndpointsAskWhoCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ns := unique("endpoints")
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bindClusterRole(t, ns, "prism-metrics-reader", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}, "prometheus")
	bindClusterRole(t, ns, "prism-endurance-reader", rbacv1.PolicyRule{APIGroups: []string{"prism.storage.io"}, Resources: []string{"storagenodes"}, Verbs: []string{"get"}}, "storage-admin")
	tokens := map[string]string{"": "", "forged": "not-a-token"}
	for _, sa := range []string{"prometheus", "storage-admin", "stranger"} {
		tokens[sa] = serviceAccountToken(t, cs, ns, sa)
	}

	opCfg := operatorConfig(t)
	installAgentAccess(t)
	agentCfg := agentConfig("endpoints-node")

	// The operator's metrics: controller-runtime's server with the options cmd/manager gives it.
	opAddr := freeAddr(t)
	opHTTP, err := rest.HTTPClientFor(opCfg)
	if err != nil {
		t.Fatal(err)
	}
	opMetrics, err := metricsserver.NewServer(operatormetrics.Options(opAddr, true, ""), opCfg, opHTTP)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = opMetrics.Start(ctx) }()

	// The agent's metrics, wired as cmd/agent wires them, reviewing with the agent's identity.
	agentAddr := freeAddr(t)
	ac, err := agentclient.New(agentCfg, "prism-agent")
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := serving.TLSConfig("")
	if err != nil {
		t.Fatal(err)
	}
	ep := exporter.Endpoint{Addr: agentAddr, TLS: tlsCfg, Guard: (&metricsauth.Filter{Reviewer: ac}).Wrap}
	go func() {
		_ = exporter.Serve(ctx, ep, time.Hour, &exporter.Exporter{Node: "endpoints-node"}, &exporter.LatestDevices{})
	}()

	// The endurance page and its query proxy, reviewing with the operator's identity.
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	t.Cleanup(prom.Close)
	reviews, err := access.New(opCfg, opHTTP)
	if err != nil {
		t.Fatal(err)
	}
	pageAddr := freeAddr(t)
	go func() { _ = (&webui.Server{Addr: pageAddr, PrometheusURL: prom.URL, Access: reviews}).Start(ctx) }()

	endpoints := []struct {
		name, url, holder, body string
	}{
		{"operator metrics", "https://" + opAddr + "/metrics", "prometheus", "go_goroutines"},
		{"agent metrics", "https://" + agentAddr + "/metrics", "prometheus", "go_goroutines"},
		{"endurance page", "http://" + pageAddr + "/", "storage-admin", "static/app.js"},
		{"endurance page's script", "http://" + pageAddr + "/static/app.js", "storage-admin", "uPlot"},
		{"endurance query proxy", "http://" + pageAddr + "/api/query?name=fleet_nodes", "storage-admin", `"status":"success"`},
	}
	httpc := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test servers
	for _, e := range endpoints {
		waitListening(t, e.url)
		for _, who := range []string{"", "forged", "stranger", "prometheus", "storage-admin"} {
			want := http.StatusForbidden
			switch {
			case who == "" || who == "forged":
				want = http.StatusUnauthorized
			case who == e.holder:
				want = http.StatusOK
			}
			code, body := call(t, httpc, e.url, tokens[who])
			if code != want {
				t.Errorf("%s as %q: %d, want %d (%.200s)", e.name, who, code, want, body)
			}
			if want == http.StatusOK && !strings.Contains(body, e.body) {
				t.Errorf("%s as %q: body lacks %q: %.200s", e.name, who, e.body, body)
			}
			if want != http.StatusOK && strings.Contains(body, e.body) {
				t.Errorf("%s as %q: answered %d yet served %q", e.name, who, code, e.body)
			}
		}
	}
}

// bindClusterRole makes role with rule and binds it to the service account sa of ns.
func bindClusterRole(t *testing.T, ns, role string, rule rbacv1.PolicyRule, sa string) {
	t.Helper()
	objs := []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: []rbacv1.PolicyRule{rule}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role + "-" + ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
		},
	}
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// serviceAccountToken creates the service account and a bound token for it (TokenRequest).
func serviceAccountToken(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitListening waits until something accepts connections at the URL's host.
func waitListening(t *testing.T, u string) {
	t.Helper()
	host := strings.SplitN(strings.SplitN(u, "://", 2)[1], "/", 2)[0]
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listened: %v", u, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func call(t *testing.T, c *http.Client, u, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body)
}
