package ioclass

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// loadResult is what the real casadm did with one file
// (testdata/load_config_results.txt, copied from the reference outputs).
type loadResult struct {
	rc      int
	output  string  // stdout when rejected
	classes []Class // what casadm sent to the kernel when accepted
	maxSize map[int]int
}

var partitionLine = regexp.MustCompile(`^  id=(\d+) name='(.*)' priority=(-?\d+) max_size=(\d+) min_size=0 cache_mode=6$`)

func readLoadResults(t *testing.T) map[string]loadResult {
	t.Helper()
	f, err := os.Open("testdata/load_config_results.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	results := map[string]loadResult{}
	var name string
	var cur loadResult
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "=== casadm -C -C -i 1 -f "):
			name, cur = strings.TrimPrefix(line, "=== casadm -C -C -i 1 -f "), loadResult{maxSize: map[int]int{}}
		case strings.HasPrefix(line, "[rc="):
			cur.rc, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "[rc="), "]"))
			results[name] = cur
		case line == "PARTITION_SET cache=1":
		case partitionLine.MatchString(line):
			m := partitionLine.FindStringSubmatch(line)
			id, _ := strconv.Atoi(m[1])
			prio, _ := strconv.Atoi(m[3])
			size, _ := strconv.Atoi(m[4])
			c := Class{ID: id, Rule: m[2]}
			if prio >= 0 {
				c.Priority = intPtr(prio)
			}
			cur.classes = append(cur.classes, c)
			cur.maxSize[id] = size
		default:
			cur.output += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return results
}

// TestParseCSVAgreesWithCasadm parses every reference CSV with master's
// rules (the casadm that produced the log) and requires the same verdict:
// the same classes, priorities and max_size when it accepted, the same
// stdout word for word when it refused.
func TestParseCSVAgreesWithCasadm(t *testing.T) {
	results := readLoadResults(t)
	files, _ := filepath.Glob("testdata/*.csv")
	if len(files) != len(results) {
		t.Fatalf("%d CSV files but %d results in the log", len(files), len(results))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			want, ok := results[name]
			if !ok {
				t.Fatalf("no casadm result for %s", name)
			}
			cfg, err := parseFile(t, path, Master)
			if want.rc != 0 {
				var ce *CSVError
				if !errors.As(err, &ce) {
					t.Fatalf("casadm refused it (rc %d), ParseCSV: %v", want.rc, err)
				}
				if ce.Output() != want.output {
					t.Errorf("output:\n%s\ncasadm printed:\n%s", ce.Output(), want.output)
				}
				return
			}
			if err != nil {
				t.Fatalf("casadm accepted it, ParseCSV: %v", err)
			}
			if len(cfg.Classes) != len(want.classes) {
				t.Fatalf("classes %+v, casadm sent %+v", cfg.Classes, want.classes)
			}
			for i, c := range cfg.Classes {
				w := want.classes[i]
				if c.ID != w.ID || c.Rule != w.Rule || !reflect.DeepEqual(c.Priority, w.Priority) {
					t.Errorf("class %+v, casadm sent %+v", c, w)
				}
				if got := c.MaxSizePercent(); got != want.maxSize[c.ID] {
					t.Errorf("class %d max_size %d, casadm sent %d", c.ID, got, want.maxSize[c.ID])
				}
			}
		})
	}
}

