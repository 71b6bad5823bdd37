package doccheck

import (
	"reflect"
	"strings"
	"testing"
)

func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"helm install prism charts/prism --namespace prism-system --create-namespace", []string{"helm install --create-namespace --namespace"}},
		{"helm upgrade prism charts/prism --reuse-values --set agent.openCAS.enabled=true", []string{"helm upgrade --reuse-values --set"}},
		{"kubectl prism devices             # every device, its tier and why", []string{"kubectl prism devices"}},
		{"$ kubectl prism plan --inventory a.json --inventory b.json --policy p.yaml", []string{"kubectl prism plan --inventory --policy"}},
		{"make demo   # control plane", []string{"make demo"}},
		{"sudo make images && make build", []string{"make images", "make build"}},
		{"helm --kubeconfig /etc/kubernetes/admin.conf upgrade --install rook-ceph /opt/e2e/rook-ceph", []string{"helm upgrade --install --kubeconfig"}},
		{`"$share/bin/helm" --kubeconfig /etc/k.conf list`, []string{"helm list --kubeconfig"}},
		{"PRISM_LIBBLKID=0 make build", []string{"make build"}},
		{`echo "import-check: no $archive: run make images" >&2`, nil},
		{"kubectl get storagenodes", nil},
		{"kubectl -n prism-system exec pod -- make", nil},
		{"go build -o ~/bin/kubectl-prism ./cmd/kubectl-prism", nil},
		{"POD=$(kubectl -n x get pod) ; /bin/kubectl-prism selection", []string{"kubectl prism selection"}},
		{"# make demo", nil},
	} {
		var got []string
		for _, c := range commands(tc.line) {
			got = append(got, c.String())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("commands(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestCovers(t *testing.T) {
	ran := parse("helm", []string{"upgrade", "--install", "prism", "chart", "--namespace", "ns", "--create-namespace", "--set", "x"})
	for _, tc := range []struct {
		doc  command
		want bool
	}{
		{parse("helm", strings.Fields("upgrade --install prism charts/prism --namespace prism-system --create-namespace")), true},
		{parse("helm", strings.Fields("upgrade prism charts/prism --set a=b")), true},
		{parse("helm", strings.Fields("upgrade prism charts/prism --reuse-values --set a=b")), false},
		{parse("helm", strings.Fields("install prism charts/prism")), false},
		{parse("make", strings.Fields("upgrade")), false},
	} {
		if got := ran.covers(tc.doc); got != tc.want {
			t.Errorf("%s covers %s = %v, want %v", ran, tc.doc, got, tc.want)
		}
	}
}

func TestShellBlocks(t *testing.T) {
	doc := strings.Join([]string{
		"# Title",
		"```sh",
		"helm install prism charts/prism \\",
		"    --namespace prism-system",
		"```",
		"",
		"<!-- not run: no e2e spec has a cache -->",
		"",
		"```sh",
		"helm upgrade prism charts/prism --reuse-values",
		"```",
		"```yaml",
		"make: demo",
		"```",
		"<!-- not run: -->",
		"```bash",
		"make demo",
		"```",
		"```sh",
		"make test",
		"```",
		"<!-- not run: stale -->",
		"```sh",
		"helm install p c --namespace n",
		"```",
	}, "\n")
	blocks := shellBlocks(doc)
	if len(blocks) != 5 {
		t.Fatalf("%d blocks, want 5: %+v", len(blocks), blocks)
	}
	want := []struct {
		line     int
		marked   bool
		notRun   string
		commands string
	}{
		{2, false, "", "helm install --namespace"},
		{9, true, "no e2e spec has a cache", "helm upgrade --reuse-values"},
		{16, true, "", "make demo"},
		{19, false, "", "make test"},
		{23, true, "stale", "helm install --namespace"},
	}
	for i, w := range want {
		b := blocks[i]
		var cmds []string
		for _, c := range b.commands {
			cmds = append(cmds, c.String())
		}
		if b.line != w.line || b.marked != w.marked || b.notRun != w.notRun || strings.Join(cmds, "; ") != w.commands {
			t.Errorf("block %d: line %d marked %v %q commands %q, want %+v", i, b.line, b.marked, b.notRun, cmds, w)
		}
	}
	ran := []command{parse("helm", strings.Fields("install prism c --namespace x"))}
	got := problems("doc.md", blocks, ran)
	wantProblems := []string{
		"doc.md:16: the not-run marker gives no reason",
		"doc.md:19: make test: neither",
		"doc.md:23: marked not run, but",
	}
	if len(got) != len(wantProblems) {
		t.Fatalf("problems %q, want %d", got, len(wantProblems))
	}
	for i, w := range wantProblems {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("problem %q, want it to start %q", got[i], w)
		}
	}
}

func TestGoCommands(t *testing.T) {
	src := `package e2e
func f() {
	args := []string{"upgrade", "--install", "prism", chart, "--namespace", ns}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	helm(args...)
	kubectlPlugin("devices")
	out, _ := kubectlPlugin("selection", "-o", "wide")
	other("make", "demo")
}`
	cmds, err := goCommands("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cmds {
		got = append(got, c.String())
	}
	want := []string{"helm upgrade --install --namespace --set", "kubectl prism devices", "kubectl prism selection -o"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("goCommands = %q, want %q", got, want)
	}
}

// FuzzShellBlocks: any Markdown reads without a panic, each block at a fence line, and every
// command found names a checked tool.
func FuzzShellBlocks(f *testing.F) {
	f.Add("```sh\nhelm upgrade --install p c \\\n --set a=b # x\n```\n")
	f.Add("<!-- not run: r -->\n```bash\nPOD=$(kubectl prism x) ; sudo make demo\n")
	f.Add("```sh\n\"unterminated 'quote\n```")
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Split(text, "\n")
		for _, b := range shellBlocks(text) {
			if b.line < 1 || b.line > len(lines) || !fence.MatchString(lines[b.line-1]) {
				t.Fatalf("block at line %d is not at a fence", b.line)
			}
			for _, c := range b.commands {
				if c.tool != "helm" && c.tool != "make" && c.tool != "kubectl prism" {
					t.Fatalf("command %q of an unchecked tool", c)
				}
			}
		}
	})
}
