// Command pki writes the e2e guest cluster's key material, with the Go standard library only
// (the guest has no openssl): a CA, the kube-apiserver's serving certificate signed by it, and
// the service-account signing key pair. ECDSA P-256 keys: generated in milliseconds even under
// QEMU's TCG. Test-only.
//
//	pki -dir /etc/kubernetes/pki -ip 127.0.0.1 -ip 10.96.0.1 -ip 10.250.0.1 -dns kubernetes.default.svc
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var ips, names multi
	dir := flag.String("dir", "", "output directory")
	flag.Var(&ips, "ip", "an IP SAN of the apiserver certificate (repeatable)")
	flag.Var(&names, "dns", "a DNS SAN of the apiserver certificate (repeatable)")
	flag.Parse()
	if *dir == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dir, ips, names); err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

func run(dir string, ips, names []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "prism-e2e-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	srv := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names,
	}
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			return fmt.Errorf("-ip %s: not an IP", s)
		}
		srv.IPAddresses = append(srv.IPAddresses, ip)
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	for name, block := range map[string]*pem.Block{
		"ca.crt":        {Type: "CERTIFICATE", Bytes: caDER},
		"apiserver.crt": {Type: "CERTIFICATE", Bytes: srvDER},
		"apiserver.key": keyBlock(srvKey),
		"sa.key":        keyBlock(saKey),
		"sa.pub":        pubBlock(&saKey.PublicKey),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func keyBlock(k *ecdsa.PrivateKey) *pem.Block {
	b, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err)
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: b}
}

func pubBlock(k *ecdsa.PublicKey) *pem.Block {
	b, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		panic(err)
	}
	return &pem.Block{Type: "PUBLIC KEY", Bytes: b}
}
