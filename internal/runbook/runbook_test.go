package runbook

import (
	"reflect"
	"strings"
	"testing"
)

const sample = "# Runbook: replace a drive\n" +
	"\n" +
	"## Placeholders\n" +
	"\n" +
	"- `$OSD_ID`: the failed OSD's id\n" +
	"- `$SLOT`: the slot's volume\n" +
	"\n" +
	"## Steps\n" +
	"\n" +
	"1. Mark it out.\n" +
	"\n" +
	"   ```sh\n" +
	"   ceph osd out $OSD_ID\n" +
	"   ceph osd safe-to-destroy ${OSD_ID}   # repeat until it exits 0\n" +
	"   ```\n" +
	"2. Zap the slot.\n" +
	"   <!-- not run: the drill has no node -->\n" +
	"   ```sh\n" +
	"   ceph-volume lvm zap \\\n" +
	"       \"$SLOT\" --label 'a b;c'\n" +
	"   ```\n" +
	"   ```yaml\n" +
	"   not: $COMMANDS\n" +
	"   ```\n"

func TestParse(t *testing.T) {
	rb, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Title != "Runbook: replace a drive" {
		t.Errorf("title %q", rb.Title)
	}
	if want := []Placeholder{{"OSD_ID", "the failed OSD's id", 5}, {"SLOT", "the slot's volume", 6}}; !reflect.DeepEqual(rb.Placeholders, want) {
		t.Errorf("placeholders %+v, want %+v", rb.Placeholders, want)
	}
	if len(rb.Steps) != 2 {
		t.Fatalf("%d steps: %+v", len(rb.Steps), rb.Steps)
	}
	s1, s2 := rb.Steps[0], rb.Steps[1]
	if s1.Number != 1 || s1.Line != 10 || s1.Title != "Mark it out." || len(s1.Blocks) != 1 || s1.Blocks[0].Line != 12 || s1.Blocks[0].NotRun != "" {
		t.Errorf("step 1: %+v", s1)
	}
	want1 := []Command{
		{Line: 13, Words: []string{"ceph", "osd", "out", "$OSD_ID"}},
		{Line: 14, Words: []string{"ceph", "osd", "safe-to-destroy", "${OSD_ID}"}, Comment: "repeat until it exits 0"},
	}
	if got := s1.Commands(); !reflect.DeepEqual(got, want1) {
		t.Errorf("step 1 commands %+v, want %+v", got, want1)
	}
	if len(s2.Blocks) != 1 || s2.Blocks[0].NotRun != "the drill has no node" {
		t.Fatalf("step 2 blocks %+v (the yaml block is no shell block)", s2.Blocks)
	}
	want2 := []Command{{Line: 19, Words: []string{"ceph-volume", "lvm", "zap", "$SLOT", "--label", "a b;c"}}}
	if got := s2.Commands(); !reflect.DeepEqual(got, want2) {
		t.Errorf("step 2 commands %+v, want %+v", got, want2)
	}
	argv, err := s2.Commands()[0].Argv(map[string]string{"SLOT": "/dev/vg/lv", "OSD_ID": "3"})
	if err != nil || !reflect.DeepEqual(argv, []string{"ceph-volume", "lvm", "zap", "/dev/vg/lv", "--label", "a b;c"}) {
		t.Errorf("Argv = %q, %v", argv, err)
	}
	argv, err = s1.Commands()[1].Argv(map[string]string{"OSD_ID": "3"})
	if err != nil || !reflect.DeepEqual(argv, []string{"ceph", "osd", "safe-to-destroy", "3"}) {
		t.Errorf("Argv = %q, %v", argv, err)
	}
}

