// Package cache holds the end-to-end tests of the cache lifecycle: internal/node/opencas's
// Reconcile, with the real host executor (hostexec.Local), runs "casadm" from PATH, which is
// the casadm emulator (cmd/casadm-emulator) built into a temporary directory and linked
// there under the name casadm. Each test keeps the emulator's state in its own temporary
// file and checks the outcome with the emulator's own casadm answers and state dump, never
// with Prism's view of it. Every such test runs twice (forEachRelease): on the emulator's
// open-cas-linux master formats and on the v26.03.2 release's (CASADM_EMULATOR_RELEASE).
//
// Run: go test ./test/cache/ -count=1 -v
package cache
