package casadm

import "strconv"

// Command is the Open CAS administration tool (on the host, reached through the agent's
// executor; in tests, the emulator).
const Command = "casadm"

// Argv builders for every casadm call Prism makes, read-only ones first. Machine-readable
// output (-o csv) wherever casadm offers it; the parsers in this package read it.

func itoa(n int) string { return strconv.Itoa(n) }

// VersionArgv is `casadm -V -o csv`.
func VersionArgv() []string { return []string{Command, "-V", "-o", "csv"} }

// ListArgv is `casadm -L -o csv -b`: caches and cores, by-id paths.
func ListArgv() []string { return []string{Command, "-L", "-o", "csv", "-b"} }

// StatsArgv is `casadm -P -i CACHE -o csv`: a cache's statistics, its cores' included.
func StatsArgv(cache int) []string { return []string{Command, "-P", "-i", itoa(cache), "-o", "csv"} }

// IOClassStatsArgv is `casadm -P -i CACHE -d -o csv`: the cache's statistics per IO class.
func IOClassStatsArgv(cache int) []string {
	return []string{Command, "-P", "-i", itoa(cache), "-d", "-o", "csv"}
}

// CoreStatsArgv is `casadm -P -i CACHE -j CORE -o csv`.
func CoreStatsArgv(cache, core int) []string {
	return []string{Command, "-P", "-i", itoa(cache), "-j", itoa(core), "-o", "csv"}
}

// CoreUsageArgv is `casadm -P -i CACHE -j CORE -f usage -o csv`: the core's occupancy and
// dirty data.
func CoreUsageArgv(cache, core int) []string {
	return []string{Command, "-P", "-i", itoa(cache), "-j", itoa(core), "-f", "usage", "-o", "csv"}
}

// GetParamsArgv is `casadm -G -n NAMESPACE -i CACHE -o csv`.
func GetParamsArgv(namespace string, cache int) []string {
	return []string{Command, "-G", "-n", namespace, "-i", itoa(cache), "-o", "csv"}
}

// GetCoreParamsArgv is `casadm -G -n NAMESPACE -i CACHE -j CORE -o csv` (seq-cutoff).
func GetCoreParamsArgv(namespace string, cache, core int) []string {
	return []string{Command, "-G", "-n", namespace, "-i", itoa(cache), "-j", itoa(core), "-o", "csv"}
}

// ListIOClassesArgv is `casadm -C -L -i CACHE -o csv`: the loaded IO classes.
func ListIOClassesArgv(cache int) []string {
	return []string{Command, "-C", "-L", "-i", itoa(cache), "-o", "csv"}
}

// LoadIOClassesArgv is `casadm -C -C -i CACHE -f FILE`; FILE "-" reads standard input.
func LoadIOClassesArgv(cache int, file string) []string {
	return []string{Command, "-C", "-C", "-i", itoa(cache), "-f", file}
}

// StartArgv is `casadm -S -d DEV -i CACHE -c MODE -x LINE_KIB --force`: a new cache.
// --force discards what is on DEV: callers start only on a partition proven empty.
func StartArgv(dev string, cache int, mode string, lineKiB int) []string {
	return []string{Command, "-S", "-d", dev, "-i", itoa(cache), "-c", mode, "-x", itoa(lineKiB), "--force"}
}

// LoadArgv is `casadm -S -d DEV -l`: the cache whose metadata DEV holds, with its dirty data.
func LoadArgv(dev string) []string { return []string{Command, "-S", "-d", dev, "-l"} }

// StopArgv is `casadm -T -i CACHE` (casadm flushes first).
func StopArgv(cache int) []string { return []string{Command, "-T", "-i", itoa(cache)} }

// SetModeArgv is `casadm -Q -c MODE -i CACHE`, with `-f yes` to flush dirty data first.
func SetModeArgv(cache int, mode string, flush bool) []string {
	argv := []string{Command, "-Q", "-c", mode, "-i", itoa(cache)}
	if flush {
		argv = append(argv, "-f", "yes")
	}
	return argv
}

// AddCoreArgv is `casadm -A -i CACHE -d DEV -j CORE`.
func AddCoreArgv(cache int, dev string, core int) []string {
	return []string{Command, "-A", "-i", itoa(cache), "-d", dev, "-j", itoa(core)}
}

// FlushCoreArgv is `casadm -F -i CACHE -j CORE`.
func FlushCoreArgv(cache, core int) []string {
	return []string{Command, "-F", "-i", itoa(cache), "-j", itoa(core)}
}

// RemoveCoreArgv is `casadm -R -i CACHE -j CORE` (never -f: casadm flushes first).
func RemoveCoreArgv(cache, core int) []string {
	return []string{Command, "-R", "-i", itoa(cache), "-j", itoa(core)}
}

// RemoveInactiveArgv is `casadm --remove-inactive -i CACHE -j CORE`, with -f to drop the
// core's dirty data.
func RemoveInactiveArgv(cache, core int, dropDirty bool) []string {
	argv := []string{Command, "--remove-inactive", "-i", itoa(cache), "-j", itoa(core)}
	if dropDirty {
		argv = append(argv, "-f")
	}
	return argv
}

// SetParamsArgv is `casadm -X -n NAMESPACE -i CACHE [FLAG VALUE]...`.
func SetParamsArgv(namespace string, cache int, flagValues ...string) []string {
	return append([]string{Command, "-X", "-n", namespace, "-i", itoa(cache)}, flagValues...)
}

// SetCoreParamsArgv is `casadm -X -n NAMESPACE -i CACHE -j CORE [FLAG VALUE]...` (seq-cutoff).
func SetCoreParamsArgv(namespace string, cache, core int, flagValues ...string) []string {
	return append([]string{Command, "-X", "-n", namespace, "-i", itoa(cache), "-j", itoa(core)}, flagValues...)
}
