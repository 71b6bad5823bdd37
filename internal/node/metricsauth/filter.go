// Package metricsauth lets through only the scrapes whose bearer token the API server knows
// (TokenReview) and whose user may get the non-resource URL /metrics (SubjectAccessReview):
// what controller-runtime's metrics filter does for the operator, on the agent's narrow
// client (controller-runtime's filter links client-go's typed clients and full scheme,
// decision 0014). Decision 0048.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
)

// Reviewer asks the API server (agentclient.Client).
type Reviewer interface {
	ReviewToken(ctx context.Context, token string) (authnv1.TokenReviewStatus, error)
	ReviewAccess(ctx context.Context, u authnv1.UserInfo, verb, path string) (authzv1.SubjectAccessReviewStatus, error)
}

// How long an answer is reused, as in controller-runtime's filter: Prometheus scrapes every
// 30 s with the same token, which then costs two reviews a few times an hour, not every scrape.
const (
	allowTTL   = time.Minute
	denyTTL    = 30 * time.Second
	maxEntries = 1024
	timeout    = 10 * time.Second
)

// Filter wraps handlers with the check.
type Filter struct {
	Reviewer Reviewer
	Now      func() time.Time // nil: time.Now

	mu    sync.Mutex
	cache map[[32]byte]answer
}

type answer struct {
	status  int
	message string
	until   time.Time
}

// Wrap serves next to allowed callers; the others get 401 (no or an unknown token), 403
// (known, not allowed) or 500 (the API server did not answer), never the metrics.
func (f *Filter) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			http.Error(w, "Unauthorized: a Kubernetes bearer token is required", http.StatusUnauthorized)
			return
		}
		a := f.check(r.Context(), token, strings.ToLower(r.Method), r.URL.Path)
		if a.status != http.StatusOK {
			http.Error(w, a.message, a.status)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func (f *Filter) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// check answers from the cache (keyed by the token's hash, the verb and the path) or asks.
// Failures to ask are not cached: the next scrape asks again.
func (f *Filter) check(ctx context.Context, token, verb, path string) answer {
	key := sha256.Sum256([]byte(verb + " " + path + " " + token))
	now := f.now()
	f.mu.Lock()
	if a, ok := f.cache[key]; ok && now.Before(a.until) {
		f.mu.Unlock()
		return a
	}
	f.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a := f.ask(ctx, token, verb, path)
	if a.status == http.StatusInternalServerError {
		return a
	}
	a.until = now.Add(denyTTL)
	if a.status == http.StatusOK {
		a.until = now.Add(allowTTL)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cache == nil || len(f.cache) >= maxEntries {
		f.cache = map[[32]byte]answer{}
	}
	f.cache[key] = a
	return a
}

func (f *Filter) ask(ctx context.Context, token, verb, path string) answer {
	tr, err := f.Reviewer.ReviewToken(ctx, token)
	if err != nil {
		return answer{status: http.StatusInternalServerError, message: "Authentication failed: the API server did not review the token"}
	}
	if !tr.Authenticated {
		return answer{status: http.StatusUnauthorized, message: "Unauthorized: the API server does not know this bearer token"}
	}
	sar, err := f.Reviewer.ReviewAccess(ctx, tr.User, verb, path)
	if err != nil {
		return answer{status: http.StatusInternalServerError, message: fmt.Sprintf("Authorization for user %s failed: the API server did not answer", tr.User.Username)}
	}
	if !sar.Allowed || sar.Denied {
		return answer{status: http.StatusForbidden, message: fmt.Sprintf("Authorization denied for user %s: may not %s %s", tr.User.Username, verb, path)}
	}
	return answer{status: http.StatusOK}
}
