package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbe: each pair's token reaches the server as a bearer token (none for "-"), and each
// answer, or the error of a request that got none, is one "probe: {json}" line, in order.
func TestProbe(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "":
			http.Error(w, "no token", http.StatusUnauthorized)
		case "Bearer good":
			_, _ = w.Write([]byte("metrics"))
		default:
			http.Error(w, "denied "+r.Header.Get("Authorization"), http.StatusForbidden)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	good, other := filepath.Join(dir, "good"), filepath.Join(dir, "other")
	if err := os.WriteFile(good, []byte("good\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("other"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	args := []string{"-", srv.URL, good, srv.URL + "/metrics", other, srv.URL, filepath.Join(dir, "absent"), srv.URL}
	if err := probe(args, &out); err != nil {
		t.Fatal(err)
	}
	var got []probeResult
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "probe: ")
		if !ok {
			t.Fatalf("line %q: no probe: prefix", sc.Text())
		}
		var r probeResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, r)
	}
	want := []struct {
		token, url string
		status     int
		body, err  string
	}{
		{"-", srv.URL, 401, "no token\n", ""},
		{good, srv.URL + "/metrics", 200, "metrics", ""},
		{other, srv.URL, 403, "denied Bearer other\n", ""},
		{filepath.Join(dir, "absent"), srv.URL, 0, "", "no such file"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Token != w.token || g.URL != w.url || g.Status != w.status || g.Body != w.body || !strings.Contains(g.Error, w.err) || (w.err == "" && g.Error != "") {
			t.Errorf("line %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestProbeWantsPairs(t *testing.T) {
	for _, args := range [][]string{nil, {"-"}, {"-", "https://a", "-"}} {
		if err := probe(args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "pairs of TOKEN_FILE URL") {
			t.Errorf("probe(%q): %v, want the pairs error", args, err)
		}
	}
}
