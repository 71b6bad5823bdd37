package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowAPIServer answers the discovery a client needs for StorageNodes at once, and lists
// them (none) after delay: an API server under load.
func slowAPIServer(t *testing.T, delay time.Duration) string {
	t.Helper()
	mux := http.NewServeMux()
	reply := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/api", reply(`{"kind":"APIVersions","versions":["v1"]}`))
	mux.HandleFunc("/apis", reply(`{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"prism.storage.io",`+
		`"versions":[{"groupVersion":"prism.storage.io/v1alpha1","version":"v1alpha1"}],`+
		`"preferredVersion":{"groupVersion":"prism.storage.io/v1alpha1","version":"v1alpha1"}}]}`))
	mux.HandleFunc("/apis/prism.storage.io/v1alpha1", reply(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"prism.storage.io/v1alpha1",`+
		`"resources":[{"name":"storagenodes","singularName":"storagenode","namespaced":false,"kind":"StorageNode","verbs":["get","list","watch"]}]}`))
	mux.HandleFunc("/apis/prism.storage.io/v1alpha1/storagenodes", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		reply(`{"apiVersion":"prism.storage.io/v1alpha1","kind":"StorageNodeList","metadata":{},"items":[]}`)(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\n"+
		"users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n", srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// TestRequestTimeout: a slow API server is waited for unless --request-timeout says otherwise,
// as with kubectl (the plugin had a 30 s deadline of its own, which an emulated API server
// exceeded in every try of the e2e's README spec, 2026-12-07).
func TestRequestTimeout(t *testing.T) {
	kubeconfig := slowAPIServer(t, 1500*time.Millisecond)
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"nodes", "--kubeconfig", kubeconfig}, &stdout, &stderr, false); code != 0 {
		t.Errorf("kubectl prism nodes against a slow API server: exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code := dispatch([]string{"nodes", "--kubeconfig", kubeconfig, "--request-timeout", "200ms"}, &stdout, &stderr, false)
	// The request carries the limit (client-go's ?timeout=); which of the client's timer and
	// the request's context fires first varies, and so does the error's last words.
	if code != 1 || !strings.Contains(stderr.String(), "timeout=200ms") {
		t.Errorf("kubectl prism nodes --request-timeout 200ms: exit %d, stderr %q; want exit 1, the request limited to 200ms", code, stderr.String())
	}
}
