// Package ioclass turns a ClassificationPolicy (the PRISM classifier) into the
// Open CAS IO class configuration and models what Open CAS does with it.
//
//   - Compile checks a policy against every limit casadm and the kernel
//     enforce and writes the configuration; Config.CSV is the file
//     `casadm --io-class --load-config` reads, ParseCSV reads it back with
//     casadm's own rules and messages.
//   - ParseRule and Evaluator model the kernel classifier
//     (modules/cas_cache/classifier.c), so a policy can be tested, fuzzed and
//     explained without a kernel.
//   - Warnings flags conditions that can never match on a raw BlueStore device.
//   - DefaultCephOSD is the default policy for Ceph OSD data devices; its
//     evidence (a trace of a real OSD and its replay) is in ./defaults.
//
// The facts behind every limit and message are in
// /work/shared/reference/opencas (FORMATS.md, KERNEL-FACTS.md and real casadm
// outputs, copied to testdata/). Nothing here runs casadm.
package ioclass
