// Command manager runs the Prism operator: it selects nodes and devices for each
// HybridStoragePolicy from the StorageNode inventories the node agents publish, and compiles
// and advises each ClassificationPolicy.
package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/prism-storage/prism/controllers/classificationpolicy"
	"github.com/prism-storage/prism/controllers/hybridstoragepolicy"
	"github.com/prism-storage/prism/internal/kube"
	"github.com/prism-storage/prism/internal/kube/access"
	"github.com/prism-storage/prism/internal/kube/operatormetrics"
	"github.com/prism-storage/prism/internal/webui"
)

// version is set at build time (-X main.version): the release checks agents' version skew.
var version = "dev"

// Who calls the metrics and the endurance page is asked of the API server (decisions 0048, 0049).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

func main() {
	var metricsAddr, probeAddr string
	var leaderElect bool
	var qps float64
	var burst int
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "address the metrics endpoint binds to; 0 disables it")
	metricsSecure := flag.Bool("metrics-secure", true, "serve metrics over HTTPS to callers whose bearer token may get the non-resource URL /metrics (TokenReview and SubjectAccessReview); false serves plain HTTP to anyone")
	metricsCertDir := flag.String("metrics-cert-dir", "", "directory with tls.crt and tls.key for the metrics endpoint; empty makes a self-signed certificate")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health probes bind to")
	flag.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so that only one operator replica reconciles")
	lease := bindLeaseFlags(flag.CommandLine)
	promURL := flag.String("prometheus-url", "", "Prometheus base URL (e.g. http://prometheus-operated.monitoring:9090); when set, the endurance page is served on --endurance-page-address")
	pageAddr := flag.String("endurance-page-address", ":8082", "address of Prism's endurance page")
	pageCertDir := flag.String("endurance-page-cert-dir", "", "directory with tls.crt and tls.key: the endurance page serves HTTPS with them; empty serves plain HTTP (reach it through kubectl port-forward, decision 0049)")
	flag.Float64Var(&qps, "kube-api-qps", 100, "sustained requests per second to the API server (a policy over 1000 nodes writes 1000 plans)")
	flag.IntVar(&burst, "kube-api-burst", 200, "request burst to the API server")
	maxCephCluster := flag.Int64("cephcluster-max-bytes", 0, "the largest object the cluster's etcd stores (its --max-request-bytes; 0: etcd's default, 1.5 MiB): Prism does not apply a CephCluster larger than this less 64 KiB for Rook's status, and says so in RookConfigured")
	cephNamespaces := flag.String("ceph-namespaces", "", "comma-separated namespaces of the CephClusters policies name, where the operator runs its read-only Ceph probes (its RBAC grants pods there only); empty: every namespace")
	advisorWindow := flag.Duration("advisor-window", classificationpolicy.DefaultWindow, "how long the PRISM advisor observes the caches' per-class statistics before it recommends (docs/cache.md, section Advisor)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	klog.SetLogger(ctrl.Log)
	log := ctrl.Log.WithName("setup")

	var probeNamespaces []string
	if *cephNamespaces != "" {
		probeNamespaces = strings.Split(*cephNamespaces, ",")
	}
	for _, ns := range probeNamespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			log.Error(nil, "--ceph-namespaces lists an invalid namespace name", "namespace", ns, "reason", strings.Join(errs, "; "))
			os.Exit(1)
		}
	}
	if err := lease.validate(); err != nil {
		log.Error(err, "Invalid leader election timings")
		os.Exit(1)
	}
	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = float32(qps), burst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 kube.Scheme(),
		Metrics:                operatormetrics.Options(metricsAddr, *metricsSecure, *metricsCertDir),
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "prism-operator.prism.storage.io",
		LeaseDuration:          &lease.LeaseDuration,
		RenewDeadline:          &lease.RenewDeadline,
		RetryPeriod:            &lease.RetryPeriod,
		Cache:                  hybridstoragepolicy.CacheOptions(probeNamespaces),
	})
	if err != nil {
		log.Error(err, "Unable to create manager")
		os.Exit(1)
	}
	if err := (&hybridstoragepolicy.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("prism-operator"),
		MaxCephClusterBytes: *maxCephCluster, Version: version, CephNamespaces: probeNamespaces}).SetupWithManager(mgr); err != nil {
		log.Error(err, "Unable to set up controller", "controller", "hybridstoragepolicy")
		os.Exit(1)
	}
	if *advisorWindow < time.Minute {
		log.Error(nil, "--advisor-window must be at least 1m: shorter windows measure noise", "advisor-window", advisorWindow.String())
		os.Exit(1)
	}
	// The advisor keeps its open windows in the operator's namespace, so a new leader resumes them.
	if err := (&classificationpolicy.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Window: *advisorWindow,
		Namespace: os.Getenv("POD_NAMESPACE")}).SetupWithManager(mgr); err != nil {
		log.Error(err, "Unable to set up controller", "controller", "classificationpolicy")
		os.Exit(1)
	}
	if *promURL != "" {
		reviews, err := access.New(mgr.GetConfig(), mgr.GetHTTPClient())
		if err != nil {
			log.Error(err, "Unable to set up the endurance page's access reviews")
			os.Exit(1)
		}
		if err := mgr.Add(&webui.Server{Addr: *pageAddr, PrometheusURL: *promURL, Access: reviews, CertDir: *pageCertDir}); err != nil {
			log.Error(err, "Unable to set up the endurance page")
			os.Exit(1)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		log.Error(err, "Unable to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		log.Error(err, "Unable to set up ready check")
		os.Exit(1)
	}
	log.Info("Starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "Manager stopped with an error")
		os.Exit(1)
	}
}
