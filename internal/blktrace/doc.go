// Package blktrace is the block-trace format Prism records and reads: a parser for the
// kernel's block_bio_queue tracepoint lines (ParseLine, ParseTrace: what Open CAS's
// classifier sees of each bio, submitting task, operation, size, start sector), the bio
// records `prism-agent trace` writes (Bio, Capture), and the per-device summary of a trace
// (Aggregator, DeviceTrace, Summary) with its Markdown tables. internal/host/tracefs reads
// the tracepoint into it; internal/cachesim and internal/ioclass/defaults replay it.
package blktrace
