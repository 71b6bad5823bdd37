package ioclass

import (
	"math/bits"
	"slices"
)

// decision is an Evaluator's rules compiled into lookup tables, so Classify
// tests each field an IO carries once instead of every condition of every
// rule. It gives the same class as the rule-by-rule model (ClassifyReference,
// kept as the reference; FuzzDecision compares the two).
//
// A rule is the CNF of its conditions up to its first done: it matches when
// each '&'-term holds a true condition (see refMatch). Rule r (in evaluation
// order) owns byte r of a bit vector, one bit per term (at most 8 terms, the
// CRD's limit; a policy with more, or with more than 64 rules, keeps the
// reference model). Every field with conditions on it has a table from its
// value to the vector of terms some condition on that field makes true:
//
//   - numeric fields (request_size, lba, pid, core_id, wlth): the sorted
//     points where some comparison changes outcome cut the u64 range into
//     intervals; one vector per interval, found by binary search;
//   - io_direction, direct and metadata: one vector per combination;
//   - process_name: a map from the kernel's 15-character name;
//   - conditions on files (absent on a raw block device) are tested one by
//     one, only for IOs that have a file.
//
// ORing the vectors gives every term's truth; a rule matches when its byte is
// all ones (unused term bits are preset). io_class compares the class
// assigned so far, which depends on earlier rules: a term holding io_class
// is "dynamic" and, when none of its other conditions hold, is decided in
// evaluation order, only for rules whose other terms all hold.
type decision struct {
	nrules int
	words  int
	ids    []int
	// done: rules holding done (matching them stops classification).
	done uint64
	// anyDynamic: some rule has a dynamic term.
	anyDynamic bool
	// base: term bits that are always set (unused slots, terms holding done).
	base vector
	// dynSlots: the bits of dynamic terms.
	dynSlots vector
	// flags[write | direct<<1 | metadata<<2].
	flags                      [8]vector
	hasFlags                   bool
	comm                       commTable
	size, lba, pid, core, wlth numTable
	// fileConds are tested only when the IO has a file.
	fileConds []slotCond
	// dyn[r] are rule r's dynamic terms.
	dyn [][]dynTerm
}

const (
	maxDecisionRules = 64
	maxDecisionWords = maxDecisionRules / 8
	maxDecisionTerms = 8
)

// slotCond is one condition and the term bit it sets.
type slotCond struct {
	c    condition
	word int
	bit  uint64
}

// dynTerm is a term with io_class conditions: true when its bit is set (one
// of its other conditions holds) or one of conds holds for the class so far.
type dynTerm struct {
	word  int
	bit   uint64
	conds []condition
}

// numTable maps a u64 field to term vectors: value x is in interval i, the
// number of bounds <= x, whose vector is vecs[i]. bounds is padded with the
// largest u64 to a power of two minus one entries, so the search below runs
// a fixed number of steps without a data-dependent branch; a padding bound
// is never below x unless x is the largest u64, whose interval then repeats
// the last real one.
type numTable struct {
	bounds []uint64
	vecs   []vector
	conds  []slotCond
}

// vector is one bit per term; byte r of it belongs to rule r.
type vector [maxDecisionWords]uint64

func (v *vector) or(o *vector) {
	v[0] |= o[0]
	v[1] |= o[1]
	v[2] |= o[2]
	v[3] |= o[3]
	v[4] |= o[4]
	v[5] |= o[5]
	v[6] |= o[6]
	v[7] |= o[7]
}

