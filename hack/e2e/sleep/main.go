// Command sleep is the e2e guest's first container image (hack/e2e/run.sh writes it as an OCI
// archive): a static binary that sleeps for its argument in seconds, or until SIGTERM/SIGINT
// without one. It serves as the pod sandbox's pause image and as the test pod's command, so the
// guest's containerd needs no registry. Test-only; Prism's own images are make images' business.
//
// `sleep apiprobe` first asks the apiserver for /version the way an in-cluster client does
// (KUBERNETES_SERVICE_HOST, the service account's token and CA), prints "apiprobe: <status>
// <body>", then sleeps: the pod's log shows whether the service network (kube-proxy), the
// token and the CA publishing work, as Rook's operator will need them.
//
// `sleep probe TOKEN_FILE URL ...` sends a GET to each URL with that token (probe.go), prints
// what came back and exits: the e2e suite's stranger pod trying Prism's endpoints.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	// As a sandbox's PID 1 it may inherit orphans: reap them.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGCHLD)
	go func() {
		for {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(-1, &ws, 0, nil); err != nil {
				time.Sleep(time.Second)
			}
		}
	}()
	var after <-chan time.Time
	if len(os.Args) > 1 && os.Args[1] == "probe" {
		if err := probe(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "apiprobe" {
		apiprobe()
		os.Args = os.Args[:1]
	}
	if len(os.Args) > 1 {
		s, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sleep: %v\n", err)
			os.Exit(2)
		}
		after = time.After(time.Duration(s * float64(time.Second)))
	}
	fmt.Println("sleep: started")
	select {
	case s := <-sig:
		fmt.Printf("sleep: %v\n", s)
	case <-after:
	}
}

func apiprobe() {
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
	token, err := os.ReadFile(sa + "token")
	if err != nil {
		fmt.Println("apiprobe: error", err)
		return
	}
	ca, err := os.ReadFile(sa + "ca.crt")
	if err != nil {
		fmt.Println("apiprobe: error", err)
		return
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://" + net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")) + "/version"
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+string(token))
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println("apiprobe: error", err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Printf("apiprobe: %d %s %s\n", resp.StatusCode, url, body)
}
