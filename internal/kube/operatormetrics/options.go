// Package operatormetrics configures how the operator serves controller-runtime's metrics.
package operatormetrics

import (
	"crypto/tls"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/prism-storage/prism/internal/kube/access"
)

// Options serves the metrics on addr. Secure is kubebuilder's scaffold (decision 0048): HTTPS
// with the certificate of certDir (tls.crt, tls.key; empty: self-signed), and a TokenReview
// plus a SubjectAccessReview (the request's verb on its non-resource URL, get /metrics) for
// every scrape. Not secure: plain HTTP to anyone, as before.
func Options(addr string, secure bool, certDir string) metricsserver.Options {
	o := metricsserver.Options{BindAddress: addr}
	if !secure {
		return o
	}
	o.SecureServing = true
	o.FilterProvider = WithAuthenticationAndAuthorization
	o.CertDir = certDir
	// HTTP/2 off, as in the scaffold: its stream resets (CVE-2023-44487) cost the server more.
	o.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	return o
}

// WithAuthenticationAndAuthorization is controller-runtime's filters.WithAuthenticationAndAuthorization
// (the same delegating authenticator and authorizer of k8s.io/apiserver, with the same caches)
// except for one answer: a token the API server rejects (forged, expired, of a deleted service
// account) gets 401, as kube-apiserver answers it, where controller-runtime v0.24's filter
// answers 500 "Authentication failed", which reads as the operator's fault in Prometheus.
func WithAuthenticationAndAuthorization(cfg *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	reviews, err := access.New(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v := reviews.Check(r.Context(), r, authorizer.AttributesRecord{Verb: strings.ToLower(r.Method), Path: r.URL.Path})
			if v.Status != http.StatusOK {
				log.V(4).Info("Metrics request refused", "status", v.Status, "reason", v.Message)
				http.Error(w, v.Message, v.Status)
				return
			}
			next.ServeHTTP(w, r)
		}), nil
	}, nil
}
