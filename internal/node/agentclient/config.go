package agentclient

import (
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config finds the API server in the order controller-runtime's config.GetConfig uses
// (what the agent used before): $KUBECONFIG when set (hack/demo runs agents that way), else
// the pod's service account, else ~/.kube/config. Like it, it turns client-side rate
// limiting off (QPS -1) and leaves flow control to the API server.
func Config() (*rest.Config, error) {
	cfg, err := load()
	if err != nil {
		return nil, err
	}
	if cfg.QPS == 0 {
		cfg.QPS = -1
	}
	return cfg, nil
}

func load() (*rest.Config, error) {
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
}
