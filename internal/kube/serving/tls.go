// Package serving holds the TLS configuration Prism's HTTPS endpoints share: a certificate
// from a directory, or a self-signed one. It links no Kubernetes client, so that the node
// agent can use it (decision 0014).
package serving

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// TLSConfig serves the certificate tls.crt/tls.key of certDir, read again when the files
// change (a cert-manager Secret mounted there is renewed in place), or, with an empty
// certDir, a self-signed certificate made at start-up: Prometheus then scrapes with
// insecureSkipVerify, and the bearer token still decides who reads. HTTP/2 is off, as in
// kubebuilder's scaffold: its stream resets (CVE-2023-44487) cost a server more than a client.
func TLSConfig(certDir string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if certDir == "" {
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKeyWithFixtures("localhost", []net.IP{{127, 0, 0, 1}}, nil, "")
		if err != nil {
			return nil, fmt.Errorf("making a self-signed serving certificate: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("loading the self-signed serving certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
		return cfg, nil
	}
	k := &keyPair{cert: filepath.Join(certDir, "tls.crt"), key: filepath.Join(certDir, "tls.key")}
	if _, err := k.get(time.Now()); err != nil {
		return nil, err
	}
	cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return k.get(time.Now()) }
	return cfg, nil
}

// keyPair reloads a certificate and key when the certificate file's modification time
// changes, looking at most every recheck; a pair that fails to load keeps the last good one.
type keyPair struct {
	cert, key string

	mu      sync.Mutex
	current *tls.Certificate
	modTime time.Time
	checked time.Time
}

const recheck = 10 * time.Second

func (k *keyPair) get(now time.Time) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.current != nil && now.Sub(k.checked) < recheck {
		return k.current, nil
	}
	k.checked = now
	fi, err := os.Stat(k.cert)
	if err == nil && k.current != nil && fi.ModTime().Equal(k.modTime) {
		return k.current, nil
	}
	pair, lerr := tls.LoadX509KeyPair(k.cert, k.key)
	switch {
	case err == nil && lerr == nil:
		k.current, k.modTime = &pair, fi.ModTime()
	case k.current == nil && lerr != nil:
		return nil, fmt.Errorf("serving certificate %s: %w", k.cert, lerr)
	case k.current == nil:
		return nil, fmt.Errorf("serving certificate %s: %w", k.cert, err)
	}
	return k.current, nil
}
