package ioclass

import (
	"fmt"
	"strings"
)

// IO is what the kernel classifier can see of one bio at the cached device.
type IO struct {
	// Size is the bio size in bytes (request_size): the size as it reaches
	// the cached device, not the application's block size.
	Size uint64
	// Write is the data direction (io_direction).
	Write bool
	// Comm is the submitting task's name (process_name); the kernel keeps
	// 15 characters, so longer names are compared on their first 15.
	Comm string
	// LBA is the start sector in 512-byte units from the start of the core
	// device (lba).
	LBA uint64
	// CoreID is the core the IO targets: the suffix of /dev/casX-<core> (core_id).
	CoreID int
	// PID is the submitting task's pid as the kernel sees it: the thread id (pid).
	PID int
	// WLTH is the bio's write lifetime hint (wlth).
	WLTH int
	// Direct is set when the data page is anonymous memory: O_DIRECT from a
	// user buffer (direct).
	Direct bool
	// Metadata is set for filesystem metadata IO and buffered IO through a
	// block device's own page cache (metadata).
	Metadata bool
	// HasFile is set when the page belongs to a regular file's page cache;
	// the conditions below need it.
	HasFile bool
	// Dir is the clean absolute path of the file's directory; directory:P
	// matches when P is Dir, one of its ancestors, or the file itself.
	Dir string
	// FileName is the file's name in Dir (file_name_prefix).
	FileName string
	// Extension is the part of FileName after its last '.' (extension).
	Extension string
	// FileSize is the file's size in bytes (file_size).
	FileSize uint64
	// FileOffset is the byte offset in the file of the bio's first page (file_offset).
	FileOffset uint64
}

// test evaluates one condition; class is the class assigned so far.
// It must not allocate: Classify runs it for every simulated IO.
func (c *condition) test(io *IO, class int) bool {
	switch c.kind {
	case condDone:
		return true
	case condMetadata:
		return io.Metadata
	case condDirect:
		return io.Direct
	case condIOClass:
		return c.op.compare(uint64(class), c.num)
	case condFileSize:
		return io.HasFile && c.op.compare(io.FileSize, c.num)
	case condDirectory:
		return io.HasFile && dirMatches(io.Dir, io.FileName, c.str)
	case condCoreID:
		return c.op.compare(uint64(io.CoreID), c.num)
	case condExtension:
		return io.HasFile && io.Extension == c.str
	case condFileNamePrefix:
		return io.HasFile && strings.HasPrefix(io.FileName, c.str)
	case condLBA:
		return c.op.compare(io.LBA, c.num)
	case condPID:
		return c.op.compare(uint64(io.PID), c.num)
	case condProcessName:
		comm := io.Comm
		if len(comm) > MaxProcessName {
			comm = comm[:MaxProcessName]
		}
		return comm == c.str
	case condFileOffset:
		return io.HasFile && c.op.compare(io.FileOffset, c.num)
	case condRequestSize:
		return c.op.compare(io.Size, c.num)
	case condIODirection:
		return io.Write == c.write
	case condWLTH:
		return c.op.compare(uint64(io.WLTH), c.num)
	}
	return false
}

// dirMatches walks up from the file like the kernel: the file itself, its
// directory, then every ancestor up to /.
func dirMatches(dir, name, want string) bool {
	if want == "/" {
		return true
	}
	if strings.HasPrefix(dir, want) && (len(dir) == len(want) || dir[len(want)] == '/') {
		return true
	}
	// want == dir + "/" + name (dir "/" has no extra slash); an unknown
	// directory ("") only matches "/".
	if dir == "" || name == "" || !strings.HasSuffix(want, name) {
		return false
	}
	parent := want[:len(want)-len(name)]
	if dir == "/" {
		return parent == "/"
	}
	return len(parent) == len(dir)+1 && parent[len(dir)] == '/' && strings.HasPrefix(parent, dir)
}

// eval runs the rule like the kernel's cas_cls_process_rule: left to right
// from false; a condition joined with '&' is reached only while the result is
// true; done makes the rule match and ends its evaluation. So A|B&C|D is
// (A or B) and (C or D), and conditions after done are never looked at.
func (r *Rule) eval(io *IO, class int) (match, stop bool) {
	for i := range r.conds {
		c := &r.conds[i]
		if c.and && !match {
			return false, false
		}
		t := c.test(io, class)
		if c.and {
			match = t && match
		} else {
			match = t || match
		}
		if c.kind == condDone {
			return match, true
		}
	}
	return match, false
}

// Match evaluates the rule for io given the class assigned so far; stop says
// a done condition ended classification.
func (r Rule) Match(io IO, class int) (match, stop bool) { return r.eval(&io, class) }

// Evaluator classifies IOs with a loaded configuration, like the kernel.
type Evaluator struct {
	rules []classRule
	// dec is rules compiled into lookup tables (decide.go); nil when they
	// do not fit, and Classify then runs the rules one by one.
	dec *decision
}

type classRule struct {
	id   int
	rule Rule
}

// NewEvaluator parses every rule of cfg. Class 0 never has a rule (the kernel
// skips it whatever its name), and neither does master's reserved class 33
// "prefetch". An error names the class and carries the kernel's category.
func NewEvaluator(cfg Config) (*Evaluator, error) {
	e := &Evaluator{}
	for _, cl := range cfg.sorted() {
		if cl.ID == 0 || (cl.ID == masterPrefetchID && cl.Rule == masterPrefetchName) {
			continue
		}
		r, err := ParseRule(cl.Rule)
		if err != nil {
			return nil, fmt.Errorf("IO class %d rule %q: %w", cl.ID, cl.Rule, err)
		}
		if len(r.conds) == 0 {
			continue // an empty name is no rule
		}
		e.rules = append(e.rules, classRule{cl.ID, r})
	}
	e.dec = compileDecision(e.rules)
	return e, nil
}

// Classify returns the class the kernel would assign: rules in ascending id,
// every matching rule overwrites the class, a matching rule with done stops;
// 0 when nothing matches. It does not allocate.
func (e *Evaluator) Classify(io IO) int {
	if e.dec != nil {
		return e.dec.classify(&io)
	}
	return e.ClassifyReference(io)
}

// ClassifyReference is Classify as the kernel does it, rule by rule in
// ascending id, condition by condition. It is the reference the compiled
// tables behind Classify are tested against (FuzzDecision), and what they
// are measured against (BenchmarkClassify).
func (e *Evaluator) ClassifyReference(io IO) int {
	class := 0
	for i := range e.rules {
		match, stop := e.rules[i].rule.eval(&io, class)
		if match {
			class = e.rules[i].id
		}
		if stop {
			break
		}
	}
	return class
}

// Step is one rule's verdict in Trace.
type Step struct {
	ID      int
	Rule    string
	Matched bool
	// Stopped says the rule's done ended classification here.
	Stopped bool
}

// Trace classifies io and returns every rule evaluated, for explaining a
// decision (kubectl prism ioclass explain).
func (e *Evaluator) Trace(io IO) (int, []Step) {
	class := 0
	var steps []Step
	for i := range e.rules {
		match, stop := e.rules[i].rule.eval(&io, class)
		steps = append(steps, Step{ID: e.rules[i].id, Rule: e.rules[i].rule.text, Matched: match, Stopped: stop})
		if match {
			class = e.rules[i].id
		}
		if stop {
			break
		}
	}
	return class, steps
}
