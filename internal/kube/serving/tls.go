// Package serving holds what Prism's HTTPS endpoints share: their TLS configuration
// (a certificate from a directory, or a self-signed one) and the check of who calls
// (TokenReview and SubjectAccessReview against the API server).
package serving

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// TLSConfig serves the certificate tls.crt/tls.key of certDir, reloaded when the files
// change (a cert-manager Secret mounted there), or, with an empty certDir, a self-signed
// certificate made at start-up: Prometheus then scrapes with insecureSkipVerify, and the
// bearer token still decides who reads. HTTP/2 is off, as in kubebuilder's scaffold:
// its stream resets (CVE-2023-44487) cost a server more than they cost a client.
func TLSConfig(ctx context.Context, certDir string) (*tls.Config, error) {
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
	w, err := certwatcher.New(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key"))
	if err != nil {
		return nil, fmt.Errorf("serving certificate in %s: %w", certDir, err)
	}
	go func() { _ = w.Start(ctx) }()
	cfg.GetCertificate = w.GetCertificate
	return cfg, nil
}
