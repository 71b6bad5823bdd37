package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/prism-storage/prism/internal/kube/access"
)

const (
	readerToken   = "reader-token"
	outsiderToken = "outsider-token"
)

// tokenTable stands for the API server's reviews (test/envtest/endpoints_test.go asks a
// real one): readerToken is alice, who may get StorageNodes; outsiderToken is bob, who may
// not; any other token is unknown.
type tokenTable struct{ seen []authorizer.AttributesRecord }

func (c *tokenTable) Check(_ context.Context, r *http.Request, attrs authorizer.AttributesRecord) access.Verdict {
	switch r.Header.Get("Authorization") {
	case "Bearer " + readerToken:
		attrs.User = &user.DefaultInfo{Name: "alice"}
		c.seen = append(c.seen, attrs)
		return access.Verdict{Status: http.StatusOK, User: attrs.User}
	case "Bearer " + outsiderToken:
		return access.Verdict{Status: http.StatusForbidden, Message: "bob may not get storagenodes.prism.storage.io"}
	}
	return access.Verdict{Status: http.StatusUnauthorized, Message: "a Kubernetes bearer token is required"}
}

var readers = &tokenTable{}

func TestEveryRouteAsksWhoCalls(t *testing.T) {
	fp := &fakeProm{}
	srv := httptest.NewServer(fp)
	defer srv.Close()
	c := &tokenTable{}
	h := Handler(srv.URL, c)
	for _, path := range []string{"/", "/static/app.js", "/static/uPlot.iife.min.js", "/api/query?name=fleet_nodes"} {
		for _, tc := range []struct {
			token string
			code  int
		}{{"", 401}, {"forged", 401}, {outsiderToken, 403}, {readerToken, 200}} {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			h.ServeHTTP(rec, req)
			if rec.Code != tc.code {
				t.Errorf("GET %s with token %q: %d, want %d", path, tc.token, rec.Code, tc.code)
			}
			if tc.code != 200 && (strings.Contains(rec.Body.String(), "uPlot") || strings.Contains(rec.Body.String(), "prism_device")) {
				t.Errorf("GET %s with token %q leaks the page: %.100s", path, tc.token, rec.Body)
			}
			if tc.code == 401 && !strings.HasPrefix(path, "/api/") && !strings.Contains(rec.Body.String(), `name="token"`) {
				t.Errorf("GET %s without identity: no sign-in form in %.200s", path, rec.Body)
			}
		}
	}
	if n := fp.count(); n != 1 {
		t.Errorf("%d queries reached Prometheus, want only the reader's one", n)
	}
	if len(c.seen) == 0 || c.seen[0].Verb != "get" || c.seen[0].Resource != "storagenodes" || c.seen[0].APIGroup != "prism.storage.io" || !c.seen[0].ResourceRequest {
		t.Errorf("the page asked for %+v, want get storagenodes.prism.storage.io", c.seen)
	}
}

func TestSigninKeepsOnlyAnAcceptedToken(t *testing.T) {
	h := Handler("http://127.0.0.1:1", &tokenTable{})
	post := func(form url.Values, origin string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "http://prism.example/signin", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct {
		name, token, origin string
		code                int
		says                string
	}{
		{"empty", "", "", 401, "token: paste"},
		{"unknown", "forged", "", 401, "bearer token is required"},
		{"not allowed", outsiderToken, "", 403, "bob may not get storagenodes"},
		{"from another site", readerToken, "https://evil.example", 403, "another site"},
	} {
		rec := post(url.Values{"token": {tc.token}}, tc.origin)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.says) || len(rec.Result().Cookies()) != 0 {
			t.Errorf("%s: %d %v %.300s; want %d saying %q and no cookie", tc.name, rec.Code, rec.Result().Cookies(), rec.Body, tc.code, tc.says)
		}
	}
	rec := post(url.Values{"token": {readerToken}}, "http://prism.example")
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("accepted token: %d, cookies %v", rec.Code, cookies)
	}
	ck := cookies[0]
	if ck.Name != tokenCookie || ck.Value != readerToken || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge <= 0 {
		t.Fatalf("cookie %+v: want the token, HttpOnly, SameSite=Strict, with an age", ck)
	}
	// The cookie alone now opens the page and the proxy's gate.
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.AddCookie(ck)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "static/app.js") {
		t.Fatalf("page with the cookie: %d", rec.Code)
	}
	// Signing out expires it.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/signout", nil))
	if c := rec.Result().Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
		t.Fatalf("sign-out cookies %v", c)
	}
}
