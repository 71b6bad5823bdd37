package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The command line, parsed the way casadm's argp.c args_parse does it, with
// its messages: options matched as -x or --long, each at most once,
// required ones checked before any is handled, arguments counted up to the
// next word that starts with '-' and a character, and a handler per option
// whose failure prints "Error during options handling".

// opt is one option of a command.
type opt struct {
	short    byte
	long     string
	arg      string // name of its argument; "" when it takes none
	required bool
	optional bool // the argument may be omitted (-d [<ID>], -j [<ID>])
}

// command is one casadm command.
type command struct {
	short byte
	long  string
	opts  []opt
	// ns holds the entries of a namespace command (-X/-G -n NAME).
	ns []nsEntry
	// handleOpt validates one option; false means failure (the handler
	// printed why, or casadm prints nothing more than the generic line).
	handleOpt func(c *cli, ns, long string, args []string) bool
	run       func(c *cli) int
}

type nsEntry struct {
	name string
	opts []opt
}

// argsIsUnrecognized is argp.c args_is_unrecognized.
func argsIsUnrecognized(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == '-' && len(s) > 1 {
		c := s[1]
		if isLetter(c) {
			return len(s) != 2
		}
		if c == '-' && len(s) > 2 && isLetter(s[2]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// argsIs is argp.c args_is.
func argsIs(in, long string, short byte) bool {
	if in == "" || in[0] != '-' || len(in) < 2 {
		return false
	}
	if short != 0 && in[1] == short && len(in) == 2 {
		return true
	}
	return in[1] == '-' && in[2:] == long
}

func optName(o opt) string {
	if o.short != 0 {
		return fmt.Sprintf("-%c/--%s", o.short, o.long)
	}
	return "--" + o.long
}

// countArgParams is argp.c count_arg_params.
func countArgParams(argv []string) int {
	for i, a := range argv {
		if len(a) > 1 && a[0] == '-' {
			return i
		}
	}
	return len(argv)
}

// parse runs args_parse for argv (argv[0] is the program name) and returns
// the exit code.
func (c *cli) parse(argv []string) int {
	if len(argv) < 2 {
		return c.refuse("No command given.\n")
	}
	name := argv[1]
	if argsIsUnrecognized(name) {
		return c.refuse("Unrecognized command %s\n", name)
	}
	i := slices.IndexFunc(commands, func(x command) bool { return argsIs(name, x.long, x.short) })
	if i < 0 {
		return c.refuse("Unrecognized command %s\n", name)
	}
	cmd := &commands[i]
	if len(argv) >= 3 {
		for _, a := range argv[2:] {
			if argsIs(a, "help", 'H') {
				c.commandHelp(cmd)
				return 0
			}
		}
	}
	opts, first, ns := cmd.opts, 2, ""
	switch {
	case cmd.ns != nil:
		if len(argv) < 3 {
			return c.refuse("Missing namespace option.\n")
		}
		if len(argv) < 4 {
			return c.refuse("Missing namespace name.\n")
		}
		if !argsIs(argv[2], "name", 'n') {
			return c.refuse("Unrecognized option.\n")
		}
		found := false
		for _, e := range cmd.ns {
			if e.name == argv[3] {
				opts, ns, found = e.opts, e.name, true
				break
			}
		}
		if !found {
			return c.refuse("Unrecognized namespace entry.\n")
		}
		first = 4
		c.a.ns = ns
	case cmd.opts == nil:
		return cmd.run(c)
	}

	for _, o := range opts {
		k := 0
		for _, a := range argv[first:] {
			if argsIs(a, o.long, o.short) {
				k++
			}
		}
		if o.required && k == 0 {
			return c.refuse("Missing required option %s\n", optName(o))
		}
		if k > 1 {
			return c.refuse("Option supplied more than once %s\n", optName(o))
		}
	}

	for i := first; i < len(argv); i++ {
		a := argv[i]
		if argsIsUnrecognized(a) {
			return c.refuse("Invalid format %s\n", a)
		}
		j := slices.IndexFunc(opts, func(o opt) bool { return argsIs(a, o.long, o.short) })
		if j < 0 {
			return c.refuse("Unrecognized option %s\n", a)
		}
		o := &opts[j]
		var args []string
		if o.arg != "" {
			n := countArgParams(argv[i+1:])
			if n == 0 && !o.optional {
				return c.refuse("Missing required argument in %s\n", a)
			}
			if n != 1 && (n != 0 || !o.optional) {
				return c.refuse("Invalid number of arguments for %s\n", a)
			}
			args = argv[i+1 : i+1+n]
			i += n
		}
		if !cmd.handleOpt(c, ns, o.long, args) {
			return c.refuse("Error during options handling\n")
		}
	}
	return cmd.run(c)
}

// refuse prints what is wrong with the command line and casadm's hint to
// its help, and returns the exit code 1.
func (c *cli) refuse(format string, a ...any) int {
	c.errf(format, a...)
	c.try()
	return 1
}

// strtoul is C's strtoul(s, &end, 10) requiring the whole string: leading
// white space and a sign are taken, negative values wrap.
func strtoul(s string) (uint64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg, t = t[0] == '-', t[1:]
	}
	if t == "" || t[0] < '0' || t[0] > '9' {
		return 0, false
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// validateNum is casadm's __validate_str_num, with its messages.
func (c *cli) validateNum(s, what string, min, max uint64) (uint64, bool) {
	v, ok := strtoul(s)
	if !ok {
		c.errf("Invalid %s, must be a correct unsigned decimal integer.\n", what)
		return 0, false
	}
	if v < min || v > max {
		c.errf("Invalid %s, must be in the range %d-%d.\n", what, min, max)
		return 0, false
	}
	return v, true
}

// validateDevice is casadm's validate_device_name for -d: the path must
// exist (the emulator's device list stands for the host's /dev).
func (c *cli) validateDevice(path string) bool {
	if len(path) >= 4096 {
		c.errf("Illegal device name\n")
		return false
	}
	if c.st.device(path) == nil {
		c.outf("Failed to query device status.\n")
		return false
	}
	return true
}
