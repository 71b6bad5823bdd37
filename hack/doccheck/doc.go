// Package doccheck checks that the shell commands README.md and docs/user-guide.md show are
// ones the e2e suite (test/e2e) or hack/'s scripts run, or are marked as not run: a
// `<!-- not run: REASON -->` line right before a ```sh block says why none of its commands is
// run by them. It checks `kubectl prism ...`, `helm ...` and `make ...`, by subcommand and flags.
package doccheck