// compileDecision builds the tables, or returns nil when the rules do not
// fit them (the Evaluator then runs the reference model).
func compileDecision(rules []classRule) *decision {
	if len(rules) > maxDecisionRules {
		return nil
	}
	d := &decision{nrules: len(rules), words: (len(rules) + 7) / 8, dyn: make([][]dynTerm, len(rules))}
	var flagConds, commConds []slotCond
	for r, cr := range rules {
		d.ids = append(d.ids, cr.id)
		terms := cnfTerms(cr.rule.conds)
		if len(terms) > maxDecisionTerms {
			return nil
		}
		if cr.rule.Done() {
			d.done |= 1 << r
		}
		w, shift := r/8, uint(r%8)*8
		for j := len(terms); j < maxDecisionTerms; j++ {
			d.base[w] |= 1 << (shift + uint(j))
		}
		for j, term := range terms {
			bit := uint64(1) << (shift + uint(j))
			if slices.ContainsFunc(term, func(c condition) bool { return c.kind == condDone }) {
				d.base[w] |= bit // done is true: so is its term
				continue
			}
			var classConds []condition
			for _, c := range term {
				sc := slotCond{c: c, word: w, bit: bit}
				switch c.kind {
				case condIOClass:
					classConds = append(classConds, c)
				case condIODirection, condDirect, condMetadata:
					flagConds = append(flagConds, sc)
				case condProcessName:
					commConds = append(commConds, sc)
				case condRequestSize:
					d.size.conds = append(d.size.conds, sc)
				case condLBA:
					d.lba.conds = append(d.lba.conds, sc)
				case condPID:
					d.pid.conds = append(d.pid.conds, sc)
				case condCoreID:
					d.core.conds = append(d.core.conds, sc)
				case condWLTH:
					d.wlth.conds = append(d.wlth.conds, sc)
				default: // conditions on the IO's file
					d.fileConds = append(d.fileConds, sc)
				}
			}
			if classConds != nil {
				d.dynSlots[w] |= bit
				d.dyn[r] = append(d.dyn[r], dynTerm{word: w, bit: bit, conds: classConds})
				d.anyDynamic = true
			}
		}
	}
	d.buildFlags(flagConds)
	d.buildComm(commConds)
	for _, t := range []*numTable{&d.size, &d.lba, &d.pid, &d.core, &d.wlth} {
		t.build()
	}
	return d
}

// cnfTerms splits a rule's conditions, up to and including its first done,
// into its '&'-terms.
func cnfTerms(conds []condition) [][]condition {
	var terms [][]condition
	for _, c := range conds {
		if c.and || terms == nil {
			terms = append(terms, nil)
		}
		terms[len(terms)-1] = append(terms[len(terms)-1], c)
		if c.kind == condDone {
			break
		}
	}
	return terms
}

func (d *decision) buildFlags(conds []slotCond) {
	if len(conds) == 0 {
		return
	}
	d.hasFlags = true
	for f := 0; f < 8; f++ {
		io := IO{Write: f&1 != 0, Direct: f&2 != 0, Metadata: f&4 != 0}
		for _, sc := range conds {
			if sc.c.test(&io, 0) {
				d.flags[f][sc.word] |= sc.bit
			}
		}
	}
}

func (d *decision) buildComm(conds []slotCond) {
	if len(conds) == 0 {
		return
	}
	vecs := map[string]*vector{}
	for _, sc := range conds {
		if len(sc.c.str) > MaxProcessName {
			continue // a kernel task name is shorter: never true
		}
		v := vecs[sc.c.str]
		if v == nil {
			v = &vector{}
			vecs[sc.c.str] = v
		}
		v[sc.word] |= sc.bit
	}
	n := 1
	for n < 2*len(vecs) {
		n *= 2
	}
	d.comm = commTable{mask: uint32(n - 1), keys: make([]string, n), vecs: make([]vector, n)}
	for name, v := range vecs {
		i := commHash(name) & d.comm.mask
		for d.comm.keys[i] != "" {
			i = (i + 1) & d.comm.mask
		}
		d.comm.keys[i], d.comm.vecs[i] = name, *v
	}
}

// commTable is an open-addressing hash table of process names (a Go map
// costs a fifth of a classification); a free slot has the empty key, which
// no process_name operand is. It is at most half full.
type commTable struct {
	mask uint32
	keys []string
	vecs []vector
}

// commHash is FNV-1a over at most 15 bytes.
func commHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

func (t *commTable) lookup(comm string) *vector {
	for i := commHash(comm) & t.mask; ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case comm:
			return &t.vecs[i]
		case "":
			return nil
		}
	}
}

