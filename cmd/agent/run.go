package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/prism-storage/prism/internal/agent"
	"github.com/prism-storage/prism/internal/inventory"
	"github.com/prism-storage/prism/internal/kube"
)

func runAgent(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var host hostFlags
	host.register(fs)
	nodeName := fs.String("node-name", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME, from the downward API)")
	period := fs.Duration("period", 5*time.Minute, "re-inventory this often even without udev events")
	heartbeat := fs.Duration("heartbeat", 30*time.Minute, "rewrite an unchanged status this often, so a stale agent shows")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *nodeName == "" {
		return fmt.Errorf("--node-name (or $NODE_NAME) is required")
	}
	logf.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	klog.SetLogger(logf.Log)
	ctx := logf.IntoContext(signals.SetupSignalHandler(), logf.Log.WithName("agent"))

	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: kube.AgentScheme()})
	if err != nil {
		return err
	}
	changes, err := agent.WatchUdev(ctx, filepath.Join(host.hostRoot, "run", "udev", "data"), 2*time.Second)
	if err != nil {
		return fmt.Errorf("watching udev: %w", err)
	}
	opts := host.options()
	p := &agent.Publisher{
		Client:   c,
		NodeName: *nodeName,
		Inventory: func(ctx context.Context) (inventory.Report, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			return inventory.Take(ctx, opts)
		},
		Version: version, Period: *period, Heartbeat: *heartbeat, Changes: changes,
	}
	logf.Log.Info("Starting agent", "node", *nodeName, "hostRoot", host.hostRoot)
	return p.Run(ctx)
}