// TestParseCSVReleased: released casadm (ids 0-32) differs from master on
// exactly the two files that use id 33 or 34.
func TestParseCSVReleased(t *testing.T) {
	for file, want := range map[string]string{
		"bad_id.csv":   "Invalid id, must be in the range 0-32.\nCannot parse configuration file - error in line 3 in column 1 (IO class id).\n",
		"prefetch.csv": "Invalid id, must be in the range 0-32.\nCannot parse configuration file - error in line 3 in column 1 (IO class id).\n",
	} {
		_, err := parseFile(t, "testdata/"+file, Released)
		var ce *CSVError
		if !errors.As(err, &ce) || ce.Output() != want {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
	results := readLoadResults(t)
	for name, res := range results {
		if name == "bad_id.csv" || name == "prefetch.csv" {
			continue
		}
		_, err := parseFile(t, "testdata/"+name, Released)
		if (err == nil) != (res.rc == 0) {
			t.Errorf("%s: released parse %v, casadm rc %d", name, err, res.rc)
		}
	}
}

func parseFile(t *testing.T, path string, d Dialect) (Config, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ParseCSVDialect(f, d)
}

// TestCSVRoundTripPrism: prism.csv is in casadm's canonical form already, so
// parsing and writing it gives the same bytes.
func TestCSVRoundTripPrism(t *testing.T) {
	raw, err := os.ReadFile("testdata/prism.csv")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseCSV(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.CSV(); got != string(raw) {
		t.Errorf("CSV():\n%s\nfile:\n%s", got, raw)
	}
	again, err := ParseCSV(strings.NewReader(cfg.CSV()))
	if err != nil || !reflect.DeepEqual(again, cfg) {
		t.Errorf("round trip: %+v, %v", again, err)
	}
}

const hdr = "IO class id,IO class name,Eviction priority,Allocation\n"

// TestParseCSVEdges pins casadm's reader rules beyond the reference files.
// want is the error text ("" = accepted) or, when accepted, the rule of
// the last class.
func TestParseCSVEdges(t *testing.T) {
	long := strings.Repeat("a", 1023)
	tests := []struct {
		name, in, wantErr, wantRule string
	}{
		{"spaces around fields are dropped", hdr + " 1 , metadata&done ,\t0\t, 1 \n", "", "metadata&done"},
		{"inner spaces stay", hdr + "1,process_name:a b&done,0,1\n", "", "process_name:a b&done"},
		{"quoted field", hdr + "1,\"metadata&done\",0,1\n", "", "metadata&done"},
		{"quoted id", hdr + "\"1\",metadata,0,1\n", "", "metadata"},
		{"quote inside unquoted text stays", hdr + "1,ab\"cd\",0,1\n", "Cannot parse configuration file - error in line 2 in column 2 (IO class name): Only characters allowed in IO class name are low ascii characters, excluding control characters, comma and quotation mark.", ""},
		{"quoted part after a space replaces the text before it", hdr + "1,ab \"cd\",0,1\n", "", "cd"},
		{"text after closing quote is dropped", hdr + "1,\"metadata\"xyz,0,1\n", "", "metadata"},
		{"escaped quote reaches the name check", hdr + "1,\"a\"\"b\",0,1\n", "Cannot parse configuration file - error in line 2 in column 2 (IO class name): Only characters allowed in IO class name are low ascii characters, excluding control characters, comma and quotation mark.", ""},
		{"CRLF and blank CRLF lines", "IO class id,IO class name,Eviction priority,Allocation\r\n\r\n1,metadata,0,1\r\n", "", "metadata"},
		{"no trailing newline", hdr + "1,metadata,0,1", "", "metadata"},
		{"blank and space-only lines skipped", hdr + "\n   \n1,metadata,0,1\n\n", "", "metadata"},
		{"pinned", hdr + "1,metadata,,1\n", "", "metadata"},
		{"name 1023 characters", hdr + "1," + long + ",0,1\n", "", long},
		{"name 1024 characters", hdr + "1," + long + "a,0,1\n", "Cannot parse configuration file - error in line 2 in column 2 (IO class name): Empty or too long IO class name", ""},
		{"empty name", hdr + "1,,0,1\n", "Cannot parse configuration file - error in line 2 in column 2 (IO class name): Empty or too long IO class name", ""},
		{"control character", hdr + "1,a\tb,0,1\n", "Cannot parse configuration file - error in line 2 in column 2 (IO class name): Only characters allowed in IO class name are low ascii characters, excluding control characters, comma and quotation mark.", ""},
		{"non-ASCII", hdr + "1,caf\xc3\xa9,0,1\n", "Cannot parse configuration file - error in line 2 in column 2 (IO class name): Only characters allowed in IO class name are low ascii characters, excluding control characters, comma and quotation mark.", ""},
		{"three fields", hdr + "1,metadata,0\n", "Cannot parse configuration file - error in line 2: 3 fields, want 4", ""},
		{"five fields", hdr + "1,metadata,0,1,x\n", "Cannot parse configuration file - error in line 2: 5 fields, want 4", ""},
		{"error line counts blank lines", hdr + "\n\n1,metadata,0\n", "Cannot parse configuration file - error in line 4: 3 fields, want 4", ""},
		{"empty id", hdr + ",metadata,0,1\n", "Cannot parse configuration file - error in line 2 in column 1 (IO class id): empty id", ""},
		{"id not a number", hdr + "x,metadata,0,1\n", "Cannot parse configuration file - error in line 2 in column 1 (IO class id): Invalid id, must be a correct unsigned decimal integer.", ""},
		{"id with sign", hdr + "+1,metadata,0,1\n", "", "metadata"},
		{"id -0 is 0", hdr + "-0,unclassified,0,1\n", "", "unclassified"},
		{"negative id wraps", hdr + "-1,metadata,0,1\n", "Cannot parse configuration file - error in line 2 in column 1 (IO class id): Invalid id, must be in the range 0-32.", ""},
		{"id overflow", hdr + "99999999999999999999,metadata,0,1\n", "Cannot parse configuration file - error in line 2 in column 1 (IO class id): Invalid id, must be a correct unsigned decimal integer.", ""},
		{"leading zeros", hdr + "007,metadata,0,1\n", "", "metadata"},
		{"priority 255", hdr + "1,metadata,255,1\n", "", "metadata"},
		{"priority not a number", hdr + "1,metadata,high,1\n", "Cannot parse configuration file - error in line 2 in column 3 (Eviction priority): Invalid prio, must be a correct unsigned decimal integer.", ""},
		{"allocation .125", hdr + "1,metadata,0,.125\n", "", "metadata"},
		{"allocation 1e0", hdr + "1,metadata,0,1e0\n", "", "metadata"},
		{"allocation hex", hdr + "1,metadata,0,0x1\n", "", "metadata"},
		{"allocation 1.000", hdr + "1,metadata,0,1.000\n", "Cannot parse configuration file - error in line 2 in column 4 (Allocation): \"1.000\" is not a number from 0 to 1 in at most 4 characters", ""},
		{"allocation 1.01", hdr + "1,metadata,0,1.01\n", "Cannot parse configuration file - error in line 2 in column 4 (Allocation): \"1.01\" is not a number from 0 to 1 in at most 4 characters", ""},
		{"allocation nan refused", hdr + "1,metadata,0,nan\n", "Cannot parse configuration file - error in line 2 in column 4 (Allocation): \"nan\" is not a number from 0 to 1 in at most 4 characters", ""},
		{"allocation inf", hdr + "1,metadata,0,inf\n", "Cannot parse configuration file - error in line 2 in column 4 (Allocation): \"inf\" is not a number from 0 to 1 in at most 4 characters", ""},
		{"allocation 1x", hdr + "1,metadata,0,1x\n", "Cannot parse configuration file - error in line 2 in column 4 (Allocation): \"1x\" is not a number from 0 to 1 in at most 4 characters", ""},
		{"empty allocation", hdr + "1,metadata,0,\n", "Cannot parse configuration file - error in line 2 in column 4 (Allocation): empty allocation", ""},
		{"fields checked id first whatever the column order", "Allocation,IO class name,IO class id,Eviction priority\nbad,\"x,y\",1,0\n", "Cannot parse configuration file - error in line 2 in column 2 (IO class name): Only characters allowed in IO class name are low ascii characters, excluding control characters, comma and quotation mark.", ""},
		{"empty file", "", "Empty IO Classes configuration file supplied.", ""},
		{"header only", hdr, "Empty configuration file", ""},
		{"header without newline", strings.TrimSuffix(hdr, "\n"), "Empty configuration file", ""},
		{"blank header", "\n1,metadata,0,1\n", "Cannot parse configuration file - unknown column \"\".", ""},
		{"titles are case-sensitive", "io class id,IO class name,Eviction priority,Allocation\n", "Cannot parse configuration file - unknown column \"io class id\".", ""},
		{"repeated title: last one wins", "IO class id,IO class name,Eviction priority,Allocation,Allocation\n1,metadata,0,1\n", "Cannot parse configuration file - error in line 2 in column 5 (Allocation): the header puts this column past the line's 4 fields", ""},
		{"NUL ends the input", hdr + "1,metadata,0,1\x00\n2,direct,0,1\n", "", "metadata"},
		{"102 fields", strings.Repeat("x,", 101) + "x\n", "I/O error occured while reading IO Classes configuration file supplied: more than 101 fields", ""},
		{"over-long line", hdr + strings.Repeat(" ", 8193) + "\n1,metadata,0,1\n", "Cannot parse configuration file - error in line 2: line longer than 8192 characters", ""},
		{"over-long last line without newline is ignored", hdr + "1,metadata,0,1\n" + strings.Repeat(" ", 9000), "", "metadata"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseCSV(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v\nwant        %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Classes[len(cfg.Classes)-1].Rule; got != tc.wantRule {
				t.Errorf("rule %q, want %q", got, tc.wantRule)
			}
		})
	}
}

func TestMaxSizePercent(t *testing.T) {
	for alloc, want := range map[string]int{"1": 100, "1.00": 100, "0.5": 50, "0.10": 10, "0": 0, ".125": 13, ".005": 1, "0.33": 33, "x": -1, "1.5": -1} {
		if got := (Class{Allocation: alloc}).MaxSizePercent(); got != want {
			t.Errorf("MaxSizePercent(%q) = %d, want %d", alloc, got, want)
		}
	}
}

func TestParseCSVMasterPrefetch(t *testing.T) {
	for in, want := range map[string]string{
		hdr + "33,prefetch,21,1\n": "",
		hdr + "33,direct,21,1\n":   "Cannot parse configuration file - error in line 2 in column 2 (IO class name): IO class 33 must have the default name 'prefetch'",
		hdr + "5,prefetch,21,1\n":  "Cannot parse configuration file - error in line 2 in column 2 (IO class name): IO class name 'prefetch' is reserved for IO class 33",
		hdr + "34,direct,21,1\n":   "Cannot parse configuration file - error in line 2 in column 1 (IO class id): Invalid id, must be in the range 0-33.",
	} {
		cfg, err := ParseCSVDialect(strings.NewReader(in), Master)
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("%q: %v", in, err)
		}
		if err == nil {
			if e, err := NewEvaluator(cfg); err != nil || e.Classify(IO{}) != 0 {
				t.Errorf("prefetch class has no rule: %v", err)
			}
		}
	}
	// Released casadm knows no prefetch class: 5,prefetch is just a rule
	// the kernel will refuse.
	if _, err := ParseCSV(strings.NewReader(hdr + "5,prefetch,21,1\n")); err != nil {
		t.Error(err)
	}
}