func TestParseRefuses(t *testing.T) {
	head := "# T\n## Placeholders\n- `$ID`: an id\n## Steps\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"undeclared placeholder", head + "1. x\n```sh\nceph osd out $ID $OTHER\n```\n", "line 7: $OTHER is not declared under \"## Placeholders\""},
		{"declared, unused", head + "1. x\n```sh\nceph status\n```\n", "line 3: $ID is declared but no command uses it"},
		{"declared twice", "# T\n## Placeholders\n- `$ID`: a\n- `$ID`: b\n", "line 4: $ID is declared twice (first on line 3)"},
		{"no meaning", "# T\n## Placeholders\n- `$ID`:\n", "line 3: $ID is declared without a meaning"},
		{"steps out of order", head + "1. a\n3. c\n", "line 6: step 3 follows step 1"},
		{"block before a step", head + "```sh\nceph osd out $ID\n```\n", "line 5: a shell block outside a numbered step"},
		{"unclosed block", head + "1. a\n```sh\nceph osd out $ID\n", "line 6: the fenced block is never closed"},
		{"marker without reason", head + "1. a\n<!-- not run: -->\n```sh\nceph osd out $ID\n```\n", "line 6: the not-run marker gives no reason"},
		{"a second marker for every drill", head + "1. a\n<!-- not run: x -->\n<!-- not run: y -->\n```sh\nceph osd out $ID\n```\n", "line 7: a second not-run marker for every drill"},
		{"a second marker for one drill", head + "1. a\n<!-- not run by test/ceph: x -->\n<!-- not run by test/ceph: y -->\n```sh\nceph osd out $ID\n```\n", "line 7: a second not-run marker for test/ceph"},
		{"drill marker without reason", head + "1. a\n<!-- not run by test/e2e:  -->\n```sh\nceph osd out $ID\n```\n", "line 6: the not-run marker gives no reason"},
		{"marker at the end", head + "1. a\n```sh\nceph osd out $ID\n```\n<!-- not run by test/e2e: x -->\n", "line 9: a not-run marker at the end stands before no shell block"},
		{"marker before prose", head + "1. a\n<!-- not run: x -->\nprose\n", "line 6: a not-run marker must stand right before a shell block"},
		{"pipe", head + "1. a\n```sh\nceph osd dump | grep $ID\n```\n", "line 7: \"ceph osd dump | grep $ID\": '|' is shell syntax"},
		{"substitution", head + "1. a\n```sh\nceph osd out $(cat id) $ID\n```\n", "line 7: \"ceph osd out $(cat id) $ID\": a $ that is not a placeholder"},
		{"lower-case variable", head + "1. a\n```sh\nceph osd out $id $ID\n```\n", "a $ that is not a placeholder"},
		{"redirection", head + "1. a\n```sh\nceph osd out $ID >/dev/null\n```\n", "'>' is shell syntax"},
		{"backtick in double quotes", head + "1. a\n```sh\nceph osd out \"`id`\" $ID\n```\n", "'`' is shell syntax"},
		{"unterminated quote", head + "1. a\n```sh\nceph osd out '$ID\n```\n", "an unterminated ' quote"},
		{"continued at the end", head + "1. a\n```sh\nceph osd out $ID \\\n```\n", "line 7: the block ends in a continued line"},
	} {
		_, err := Parse(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestNotRunBy: a marker naming a drill keeps only that drill from the block; one without a
// name keeps every drill from it, and both may stand before one block.
func TestNotRunBy(t *testing.T) {
	text := "# T\n## Placeholders\n- `$ID`: an id\n## Steps\n1. a\n" +
		"<!-- not run by test/ceph: no Kubernetes -->\n```sh\nkubectl get storagenode $ID\n```\n" +
		"```sh\nceph osd out $ID\n```\n" +
		"<!-- not run by test/ceph: no Kubernetes -->\n<!-- not run by test/e2e: no loop devices -->\n```sh\nlosetup -d $ID\n```\n" +
		"<!-- not run: by hand -->\n<!-- not run by test/ceph: also -->\n```sh\nceph osd purge $ID\n```\n"
	rb, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	blocks := rb.Blocks()
	if len(blocks) != 4 {
		t.Fatalf("%d blocks: %+v", len(blocks), blocks)
	}
	for _, c := range []struct {
		block int
		drill string
		want  string
	}{
		{0, "test/ceph", "no Kubernetes"},
		{0, "test/e2e", ""},
		{1, "test/ceph", ""},
		{1, "test/e2e", ""},
		{2, "test/ceph", "no Kubernetes"},
		{2, "test/e2e", "no loop devices"},
		{3, "test/ceph", "by hand"},
		{3, "test/e2e", "by hand"},
	} {
		if got := blocks[c.block].SkippedBy(c.drill); got != c.want {
			t.Errorf("block %d (line %d) skipped by %s: %q, want %q", c.block, blocks[c.block].Line, c.drill, got, c.want)
		}
	}
	if blocks[0].NotRun != "" || blocks[3].NotRun != "by hand" {
		t.Errorf("NotRun (every drill): %q, %q; want \"\" and \"by hand\"", blocks[0].NotRun, blocks[3].NotRun)
	}
}

func TestValues(t *testing.T) {
	rb, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	c := rb.Steps[0].Commands()[0]
	for _, tc := range []struct {
		values map[string]string
		want   string
	}{
		{nil, "line 13: ceph osd out $OSD_ID: no value for $OSD_ID"},
		{map[string]string{"OSD_ID": ""}, "no value for $OSD_ID"},
		{map[string]string{"SLOT": "x"}, "no value for $OSD_ID"},
	} {
		if _, err := c.Argv(tc.values); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Argv(%v) error %v, want %q", tc.values, err, tc.want)
		}
	}
	if err := rb.CheckValues(map[string]string{"OSD_ID": "1", "OSD": "1"}); err == nil || err.Error() != "a value for $OSD, which the runbook does not declare" {
		t.Errorf("CheckValues error %v", err)
	}
	if err := rb.CheckValues(map[string]string{"OSD_ID": "1", "SLOT": "/dev/x"}); err != nil {
		t.Errorf("CheckValues: %v", err)
	}
}

// FuzzParse: any text parses or is refused without a panic; a parsed runbook's commands use only
// declared placeholders, sit inside their step, and substitute to words without a placeholder.
func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("# T\n## Placeholders\n- `$ID`: x\n1. a\n```sh\nceph osd out ${ID}x$ID '$ID' \"$ID\"\n```\n")
	f.Add("1. a\n<!-- not run: r -->\n```bash\nls # c\n```\n2. b\n")
	f.Add("1. a\n<!-- not run by test/ceph: r -->\n<!-- not run by x: s -->\n```sh\nls\n```\n")
	f.Fuzz(func(t *testing.T, text string) {
		rb, err := Parse(text)
		if err != nil {
			return
		}
		values := map[string]string{}
		for _, p := range rb.Placeholders {
			values[p.Name] = "v"
		}
		if err := rb.CheckValues(values); err != nil {
			t.Fatal(err)
		}
		for i, s := range rb.Steps {
			if s.Number != i+1 {
				t.Fatalf("step %d numbered %d", i+1, s.Number)
			}
			for _, c := range s.Commands() {
				if c.Line <= s.Line || len(c.Words) == 0 {
					t.Fatalf("command %+v of step at line %d", c, s.Line)
				}
				argv, err := c.Argv(values)
				if err != nil {
					t.Fatalf("Argv with every placeholder set: %v", err)
				}
				for j, w := range argv {
					if placeholderUse.MatchString(w) && !placeholderUse.MatchString(c.Words[j]) {
						t.Fatalf("substitution made a placeholder: %q from %q", w, c.Words[j])
					}
				}
			}
		}
	})
}