// build cuts the u64 range where some condition changes outcome and
// evaluates every condition once per interval, at the interval's start.
func (t *numTable) build() {
	if len(t.conds) == 0 {
		return
	}
	for _, sc := range t.conds {
		v := sc.c.num
		// x < v and x >= v change at v; x <= v and x > v at v+1; x == v
		// and x != v at both.
		switch sc.c.op {
		case opLt, opGe:
			t.bounds = append(t.bounds, v)
		case opLe, opGt:
			if v < ^uint64(0) {
				t.bounds = append(t.bounds, v+1)
			}
		default:
			t.bounds = append(t.bounds, v)
			if v < ^uint64(0) {
				t.bounds = append(t.bounds, v+1)
			}
		}
	}
	slices.Sort(t.bounds)
	t.bounds = slices.Compact(t.bounds)
	if len(t.bounds) > 0 && t.bounds[0] == 0 {
		t.bounds = t.bounds[1:] // interval 0 already starts at 0
	}
	real := len(t.bounds)
	for len(t.bounds)&(len(t.bounds)+1) != 0 {
		t.bounds = append(t.bounds, ^uint64(0))
	}
	t.vecs = make([]vector, len(t.bounds)+1)
	for i := 0; i <= len(t.bounds); i++ {
		x := uint64(0)
		if i > 0 {
			x = t.bounds[min(i, real)-1]
		}
		if i > real && real > 0 {
			x = t.bounds[real-1]
		}
		for _, sc := range t.conds {
			if sc.c.op.compare(x, sc.c.num) {
				t.vecs[i][sc.word] |= sc.bit
			}
		}
	}
}

// interval returns the number of bounds <= x (len(bounds) is 2^k - 1).
func (t *numTable) interval(x uint64) int {
	b, i := t.bounds, 0
	for step := (len(b) + 1) >> 1; step > 0; step >>= 1 {
		// i += step when b[i+step-1] <= x, without a branch: the borrow of
		// x - b is 1 exactly when x < b.
		_, borrow := bits.Sub64(x, b[i+step-1], 0)
		i += step & (int(borrow) - 1)
	}
	return i
}

func (t *numTable) or(v *vector, x uint64) {
	if t.vecs != nil {
		v.or(&t.vecs[t.interval(x)])
	}
}

// fullBytes returns one bit per byte of x that is 0xff, gathered into the
// low 8 bits (byte i → bit i).
func fullBytes(x uint64) uint64 {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	y := ^x
	// A byte's high bit of z is set when the byte of y is zero: no carry
	// crosses bytes since (b & 0x7f) + 0x7f <= 0xfe.
	z := ^(((y & lo7) + lo7) | y) & hi
	return (z >> 7) * 0x0102040810204080 >> 56
}

func (d *decision) classify(io *IO) int {
	v := d.base
	words := d.words
	if d.hasFlags {
		f := 0
		if io.Write {
			f = 1
		}
		if io.Direct {
			f |= 2
		}
		if io.Metadata {
			f |= 4
		}
		v.or(&d.flags[f])
	}
	if d.comm.keys != nil && io.Comm != "" {
		comm := io.Comm
		if len(comm) > MaxProcessName {
			comm = comm[:MaxProcessName]
		}
		if vec := d.comm.lookup(comm); vec != nil {
			v.or(vec)
		}
	}
	d.size.or(&v, io.Size)
	d.lba.or(&v, io.LBA)
	d.pid.or(&v, uint64(io.PID))
	d.core.or(&v, uint64(io.CoreID))
	d.wlth.or(&v, uint64(io.WLTH))
	if io.HasFile {
		for i := range d.fileConds {
			if sc := &d.fileConds[i]; sc.c.test(io, 0) {
				v[sc.word] |= sc.bit
			}
		}
	}
	// full: rules whose every term holds; possible: rules whose every
	// static term holds (dynamic ones may still hold through io_class).
	var full, possible uint64
	for w := 0; w < words; w++ {
		full |= fullBytes(v[w]) << (8 * w)
		if d.anyDynamic {
			possible |= fullBytes(v[w]|d.dynSlots[w]) << (8 * w)
		}
	}
	if !d.anyDynamic {
		// The first matching rule with done stops; before it, the last
		// matching rule wins.
		if stop := full & d.done; stop != 0 {
			full &= stop ^ (stop - 1) // up to and including the lowest done
		}
		if full == 0 {
			return 0
		}
		return d.ids[63-bits.LeadingZeros64(full)]
	}
	class := 0
	for m := possible; m != 0; m &= m - 1 {
		r := bits.TrailingZeros64(m)
		if full&(1<<r) == 0 && !d.dynHolds(r, &v, class) {
			continue
		}
		class = d.ids[r]
		if d.done&(1<<r) != 0 {
			break
		}
	}
	return class
}

// dynHolds says every dynamic term of rule r holds given the class so far.
func (d *decision) dynHolds(r int, v *vector, class int) bool {
	for i := range d.dyn[r] {
		t := &d.dyn[r][i]
		if v[t.word]&t.bit != 0 {
			continue
		}
		ok := false
		for j := range t.conds {
			if t.conds[j].op.compare(uint64(class), t.conds[j].num) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
