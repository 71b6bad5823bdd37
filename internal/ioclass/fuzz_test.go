package ioclass

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// specGen turns fuzz bytes into a policy, mixing valid and invalid values so
// the fuzzer reaches both Compile's successes and every check.
type specGen struct{ data []byte }

func (g *specGen) next() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *specGen) pick(list []string) string { return list[int(g.next())%len(list)] }

// raw takes up to n bytes of input as a string, sometimes repeated to
// reach length limits.
func (g *specGen) raw() string {
	n := int(g.next()) % 16
	if n > len(g.data) {
		n = len(g.data)
	}
	s := string(g.data[:n])
	g.data = g.data[n:]
	if g.next()%8 == 0 {
		s = strings.Repeat(s, 64)
	}
	return s
}

var (
	fuzzTypes = []string{"RequestSize", "IODirection", "ProcessName", "LBA", "CoreID", "WriteLifeHint", "Direct", "PID",
		"Metadata", "Directory", "FileSize", "Extension", "FileNamePrefix", "FileOffset", "IOClass", "Bogus", ""}
	fuzzComparisons = []string{"", "", "Eq", "Ne", "Lt", "Gt", "Le", "Ge", "eq", "Between"}
	fuzzValues      = []string{"", "0", "1", "32", "33", "4095", "4096", "65536", "0001", "18446744073709551615", "18446744073709551616",
		"-1", "+1", "abc", "read", "write", "both", "bstore_kv_sync", "tp_osd_tp", "bstore_kv_finals", "/var/log", "a&b", "a|b",
		"c:d", "a,b", `a"b`, " x", "x ", "a b", "log", "\x00", "\xff"}
	fuzzNames  = []string{"unclassified", "a", "b", "c", "hot", "Bad_Name", "", "x-y", "unclassified"}
	fuzzAllocs = []string{"1", "0", ".5", "0.25", "1.00", "0.", "1.", ".125", "0.125", "1e0", "", "2", "0x1", "nan", "1.5"}
	fuzzPrios  = []int32{-1, 0, 1, 22, 255, 256}
)

func (g *specGen) condition() v1alpha1.IOCondition {
	c := v1alpha1.IOCondition{
		Type:       v1alpha1.IOConditionType(g.pick(fuzzTypes)),
		Comparison: v1alpha1.Comparison(g.pick(fuzzComparisons)),
		Value:      g.pick(fuzzValues),
	}
	if g.next()%4 == 0 {
		c.Value = g.raw()
	}
	return c
}

func (g *specGen) spec() *v1alpha1.ClassificationPolicySpec {
	spec := &v1alpha1.ClassificationPolicySpec{}
	// At most one class per 4 input bytes: short inputs stay cheap, so the
	// fuzzer spends its time exploring rather than minimising.
	for n := min(int(g.next())%36, len(g.data)/4); n > 0; n-- {
		c := v1alpha1.IOClass{
			ID:         int32(g.next()%36) - 1,
			Name:       g.pick(fuzzNames),
			Allocation: g.pick(fuzzAllocs),
			Done:       g.next()%2 == 0,
		}
		if g.next()%8 == 0 {
			c.Name = g.raw()
		}
		switch g.next() % 4 {
		case 0:
			c.Pinned = true
		case 1:
			c.Pinned, c.EvictionPriority = true, &fuzzPrios[g.next()%6]
		default:
			c.EvictionPriority = &fuzzPrios[g.next()%6]
		}
		for terms := int(g.next()) % 10; terms > 0; terms-- {
			var t v1alpha1.MatchTerm
			for alts := int(g.next()) % 10; alts > 0; alts-- {
				t.AnyOf = append(t.AnyOf, g.condition())
			}
			c.AllOf = append(c.AllOf, t)
		}
		spec.Classes = append(spec.Classes, c)
	}
	return spec
}

// validValue picks a value the condition type accepts, so valid-mode specs
// reach Compile's success path.
func (g *specGen) validCondition() v1alpha1.IOCondition {
	t := v1alpha1.IOConditionType(fuzzTypes[int(g.next())%15])
	c := v1alpha1.IOCondition{Type: t}
	switch conditions[apiConditions[t]].operand {
	case operandNone:
	case operandNumeric:
		c.Comparison = v1alpha1.Comparison(fuzzComparisons[int(g.next())%8])
		c.Value = strconv.Itoa(int(g.next()) % 33)
		if t != v1alpha1.ConditionIOClass && t != v1alpha1.ConditionCoreID && g.next()%2 == 0 {
			c.Value = g.pick([]string{"4095", "65536", "0001", "18446744073709551615"})
		}
	case operandDirection:
		c.Value = g.pick([]string{"read", "write"})
	default:
		c.Value = g.pick([]string{"bstore_kv_sync", "tp_osd_tp", "/var/log", "log", "a b", "x"})
	}
	return c
}

