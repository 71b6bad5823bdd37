package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// scrapeAgent reads an agent pod's /metrics as the chart's PodMonitor does (decision 0048):
// HTTPS, with the token of prism-metrics-scraper. The API server's pod proxy cannot carry a
// bearer token to the pod (it drops the Authorization header once it has authenticated the
// caller), so the scrape goes through a port-forward, as a person's would.
func scrapeAgent(ctx context.Context, pod string) (string, error) {
	secret, err := clientset.CoreV1().Secrets(cfg.namespace).Get(ctx, "prism-metrics-scraper-token", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("the scrape token: %w", err)
	}
	token := string(secret.Data["token"])
	if token == "" {
		return "", fmt.Errorf("Secret prism-metrics-scraper-token has no token yet")
	}
	transport, upgrader, err := spdy.RoundTripperFor(restCfg)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(cfg.namespace).Name(pod).SubResource("portforward").URL().String())
	if err != nil {
		return "", err
	}
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.New(spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u),
		[]string{"0:9464"}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		return "", fmt.Errorf("port-forward to %s: %w", pod, err)
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("port-forward to %s: not ready after 30 s", pod)
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) != 1 {
		return "", fmt.Errorf("port-forward to %s: ports %v: %v", pod, ports, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", ports[0].Local), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	// The agent's certificate is self-signed (metrics.certSecret unset), as the PodMonitor's
	// insecureSkipVerify expects.
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed, see above
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics of %s: %s: %.200s", pod, resp.Status, body)
	}
	return string(body), nil
}
