package agentclient

import (
	"context"
	"encoding/json"
	"fmt"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
)

// ReviewToken asks the API server whose bearer token this is (a TokenReview). The agent's
// metrics use it to learn who scrapes them (decision 0048).
func (c *Client) ReviewToken(ctx context.Context, token string) (authnv1.TokenReviewStatus, error) {
	in := authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}
	in.APIVersion, in.Kind = "authentication.k8s.io/v1", "TokenReview"
	var out authnv1.TokenReview
	if err := c.post(ctx, "/apis/authentication.k8s.io/v1/tokenreviews", &in, &out); err != nil {
		return authnv1.TokenReviewStatus{}, err
	}
	return out.Status, nil
}

// ReviewAccess asks the API server whether u may use verb on the non-resource path (a
// SubjectAccessReview, as kube-rbac-proxy and controller-runtime's metrics filter ask).
func (c *Client) ReviewAccess(ctx context.Context, u authnv1.UserInfo, verb, path string) (authzv1.SubjectAccessReviewStatus, error) {
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	in := authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: path, Verb: verb},
	}}
	in.APIVersion, in.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
	var out authzv1.SubjectAccessReview
	if err := c.post(ctx, "/apis/authorization.k8s.io/v1/subjectaccessreviews", &in, &out); err != nil {
		return authzv1.SubjectAccessReviewStatus{}, err
	}
	return out.Status, nil
}

// post sends in as JSON to the absolute path and decodes the answer into out: the review
// kinds are not in the client's scheme, and need not be.
func (c *Client) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	raw, err := c.rest.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Raw()
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding the answer of %s: %w", path, err)
	}
	return nil
}
