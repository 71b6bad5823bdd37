package main

import (
	"os"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	uzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger builds the agent's logger from the --zap-* flags. In development mode it is
// controller-runtime's. In production mode it is the same JSON logger without
// controller-runtime's sampler: the sampler allocates 0.45 MiB of counters up front, a
// twentieth of the agent's heap, to drop repeats beyond 100 a second, and the agent logs
// a few lines a minute (docs/benchmarks.md, "Agent footprint").
func newLogger(o crzap.Options) logr.Logger {
	if o.Development {
		return crzap.New(crzap.UseFlagOptions(&o))
	}
	if o.DestWriter == nil {
		o.DestWriter = os.Stderr
	}
	var level zapcore.LevelEnabler = uzap.NewAtomicLevelAt(uzap.InfoLevel)
	if o.Level != nil {
		level = o.Level
	}
	var stack zapcore.LevelEnabler = uzap.NewAtomicLevelAt(uzap.ErrorLevel)
	if o.StacktraceLevel != nil {
		stack = o.StacktraceLevel
	}
	timeEncoder := zapcore.RFC3339TimeEncoder
	if o.TimeEncoder != nil {
		timeEncoder = o.TimeEncoder
	}
	cfgOpts := append([]crzap.EncoderConfigOption{func(c *zapcore.EncoderConfig) { c.EncodeTime = timeEncoder }},
		o.EncoderConfigOptions...)
	enc := o.Encoder
	if enc == nil && o.NewEncoder != nil {
		enc = o.NewEncoder(cfgOpts...)
	}
	if enc == nil {
		cfg := uzap.NewProductionEncoderConfig()
		for _, opt := range cfgOpts {
			opt(&cfg)
		}
		enc = zapcore.NewJSONEncoder(cfg)
	}
	sink := zapcore.AddSync(o.DestWriter)
	core := zapcore.NewCore(&crzap.KubeAwareEncoder{Encoder: enc}, sink, level)
	return zapr.NewLogger(uzap.New(core, append(o.ZapOpts, uzap.AddStacktrace(stack), uzap.ErrorOutput(sink))...))
}
