package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
)

// reviews stands for the API server (test/envtest/endpoints_test.go asks a real one):
// "prom" is a user allowed to get /metrics, "dev" one who is not, "down" an API server
// that does not answer; any other token is unknown.
type reviews struct{ tokens, access int }

func (r *reviews) ReviewToken(_ context.Context, token string) (authnv1.TokenReviewStatus, error) {
	r.tokens++
	switch token {
	case "prom", "dev":
		return authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: token}}, nil
	case "down":
		return authnv1.TokenReviewStatus{}, errors.New("connection refused")
	}
	return authnv1.TokenReviewStatus{}, nil
}

func (r *reviews) ReviewAccess(_ context.Context, u authnv1.UserInfo, verb, path string) (authzv1.SubjectAccessReviewStatus, error) {
	r.access++
	return authzv1.SubjectAccessReviewStatus{Allowed: u.Username == "prom" && verb == "get" && path == "/metrics"}, nil
}

func TestFilter(t *testing.T) {
	rv := &reviews{}
	now := time.Unix(1e9, 0)
	f := &Filter{Reviewer: rv, Now: func() time.Time { return now }}
	h := f.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("prism_device_info 1\n")) }))
	scrape := func(method, path, auth string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct {
		name, method, path, auth string
		code                     int
		says                     string
	}{
		{"no token", "GET", "/metrics", "", 401, "bearer token is required"},
		{"basic auth", "GET", "/metrics", "Basic cHJvbTpw", 401, "bearer token is required"},
		{"empty bearer", "GET", "/metrics", "Bearer ", 401, "bearer token is required"},
		{"unknown token", "GET", "/metrics", "Bearer forged", 401, "does not know this bearer token"},
		{"not allowed", "GET", "/metrics", "Bearer dev", 403, "Authorization denied for user dev: may not get /metrics"},
		{"other path", "GET", "/debug", "Bearer prom", 403, "may not get /debug"},
		{"other verb", "POST", "/metrics", "Bearer prom", 403, "may not post /metrics"},
		{"API server down", "GET", "/metrics", "Bearer down", 500, "did not review the token"},
		{"allowed", "GET", "/metrics", "bearer prom", 200, "prism_device_info"},
	} {
		rec := scrape(tc.method, tc.path, tc.auth)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, rec.Code, rec.Body, tc.code, tc.says)
		}
		if tc.code != 200 && strings.Contains(rec.Body.String(), "prism_device_info") {
			t.Errorf("%s: metrics served", tc.name)
		}
	}

	// Answers are reused within their lifetime, so each scrape does not cost two reviews.
	tokens, access := rv.tokens, rv.access
	scrape("GET", "/metrics", "Bearer prom")
	scrape("GET", "/metrics", "Bearer dev")
	if rv.tokens != tokens || rv.access != access {
		t.Errorf("cached answers asked again: %d→%d token, %d→%d access reviews", tokens, rv.tokens, access, rv.access)
	}
	// A failed review is not kept: the next scrape asks again.
	scrape("GET", "/metrics", "Bearer down")
	if rv.tokens != tokens+1 {
		t.Errorf("a failed review was cached")
	}
	// A denial expires first, then an allowance.
	now = now.Add(denyTTL + time.Second)
	scrape("GET", "/metrics", "Bearer dev")
	scrape("GET", "/metrics", "Bearer prom")
	if rv.tokens != tokens+2 {
		t.Errorf("after %s: %d token reviews, want the denial's one again", denyTTL, rv.tokens-tokens-1)
	}
	now = now.Add(allowTTL)
	scrape("GET", "/metrics", "Bearer prom")
	if rv.tokens != tokens+3 {
		t.Errorf("after %s: an allowance was not asked again", allowTTL)
	}
}
