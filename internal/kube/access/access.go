// Package access asks the API server who sends an HTTP request (TokenReview of its bearer
// token) and whether they may do what an endpoint stands for (SubjectAccessReview).
package access

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
)

// Reviews asks the API server who sends a request (TokenReview of its bearer token) and
// whether that identity may do what the endpoint stands for (SubjectAccessReview). It is
// controller-runtime's metrics filter with the attributes chosen by the caller, so that an
// endpoint can stand for a resource verb (get storagenodes) rather than a URL path.
type Reviews struct {
	authn authenticator.Request
	authz authorizer.Authorizer
}

// webhookBackoff retries a review the API server did not answer (the values of
// k8s.io/apiserver's DefaultAuthWebhookRetryBackoff).
var webhookBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// New reviews with the API server at cfg. Answers are cached (allowed 5 min, denied
// 30 s, tokens 1 min), as in controller-runtime's filter, so a page's burst of queries costs
// one review.
func New(cfg *rest.Config, httpClient *http.Client) (*Reviews, error) {
	authnClient, err := authenticationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authzClient, err := authorizationv1.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 time.Minute,
		TokenAccessReviewClient:  authnClient,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      &webhookBackoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("token reviews: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authzClient,
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       &webhookBackoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("subject access reviews: %w", err)
	}
	return &Reviews{authn: authn, authz: authz}, nil
}

// Verdict is the answer for one request: Status 200 lets it through, otherwise 401 (no token,
// or the token review failed: k8s.io/apiserver's authenticator reports a rejected token and an
// API server that did not answer alike, with the error), 403 (known, not allowed) or 500 (the
// access review failed), with Message saying which.
type Verdict struct {
	Status  int
	Message string
	User    user.Info
}

// Check reviews the bearer token of r and asks whether its user may do attrs (whose User
// is filled in here).
func (a *Reviews) Check(ctx context.Context, r *http.Request, attrs authorizer.AttributesRecord) Verdict {
	res, ok, err := a.authn.AuthenticateRequest(r)
	switch {
	case err != nil:
		return Verdict{Status: http.StatusUnauthorized, Message: "the bearer token was not accepted: " + err.Error()}
	case !ok:
		return Verdict{Status: http.StatusUnauthorized, Message: "a Kubernetes bearer token is required"}
	}
	attrs.User = res.User
	decision, reason, err := a.authz.Authorize(ctx, attrs)
	if err != nil {
		return Verdict{Status: http.StatusInternalServerError, Message: "the API server did not answer the access review: " + err.Error(), User: res.User}
	}
	if decision != authorizer.DecisionAllow {
		msg := fmt.Sprintf("%s may not %s %s", res.User.GetName(), attrs.Verb, describe(attrs))
		if reason != "" {
			msg += ": " + reason
		}
		return Verdict{Status: http.StatusForbidden, Message: msg, User: res.User}
	}
	return Verdict{Status: http.StatusOK, User: res.User}
}

func describe(a authorizer.AttributesRecord) string {
	if !a.ResourceRequest {
		return a.Path
	}
	if a.APIGroup == "" {
		return a.Resource
	}
	return a.Resource + "." + a.APIGroup
}
