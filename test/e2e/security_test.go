package e2e

import (
	"net"
	"path"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/test/e2e/endpoints"
)

// strangerNamespace creates a namespace of its own for a spec, enforcing Pod Security
// restricted, and deletes it when the spec ends (without waiting: nothing reuses its name).
func strangerNamespace(prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	Expect(k8s.Create(ctx(), ns)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8s.Delete(ctx(), ns))).To(Succeed()) })
	for _, sa := range []string{"stranger", "prism-operator", "prism-agent"} {
		Expect(k8s.Create(ctx(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns.Name}})).To(Succeed())
	}
	return ns.Name
}

// namedPort is the container port of that name in the pod, def when none.
func namedPort(pod *corev1.Pod, name string, def int32) int32 {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort
			}
		}
	}
	return def
}

// readerToken is a token of prism-endurance-reader, the page's reader (an hour).
func readerToken() string {
	tok, err := clientset.CoreV1().ServiceAccounts(cfg.namespace).CreateToken(ctx(), "prism-endurance-reader",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred(), "a token of prism-endurance-reader (the chart makes it with operator.prometheusURL)")
	return tok.Status.Token
}

// expectEndpointsRefuseStrangers: a pod in another namespace, running as its own ServiceAccount
// with no Prism role, tries every endpoint of docs/security.md with no token (401), its own
// token (403), and the two tokens the chart grants (the scraper's reads the metrics, the
// reader's the page): the pod reaches them all, only the identity decides.
func expectEndpointsRefuseStrangers() {
	if cfg.probeImage == "" {
		Skip("PRISM_E2E_PROBE_IMAGE is not set: no image with hack/e2e/sleep's probe to run in a pod")
	}
	ns := strangerNamespace("prism-e2e-stranger-")

	scraper, err := clientset.CoreV1().Secrets(cfg.namespace).Get(ctx(), "prism-metrics-scraper-token", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(scraper.Data["token"]).NotTo(BeEmpty(), "Secret prism-metrics-scraper-token has no token")
	reader := readerToken()
	Expect(k8s.Create(ctx(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "prism-tokens", Namespace: ns},
		Data: map[string][]byte{
			path.Base(endpoints.TokenScraper): scraper.Data["token"], path.Base(endpoints.TokenReader): []byte(reader),
		},
	})).To(Succeed())

	var operatorMetrics []string
	pods := &corev1.PodList{}
	Expect(k8s.List(ctx(), pods, client.InNamespace(cfg.namespace), client.MatchingLabels{"app.kubernetes.io/component": "operator"})).To(Succeed())
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			operatorMetrics = append(operatorMetrics, "https://"+net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(namedPort(p, "metrics", 8443))))+"/metrics")
		}
	}
	Expect(operatorMetrics).NotTo(BeEmpty(), "no running operator pod")
	agent := agentPod(Default)
	agentMetrics := "https://" + net.JoinHostPort(agent.Status.PodIP, strconv.Itoa(int(namedPort(agent, "metrics", 9464)))) + "/metrics"
	svc := &corev1.Service{}
	Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-endurance"}, svc)).To(Succeed(),
		"the endurance page's Service (the suite installs with operator.prometheusURL)")
	page := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "8082")
	// The suite's Prometheus (spec 6f) answers the page's named query; without its image none
	// listens at the chart's operator.prometheusURL and the proxy answers 502.
	cases := endpoints.Cases(operatorMetrics, agentMetrics, page, prometheusDeployed())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: ns},
		Spec: corev1.PodSpec{
			ServiceAccountName: "stranger",
			RestartPolicy:      corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: new(true), RunAsUser: new(int64(65532)), RunAsGroup: new(int64(65532)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "probe", Image: cfg.probeImage, ImagePullPolicy: corev1.PullNever, Args: endpoints.Args(cases),
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: new(false), ReadOnlyRootFilesystem: new(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "tokens", MountPath: path.Dir(endpoints.TokenScraper), ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "tokens", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "prism-tokens"}}}},
		},
	}
	Expect(k8s.Create(ctx(), pod)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx(), client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.Phase).To(BeElementOf(corev1.PodSucceeded, corev1.PodFailed), "stranger pod: %+v", pod.Status)
	}).Should(Succeed())
	log, err := clientset.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx())
	Expect(err).NotTo(HaveOccurred())
	GinkgoWriter.Printf("stranger pod (%s) log:\n%s\n", pod.Status.Phase, log)
	Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), "the probe failed: %s", log)
	got, err := endpoints.Parse(string(log))
	Expect(err).NotTo(HaveOccurred())
	Expect(endpoints.Mismatches(cases, got)).To(BeEmpty())
}

// expectOperatorRestricted: the operator's pod, as the chart's Deployment makes it, is admitted
// by the API server's own Pod Security admission in a namespace that enforces restricted
// (server-side dry run: nothing runs), and the agent's is refused there, so the namespace
// does enforce. The release namespace itself cannot enforce restricted: the agent is
// privileged (docs/security.md, "The namespace's Pod Security level").
func expectOperatorRestricted() {
	ns := strangerNamespace("prism-e2e-restricted-")
	dryRun := func(template corev1.PodTemplateSpec, name string) error {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: template.Labels}, Spec: template.Spec}
		return k8s.Create(ctx(), p, client.DryRunAll)
	}
	operator := &appsv1.Deployment{}
	Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-operator"}, operator)).To(Succeed())
	Expect(dryRun(operator.Spec.Template, "operator")).To(Succeed(), "the operator's pod under Pod Security restricted")

	agent := &appsv1.DaemonSet{}
	Expect(k8s.Get(ctx(), client.ObjectKey{Namespace: cfg.namespace, Name: "prism-agent"}, agent)).To(Succeed())
	err := dryRun(agent.Spec.Template, "agent")
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the agent's pod under restricted: %v", err)
	Expect(err.Error()).To(And(ContainSubstring(`violates PodSecurity "restricted:latest"`), ContainSubstring("privileged")))
}