func (g *specGen) validSpec() *v1alpha1.ClassificationPolicySpec {
	spec := &v1alpha1.ClassificationPolicySpec{}
	if g.next()%2 == 0 {
		spec.Classes = append(spec.Classes, v1alpha1.IOClass{ID: 0, Name: UnclassifiedName, Pinned: true, Allocation: "1"})
	}
	for id := int32(1); id <= MaxClassID && len(g.data) > 0; id += 1 + int32(g.next()%4) {
		c := v1alpha1.IOClass{ID: id, Name: "c" + strconv.Itoa(int(id)), Allocation: g.pick(fuzzAllocs[:8]), Done: g.next()%2 == 0}
		if g.next()%3 == 0 {
			c.Pinned = true
		} else {
			c.EvictionPriority = &fuzzPrios[1+g.next()%4]
		}
		for terms := 1 + int(g.next())%3; terms > 0; terms-- {
			var t v1alpha1.MatchTerm
			for alts := 1 + int(g.next())%3; alts > 0; alts-- {
				t.AnyOf = append(t.AnyOf, g.validCondition())
			}
			c.AllOf = append(c.AllOf, t)
		}
		spec.Classes = append(spec.Classes, c)
	}
	return spec
}

// FuzzCompile: random policies never panic; errors name a field; whatever
// Compile accepts is a CSV casadm reads back identically, every rule is one
// the kernel accepts, none ends with an operator, and it classifies.
func FuzzCompile(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 1, 0, 0, 0, 2, 1, 1, 0, 0, 0, 2, 2, 3, 1, 4, 0, 0})
	f.Add(bytes.Repeat([]byte{5, 2, 1, 1, 2, 3, 1, 2, 7}, 40))
	f.Add(bytes.Repeat([]byte{33, 9, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 100))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 2048 {
			return // 35 full classes need far less
		}
		g := &specGen{data: data}
		spec := g.spec
		if g.next()%2 == 0 {
			spec = g.validSpec // mostly valid: exercises what Compile accepts
		}
		cfg, err := Compile(spec())
		if err != nil {
			if !strings.Contains(err.Error(), "spec") {
				t.Fatalf("error names no field: %v", err)
			}
			return
		}
		back, err := ParseCSV(strings.NewReader(cfg.CSV()))
		if err != nil {
			t.Fatalf("casadm would refuse Compile's CSV: %v\n%s", err, cfg.CSV())
		}
		if !reflect.DeepEqual(back, cfg) {
			t.Fatalf("CSV round trip:\n%+v\n%+v", back, cfg)
		}
		for _, c := range cfg.Classes {
			if strings.HasSuffix(c.Rule, "&") || strings.HasSuffix(c.Rule, "|") || len(c.Rule) > MaxRuleLen {
				t.Fatalf("class %d rule %q", c.ID, c.Rule)
			}
			if _, err := ParseRule(c.Rule); c.ID != 0 && err != nil {
				t.Fatalf("the kernel would refuse class %d: %v", c.ID, err)
			}
		}
		e, err := NewEvaluator(cfg)
		if err != nil {
			t.Fatal(err)
		}
		class := e.Classify(IO{Size: uint64(g.next()) << 10, Write: g.next()%2 == 0, Comm: g.pick(fuzzValues)})
		if _, ok := cfg.Class(class); !ok && class != 0 {
			t.Fatalf("classified into unknown class %d", class)
		}
	})
}

// FuzzParseCSV: never panics; errors are casadm's; what it accepts is
// sorted, unique, within limits, and survives CSV()/ParseCSV unchanged.
func FuzzParseCSV(f *testing.F) {
	for _, seed := range []string{
		hdr + "0,unclassified,22,1\n1,metadata&done,,1\n",
		"Allocation,IO class name,IO class id,Eviction priority\r\n1,unclassified,0,22\r\n0.5,metadata&done,1,\r\n",
		hdr + "1,\"a,b\",0,1\n", hdr + "1, \"x\" ,0, .5\n", hdr + "\n\n", "", "\x00", hdr + "-1,a,+1,0x1\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range []Dialect{Released, Master} {
			cfg, err := ParseCSVDialect(bytes.NewReader(data), d)
			if err != nil {
				var ce *CSVError
				if !errors.As(err, &ce) || ce.Output() == "" || !strings.HasSuffix(ce.Output(), "\n") {
					t.Fatalf("not a casadm error: %v", err)
				}
				continue
			}
			for i, c := range cfg.Classes {
				if c.ID < 0 || c.ID > d.maxID() || (i > 0 && cfg.Classes[i-1].ID >= c.ID) || checkName(c.Rule, c.ID, d) != "" {
					t.Fatalf("accepted class %+v", c)
				}
				if p := c.MaxSizePercent(); p < 0 || p > 100 {
					t.Fatalf("class %d max size %d", c.ID, p)
				}
			}
			back, err := ParseCSVDialect(strings.NewReader(cfg.CSV()), d)
			if err != nil || !reflect.DeepEqual(back, cfg) {
				t.Fatalf("round trip: %v\n%+v\n%+v\n%q", err, back, cfg, cfg.CSV())
			}
		}
	})
}

