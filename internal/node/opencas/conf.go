package opencas

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// opencas.conf, as utils/opencas.py reads it (cas_config.from_file):
//   - the first line must match ^version=.*$;
//   - '#' starts a comment anywhere; lines are right-stripped; blank lines are skipped;
//   - "[caches]" and "[cores]" open the sections;
//   - a line is split on white space into 3 or 4 columns; the 4th is a comma-separated
//     key=value list that is LOWER-CASED before it is parsed (so paths in it must be
//     lower-case), each key at most once.
//
// Prism owns only the lines of its caches: MergeConf replaces the cache line of its cache id
// (or of its partition) and that cache's core lines, and keeps every other line as it is.

// ConfVersion is the version tag Prism writes into a new opencas.conf.
const ConfVersion = "version=19.3.0"

// confHeader starts an opencas.conf Prism creates.
const confHeader = ConfVersion + `
# Open CAS configuration (utils/opencas.conf syntax). Prism writes the lines of the caches
# it manages and keeps every other line as it finds it.
`

// ConfCache is one [caches] line.
type ConfCache struct {
	ID     int
	Device string
	Mode   string
	// Params are the extra fields, in order.
	Params []ConfParam
}

// ConfCore is one [cores] line.
type ConfCore struct {
	CacheID, CoreID int
	Device          string
	Params          []ConfParam
}

// ConfParam is one key=value extra field.
type ConfParam struct{ Key, Value string }

// Conf is a parsed opencas.conf.
type Conf struct {
	Version string
	Caches  []ConfCache
	Cores   []ConfCore
}

func (c ConfCache) line() string {
	s := fmt.Sprintf("%d\t%s\t%s", c.ID, c.Device, c.Mode)
	return s + joinParams(c.Params)
}

func (c ConfCore) line() string {
	return fmt.Sprintf("%d\t%d\t%s", c.CacheID, c.CoreID, c.Device) + joinParams(c.Params)
}

func joinParams(ps []ConfParam) string {
	if len(ps) == 0 {
		return ""
	}
	kv := make([]string, len(ps))
	for i, p := range ps {
		kv[i] = p.Key + "=" + p.Value
	}
	return "\t" + strings.Join(kv, ",")
}

var versionRe = regexp.MustCompile(`^version=.*$`)

// confContent strips a comment and trailing white space, as opencas.py does.
func confContent(line string) string {
	line, _, _ = strings.Cut(line, "#")
	return strings.TrimRight(line, " \t\n\v\f\r")
}

// ParseConf reads opencas.conf as opencas.py does, without its host checks (device nodes
// and the IO class file existing). Errors name the line.
func ParseConf(text string) (Conf, error) {
	lines := strings.Split(text, "\n")
	var c Conf
	// Python's readline keeps the newline; the regex's $ matches before it.
	if len(lines) == 0 || !versionRe.MatchString(lines[0]) || strings.ContainsRune(lines[0], '\r') {
		return c, fmt.Errorf("line 1: no version tag found")
	}
	c.Version = lines[0]
	section := ""
	for i, raw := range lines[1:] {
		n := i + 2
		line := confContent(raw)
		if line == "" {
			continue
		}
		switch line {
		case "[caches]", "[cores]":
			section = line
			continue
		}
		fields := strings.Fields(line)
		switch section {
		case "[caches]":
			cc, err := parseConfCache(fields)
			if err != nil {
				return c, fmt.Errorf("line %d: %v", n, err)
			}
			c.Caches = append(c.Caches, cc)
		case "[cores]":
			k, err := parseConfCore(fields)
			if err != nil {
				return c, fmt.Errorf("line %d: %v", n, err)
			}
			c.Cores = append(c.Cores, k)
		}
	}
	return c, nil
}

func parseParams(col string, valid func(k, v string) error) ([]ConfParam, error) {
	var ps []ConfParam
	seen := map[string]bool{}
	for _, item := range strings.Split(strings.ToLower(col), ",") {
		k, v, ok := strings.Cut(item, "=")
		if !ok || strings.Contains(v, "=") {
			return nil, fmt.Errorf("invalid extra field %q", item)
		}
		if seen[k] {
			return nil, fmt.Errorf("repeated parameter %q", k)
		}
		seen[k] = true
		if err := valid(k, v); err != nil {
			return nil, err
		}
		ps = append(ps, ConfParam{k, v})
	}
	return ps, nil
}

func pyInt(s string) (int, error) {
	// Python's int() takes surrounding white space (split removed it), a sign and
	// underscores between digits; casctl ids are plain decimals in practice.
	v, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	return v, nil
}

func parseConfCache(f []string) (ConfCache, error) {
	var c ConfCache
	switch {
	case len(f) < 3:
		return c, fmt.Errorf("invalid cache configuration (too few columns)")
	case len(f) > 4:
		return c, fmt.Errorf("invalid cache configuration (too many columns)")
	}
	id, err := pyInt(f[0])
	if err != nil {
		return c, err
	}
	if id < 1 || id > 16384 {
		return c, fmt.Errorf("%d is invalid cache id", id)
	}
	c.ID, c.Device, c.Mode = id, f[1], strings.ToLower(f[2])
	if !slices.Contains([]string{"wt", "pt", "wa", "wb", "wo"}, c.Mode) {
		return c, fmt.Errorf("invalid cache mode %s", c.Mode)
	}
	if len(f) == 4 {
		c.Params, err = parseParams(f[3], func(k, v string) error {
			ok := true
			switch k {
			case "ioclass_file":
			case "cleaning_policy":
				ok = slices.Contains([]string{"acp", "alru", "nop"}, v)
			case "promotion_policy":
				ok = slices.Contains([]string{"always", "nhit"}, v)
			case "cache_line_size":
				ok = slices.Contains([]string{"4", "8", "16", "32", "64"}, v)
			case "lazy_startup":
				ok = v == "true" || v == "false"
			case "target_failover_state":
				ok = v == "active" || v == "standby"
			default:
				return fmt.Errorf("%s is invalid parameter name", k)
			}
			if !ok {
				return fmt.Errorf("%s is invalid %s value", v, k)
			}
			return nil
		})
	}
	return c, err
}

