// Package doccheck checks that the shell commands README.md and docs/user-guide.md show are
// ones the e2e suite (test/e2e) or hack/'s scripts run, or are marked as not run: a
// `<!-- not run: REASON -->` line right before a ```sh block says why none of its commands is
// run by them. It checks `kubectl prism ...`, `helm ...` and `make ...`, by subcommand and flags.
//
// It also reads every runbook of docs/runbooks with internal/runbook: each must parse (its
// commands in ```sh blocks inside numbered steps, every placeholder declared and used), and a
// runbook with blocks not marked not run must be named by a drill under test/ that runs them.
package doccheck
