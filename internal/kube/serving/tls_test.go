package serving

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

func writePair(t *testing.T, dir, host string, mtime time.Time) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, []net.IP{{127, 0, 0, 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

func leafHost(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	// GenerateSelfSignedCertKey names the certificate "<host>@<unix time>".
	host, _, _ := strings.Cut(leaf.Subject.CommonName, "@")
	return host
}

func TestTLSConfigSelfSigned(t *testing.T) {
	cfg, err := TLSConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Certificates) != 1 || cfg.MinVersion != tls.VersionTLS12 || len(cfg.NextProtos) != 1 || cfg.NextProtos[0] != "http/1.1" {
		t.Fatalf("config %+v: want one certificate, TLS 1.2 or later, HTTP/1.1 only", cfg)
	}
}

func TestTLSConfigReloadsTheCertDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := TLSConfig(dir); err == nil {
		t.Fatal("an empty cert dir was accepted")
	}
	t0 := time.Now().Add(-time.Hour)
	writePair(t, dir, "first", t0)
	if _, err := TLSConfig(dir); err != nil {
		t.Fatal(err)
	}
	k := &keyPair{cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key")}
	now := time.Now()
	c, err := k.get(now)
	if err != nil || leafHost(t, c) != "first" {
		t.Fatalf("first pair: %v", err)
	}
	// Renewed in place (cert-manager): served once the recheck interval has passed.
	writePair(t, dir, "second", t0.Add(time.Minute))
	if c, _ := k.get(now.Add(recheck / 2)); leafHost(t, c) != "first" {
		t.Error("reloaded before the recheck interval")
	}
	if c, _ := k.get(now.Add(recheck + time.Second)); leafHost(t, c) != "second" {
		t.Error("the renewed pair is not served")
	}
	// A broken pair keeps the last good one.
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := k.get(now.Add(3 * recheck)); err != nil || leafHost(t, c) != "second" {
		t.Errorf("after a broken renewal: %v, want the last good pair", err)
	}
}