func parseConfCore(f []string) (ConfCore, error) {
	var c ConfCore
	switch {
	case len(f) > 4:
		return c, fmt.Errorf("invalid core configuration (too many columns)")
	case len(f) < 3:
		return c, fmt.Errorf("invalid core configuration (too few columns)")
	}
	var err error
	if c.CacheID, err = pyInt(f[0]); err != nil {
		return c, err
	}
	if c.CoreID, err = pyInt(f[1]); err != nil {
		return c, err
	}
	c.Device = f[2]
	if c.CoreID < 0 || c.CoreID > 4095 {
		return c, fmt.Errorf("%d is invalid core id", c.CoreID)
	}
	if c.CacheID < 1 || c.CacheID > 16384 {
		return c, fmt.Errorf("%d is invalid cache id", c.CacheID)
	}
	if len(f) == 4 {
		c.Params, err = parseParams(f[3], func(k, v string) error {
			if k != "lazy_startup" {
				return fmt.Errorf("'%s' is invalid core param name", k)
			}
			if v != "true" && v != "false" {
				return fmt.Errorf("%s is invalid value for '%s' core param", v, k)
			}
			return nil
		})
	}
	return c, err
}

// MergeConf returns existing with the lines of one cache replaced: every [caches] line of
// cacheID or of partition, and the [cores] lines of those caches, are dropped; cache (when
// not nil) is added at the end of [caches] and cores at the end of [cores]. Every other line
// is kept as it is. A missing version line or section is added. Merging the result again
// with the same arguments returns it unchanged.
func MergeConf(existing string, cacheID int, partition string, cache *ConfCache, cores []ConfCore) string {
	if existing == "" {
		existing = confHeader
	}
	lines := strings.Split(strings.TrimSuffix(existing, "\n"), "\n")
	if !versionRe.MatchString(lines[0]) || strings.ContainsRune(lines[0], '\r') {
		lines = append([]string{ConfVersion}, lines...)
	}
	// Which cache ids are ours: cacheID, and any id whose cache line names the partition.
	ours := map[int]bool{cacheID: true}
	isOurs := func(field string) bool {
		id, err := pyInt(field)
		return err == nil && ours[id]
	}
	section := ""
	for _, l := range lines[1:] {
		c := confContent(l)
		if c == "[caches]" || c == "[cores]" {
			section = c
			continue
		}
		if f := strings.Fields(c); section == "[caches]" && len(f) >= 2 && f[1] == partition {
			if id, err := pyInt(f[0]); err == nil {
				ours[id] = true
			}
		}
	}
	// Our new lines go where our old ones were (so that merging several caches in turn
	// settles instead of moving each to the end in turn), else at the end of their section.
	var kept []string
	at := map[string]int{"[caches]": -1, "[cores]": -1}
	section = ""
	for i, l := range lines {
		c := confContent(l)
		if i > 0 && (c == "[caches]" || c == "[cores]") {
			section = c
		}
		f := strings.Fields(c)
		if i > 0 && len(f) > 0 && (section == "[caches]" || section == "[cores]") && c != section && isOurs(f[0]) {
			if at[section] < 0 {
				at[section] = len(kept)
			}
			continue
		}
		kept = append(kept, l)
	}
	kept = ensureSection(kept, "[caches]")
	kept = ensureSection(kept, "[cores]")
	var coreLines []string
	for _, k := range cores {
		coreLines = append(coreLines, k.line())
	}
	if cache != nil {
		i := at["[caches]"]
		if i < 0 {
			i = sectionEnd(kept, "[caches]")
		}
		kept = slices.Insert(kept, i, cache.line())
		if at["[cores]"] >= i {
			at["[cores]"]++
		}
	}
	i := at["[cores]"]
	if i < 0 {
		i = sectionEnd(kept, "[cores]")
	}
	kept = slices.Insert(kept, i, coreLines...)
	return strings.Join(kept, "\n") + "\n"
}

func sectionIndex(lines []string, name string) int {
	for i, l := range lines {
		if i > 0 && confContent(l) == name {
			return i
		}
	}
	return -1
}

func ensureSection(lines []string, name string) []string {
	if sectionIndex(lines, name) >= 0 {
		return lines
	}
	return append(lines, name)
}

// sectionEnd is where a line added at the end of the section goes: after its last non-blank line.
func sectionEnd(lines []string, name string) int {
	start := sectionIndex(lines, name)
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if c := confContent(lines[i]); strings.HasPrefix(c, "[") && strings.HasSuffix(c, "]") {
			end = i
			break
		}
	}
	at := start + 1
	for i := start + 1; i < end; i++ {
		if strings.TrimSpace(lines[i]) != "" {
			at = i + 1
		}
	}
	return at
}
