package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestEverySubcommandAnswersHelp runs `kubectl prism NAME --help` (and -h, and `help NAME`)
// for every subcommand of the table: kubectl plugins answer with that subcommand's usage on
// stdout and exit 0. A subcommand added to the table without help fails here.
func TestEverySubcommandAnswersHelp(t *testing.T) {
	for _, c := range subcommands {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			var stdout, stderr bytes.Buffer
			code := dispatch(args, &stdout, &stderr, false)
			got := stdout.String()
			if code != 0 || stderr.Len() != 0 {
				t.Errorf("kubectl prism %s: exit %d, stderr %q; want 0 and nothing on stderr", strings.Join(args, " "), code, stderr.String())
			}
			if !strings.HasPrefix(got, "Usage:\n  kubectl prism "+c.name+" ") || !strings.Contains(got, "\nFlags:\n") {
				t.Errorf("kubectl prism %s printed, on stdout:\n%s\nwant its own usage (Usage: kubectl prism %s ...) and its flags", strings.Join(args, " "), got, c.name)
			}
			for _, other := range subcommands {
				if other.name != c.name && strings.Contains(got, "kubectl prism "+other.name+" ") {
					t.Errorf("kubectl prism %s printed the usage of %s too: the general usage, not the subcommand's", strings.Join(args, " "), other.name)
				}
			}
		}
	}
}

// TestHelpListsTheSubcommandsOwnFlags: the help's flag list is the flag set the subcommand
// parses, so a flag cannot be missing from it.
func TestHelpListsTheSubcommandsOwnFlags(t *testing.T) {
	for name, flags := range map[string][]string{
		"plan":     {"-inventory", "-policy", "-node-labels", "-classes", "-cephcluster", "-o"},
		"simulate": {"-trace", "-synthetic", "-fast-size", "-seq-cutoff"},
		"ioclass":  {"-policy", "-io"},
		"devices":  {"-kubeconfig", "-context", "-o", "-request-timeout"},
	} {
		var stdout bytes.Buffer
		if code := dispatch([]string{name, "--help"}, &stdout, &bytes.Buffer{}, false); code != 0 {
			t.Fatalf("kubectl prism %s --help: exit %d", name, code)
		}
		for _, f := range flags {
			if !strings.Contains(stdout.String(), "\n  "+f+" ") {
				t.Errorf("kubectl prism %s --help does not list %s:\n%s", name, f, stdout.String())
			}
		}
	}
}

func TestGeneralUsageAndUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string
		stderr     string
		stdoutNone bool
	}{
		{args: []string{"--help"}, code: 0, stdout: "kubectl prism: Prism's view"},
		{args: []string{"-h"}, code: 0, stdout: "kubectl prism: Prism's view"},
		{args: []string{"help"}, code: 0, stdout: "kubectl prism: Prism's view"},
		{args: nil, code: 2, stderr: "kubectl prism: Prism's view", stdoutNone: true},
		{args: []string{"bogus"}, code: 2, stderr: `unknown subcommand "bogus"`, stdoutNone: true},
		{args: []string{"help", "bogus"}, code: 2, stderr: `unknown subcommand "bogus"`, stdoutNone: true},
		{args: []string{"osds", "--bogus"}, code: 2, stderr: "kubectl prism osds: flag provided but not defined: -bogus", stdoutNone: true},
		{args: []string{"simulate", "--bogus"}, code: 2, stderr: "kubectl prism simulate: flag provided but not defined: -bogus", stdoutNone: true},
		{args: []string{"nodes", "extra"}, code: 2, stderr: `kubectl prism nodes: unexpected argument "extra"`, stdoutNone: true},
		{args: []string{"nodes", "-o", "wide"}, code: 2, stderr: "only devices takes -o wide", stdoutNone: true},
		{args: []string{"nodes", "--request-timeout", "-1s"}, code: 2, stderr: "--request-timeout -1s: must not be negative", stdoutNone: true},
		{args: []string{"nodes", "--request-timeout", "soon"}, code: 2, stderr: `invalid value "soon" for flag -request-timeout`, stdoutNone: true},
		{args: []string{"simulate"}, code: 1, stderr: "kubectl prism simulate: give exactly one of --trace", stdoutNone: true},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(tc.args, &stdout, &stderr, false)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) || (tc.stdoutNone && stdout.Len() != 0) {
			t.Errorf("kubectl prism %s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				strings.Join(tc.args, " "), code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}
