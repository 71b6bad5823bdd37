package webui

import (
	"context"
	_ "embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/prism-storage/prism/internal/kube/access"
)

// Checker answers who sends a request and whether they may read the page: access.Reviews,
// which asks the API server (TokenReview, then SubjectAccessReview).
type Checker interface {
	Check(ctx context.Context, r *http.Request, attrs authorizer.AttributesRecord) access.Verdict
}

// PageAccess is what a reader must be allowed (decision 0049): get StorageNodes, the
// objects whose status holds the same per-device wear the page draws.
var PageAccess = authorizer.AttributesRecord{
	Verb: "get", APIGroup: "prism.storage.io", APIVersion: "v1alpha1", Resource: "storagenodes", ResourceRequest: true,
}

// tokenCookie keeps a browser's bearer token after it signed in: HttpOnly (no script reads
// it), SameSite=Strict (no other site's page sends it), for at most tokenCookieAge.
const (
	tokenCookie    = "prism_endurance_token"
	tokenCookieAge = 8 * time.Hour
	maxTokenBytes  = 16 << 10
)

//go:embed static/signin.html
var signinHTML string

var signinPage = template.Must(template.New("signin").Parse(signinHTML))

// gated lets through the requests whose bearer token (Authorization header, or the cookie
// set by /signin) passes c's review for PageAccess; the others get 401 or 403 with the
// sign-in form (the page) or a JSON error (the query proxy).
func gated(c Checker, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := c.Check(r.Context(), withCookieToken(r), PageAccess)
		if v.Status == http.StatusOK {
			next.ServeHTTP(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/api/query") || r.URL.Path == "api/query" {
			apiError(w, v.Status, "unauthorized", v.Message)
			return
		}
		signinForm(w, v.Status, v.Message)
	})
}

// withCookieToken returns r with the token cookie as its Authorization header when r has
// none of its own.
func withCookieToken(r *http.Request) *http.Request {
	if r.Header.Get("Authorization") != "" {
		return r
	}
	ck, err := r.Cookie(tokenCookie)
	if err != nil || ck.Value == "" {
		return r
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+ck.Value)
	return r2
}

// signin checks the pasted token as it would check a request carrying it, and keeps it in
// the cookie only when it passes.
func signin(c Checker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && o != "null" {
			if u, err := url.Parse(o); err != nil || u.Host != r.Host {
				signinForm(w, http.StatusForbidden, "sign-in from another site's page is refused (Origin "+o+")")
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxTokenBytes)
		token := strings.TrimSpace(r.PostFormValue("token"))
		if token == "" {
			signinForm(w, http.StatusUnauthorized, "token: paste a Kubernetes bearer token")
			return
		}
		probe := r.Clone(r.Context())
		probe.Header.Set("Authorization", "Bearer "+token)
		if v := c.Check(r.Context(), probe, PageAccess); v.Status != http.StatusOK {
			signinForm(w, v.Status, v.Message)
			return
		}
		http.SetCookie(w, &http.Cookie{
			Name: tokenCookie, Value: token, Path: "/", MaxAge: int(tokenCookieAge.Seconds()),
			HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
		})
		http.Redirect(w, r, "./", http.StatusSeeOther)
	})
}

// signout forgets the cookie.
func signout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "./", http.StatusSeeOther)
}

func signinForm(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = signinPage.Execute(w, struct {
		Status  int
		Message string
	}{status, message})
}