// FuzzParseRule: never panics; errors carry one of the kernel's two
// categories and blame a condition; accepted rules evaluate.
func FuzzParseRule(f *testing.F) {
	for _, seed := range []string{"metadata&done", "request_size:le:4096&&done", "lba:ge:abc", "io_direction:write|",
		"a|b&c|d", "directory:/x:y", "core_id:eq:99999", "process_name:" + strings.Repeat("x", 256), "&", "|", ":", "done:", "\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseRule(text)
		if err != nil {
			var re *RuleError
			if !errors.As(err, &re) || re.Condition < 1 || !(errors.Is(err, ErrUnknownCondition) || errors.Is(err, ErrInvalidSyntax)) {
				t.Fatalf("bad error %v", err)
			}
			return
		}
		if r.String() != text {
			t.Fatalf("String() = %q", r.String())
		}
		if strings.Count(strings.SplitN(text, "\x00", 2)[0], "&")+strings.Count(strings.SplitN(text, "\x00", 2)[0], "|")+1 != r.Len() && r.Len() != 0 {
			t.Fatalf("%q parsed into %d conditions", text, r.Len())
		}
		r.Match(IO{}, 0)
	})
}

// refMatch is the rule as CNF, written independently of eval: keep the
// conditions up to the first done; the rule matches when every '&'-term of
// them has a true condition, and stops when it matches and done was kept.
func refMatch(r *Rule, io *IO, class int) (match, stop bool) {
	conds := r.conds
	for i, c := range conds {
		if c.kind == condDone {
			conds, stop = conds[:i+1], true
			break
		}
	}
	match = len(conds) > 0
	term := false
	for i := range conds {
		if conds[i].and {
			match = match && term
			term = false
		}
		term = term || conds[i].test(io, class)
	}
	match = match && term
	return match, match && stop
}

// FuzzClassify compares Classify with the CNF reading of the rules over
// random rules and IOs, and checks Trace agrees.
func FuzzClassify(f *testing.F) {
	f.Add("direct|metadata&lba:1|core_id:1", "request_size:le:4096&done", "io_class:1&io_direction:write", uint64(4096), true, "dd", uint64(1), uint16(1), int32(7), byte(3), "/var/log", "x.log", uint64(10))
	f.Add("done", "io_class:0", "metadata&done&direct", uint64(0), false, "", uint64(0), uint16(0), int32(0), byte(0), "", "", uint64(0))
	f.Add("directory:/var&extension:log|file_size:gt:5", "process_name:bstore_kv_final&done", "lba:ge:2097152", uint64(1<<20), true, "bstore_kv_finalize", uint64(3<<21), uint16(2), int32(1), byte(7), "/var/lib", "a.log", uint64(6))
	f.Fuzz(func(t *testing.T, r1, r2, r3 string, size uint64, write bool, comm string, lba uint64, core uint16, pid int32, flags byte, dir, name string, fsize uint64) {
		var rules [3]Rule
		for i, text := range []string{r1, r2, r3} {
			var err error
			if rules[i], err = ParseRule(text); err != nil {
				return
			}
		}
		cfg := Config{Classes: []Class{{ID: 0, Rule: UnclassifiedName}, {ID: 1, Rule: r1}, {ID: 5, Rule: r2}, {ID: 9, Rule: r3}}}
		e, err := NewEvaluator(cfg)
		if err != nil {
			t.Fatal(err)
		}
		io := IO{Size: size, Write: write, Comm: comm, LBA: lba, CoreID: int(core), PID: int(pid), WLTH: int(flags >> 4),
			Direct: flags&1 != 0, Metadata: flags&2 != 0, HasFile: flags&4 != 0, Dir: dir, FileName: name, FileSize: fsize, FileOffset: fsize / 2}
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			io.Extension = name[i+1:]
		}
		want := 0
		for i, id := range []int{1, 5, 9} {
			m, s := refMatch(&rules[i], &io, want)
			if m {
				want = id
			}
			if s {
				break
			}
		}
		if got := e.Classify(io); got != want {
			t.Fatalf("Classify = %d, CNF reading = %d", got, want)
		}
		if got, _ := e.Trace(io); got != want {
			t.Fatalf("Trace = %d, want %d", got, want)
		}
	})
}

// FuzzParseIO checks `ioclass explain --io`'s parser: an error names the key at fault, and
// an accepted IO written back with String parses to the same IO.
func FuzzParseIO(f *testing.F) {
	for _, seed := range []string{"size=4096,dir=write,comm=bstore_kv_sync,lba=123,core=1,pid=42,direct",
		"size=64KiB,dir=r,metadata=false", "file=a.b,ext=", "ext=x,file=a.b", "directory=/a/../b/,filesize=1M,fileoffset=0",
		"size=1,size=2", "bogus=1", "core=99999", ",,", "direct=maybe", "size=18446744073709551615G", "directory=/\t/"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		io, err := ParseIO(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "key ") && !strings.HasPrefix(msg, "unknown key ") {
				t.Fatalf("ParseIO(%q): error %q does not name the key", s, msg)
			}
			return
		}
		again, err := ParseIO(io.String())
		if err != nil {
			t.Fatalf("ParseIO(%q) = %+v, written as %q, which does not parse: %v", s, io, io.String(), err)
		}
		if again != io {
			t.Fatalf("ParseIO(%q) = %+v, written as %q, parses to %+v", s, io, io.String(), again)
		}
	})
}
