package main

import (
	_ "embed"
	"fmt"
	"strings"
)

// helpText is casadm's own help, captured from the real casadm (the
// reference's outputs/casadm_help.txt): one "$ casadm ... -H" section per
// command.
//
//go:embed help.txt
var helpText string

// helpSections maps "-H", "-S -H", ... to the text casadm prints.
var helpSections = func() map[string]string {
	out := map[string]string{}
	var key string
	var body []string
	flush := func() {
		if key != "" {
			// Each section is followed by one blank separator line.
			text := strings.Join(body, "\n")
			out[key] = strings.TrimSuffix(text, "\n") + "\n"
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(helpText, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "$ casadm "); ok {
			flush()
			key, body = rest, nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}()

// mainHelp is `casadm -H` (always printed with the name "casadm").
func (c *cli) mainHelp() { c.outf("%s", helpSections["-H"]) }

// Help of commands the capture does not cover, in casadm's layout.
var extraHelp = map[string]struct {
	desc string
	opts [][3]string // short, long with argument, description
}{
	"attach-cache": {"Attach cache device", [][3]string{
		{"d", "cache-device <DEVICE>", "Caching device to be used"},
		{"i", "cache-id <ID>", "Identifier of cache instance <1-16384> (if not provided, the first available number will be used)"},
		{"f", "force", "Force attaching the cache device"}}},
	"detach-cache": {"Detach cache device", [][3]string{{"i", "cache-id <ID>", "Identifier of cache instance <1-16384>"}}},
	"remove-inactive": {"Remove inactive core device from cache instance", [][3]string{
		{"i", "cache-id <ID>", "Identifier of cache instance <1-16384>"},
		{"j", "core-id <ID>", "Identifier of core <0-4095> within given cache instance"},
		{"f", "force", "Force dirty inactive core removal"}}},
	"remove-detached": {"Remove core device from core pool", [][3]string{{"d", "device <DEVICE>", "Path to core device"}}},
	"version":         {"Print CAS version", [][3]string{{"o", "output-format <FORMAT>", "Output format: {table|csv}"}}},
	"zero-metadata": {"Clear metadata from caching device", [][3]string{
		{"d", "device <DEVICE>", "Path to device on which metadata would be cleared"},
		{"f", "force", "Ignore potential dirty data on cache device"}}},
}

// commandHelp is `casadm <command> -H`.
func (c *cli) commandHelp(cmd *command) {
	if cmd.long == "help" {
		c.mainHelp()
		return
	}
	if cmd.short != 0 {
		if text, ok := helpSections[fmt.Sprintf("-%c -H", cmd.short)]; ok {
			c.outf("%s", strings.ReplaceAll(text, "Usage: casadm ", "Usage: "+c.prog+" "))
			return
		}
	}
	h := extraHelp[cmd.long]
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s --%s", c.prog, cmd.long)
	optional := false
	for _, o := range cmd.opts {
		if o.required {
			fmt.Fprintf(&b, " --%s", o.long)
			if o.arg != "" {
				fmt.Fprintf(&b, " <%s>", o.arg)
			}
		} else {
			optional = true
		}
	}
	if optional {
		b.WriteString(" [option...]")
	}
	fmt.Fprintf(&b, "\n\n   %s\n\n", h.desc)
	name := "--" + cmd.long
	if cmd.short != 0 {
		name = fmt.Sprintf("--%s (-%c)", cmd.long, cmd.short)
	}
	if len(h.opts) > 0 {
		fmt.Fprintf(&b, "Options that are valid with %s are:\n", name)
	}
	for _, o := range h.opts {
		short := ""
		if o[0] != "" {
			short = "-" + o[0]
		}
		fmt.Fprintf(&b, "   %-4s--%-31s%s\n", short, o[1], o[2])
	}
	c.outf("%s", b.String())
}
