package depscan

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Found is a command and every place that runs it.
type Found struct {
	Command string
	Where   []string // file:line, relative to the repository
	// Guest is the hack/packages.txt group of the QEMU guest root it runs in ("" for this
	// machine): guest-root (Debian 12) or e2e-root (forky).
	Guest string
}

// GuestScripts run inside a test guest, from the packages of the named hack/packages.txt
// groups and Debian's required ones (debootstrap's minbase), not from this machine's. Both
// guests boot hack/guest/init.
var GuestScripts = map[string][]string{
	"hack/guest/init":           {"guest-root", "e2e-root"},
	"hack/guest/nvmet-loop.sh":  {"guest-root", "e2e-root"},
	"test/guest/rook-path.sh":   {"guest-root"},
	"test/guest/db-volumes.sh":  {"guest-root"},
	"test/guest/lib.sh":         {"guest-root"},
	"hack/e2e/guest-cluster.sh": {"e2e-root"},
	"hack/e2e/bench-writes.sh":  {"e2e-root"},
}

// ShellLibraries are the scripts sourced by others (a library, then the scripts sourcing it):
// the library's functions are defined in those scripts, and the hooks those scripts define
// for it are defined in the library.
var ShellLibraries = map[string][]string{
	"test/guest/lib.sh":        {"test/guest/rook-path.sh", "test/guest/db-volumes.sh"},
	"hack/images/apt-arch.sh":  {"hack/images/build.sh", "hack/images/lock.sh"},
	"hack/e2e/bench-writes.sh": {"hack/e2e/guest-cluster.sh"},
}

// sharedFunctions are the functions each script has from ShellLibraries, by script.
func sharedFunctions(root string) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	give := func(to string, funcs map[string]bool) {
		if out[to] == nil {
			out[to] = map[string]bool{}
		}
		for f := range funcs {
			out[to][f] = true
		}
	}
	read := func(rel string) (map[string]bool, error) {
		src, err := os.ReadFile(filepath.Join(root, rel))
		return ShellFunctions(string(src)), err
	}
	for lib, users := range ShellLibraries {
		libFuncs, err := read(lib)
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			funcs, err := read(u)
			if err != nil {
				return nil, err
			}
			give(u, libFuncs)
			give(lib, funcs)
		}
	}
	return out, nil
}

// Collect scans the repository at root: every shell script (by .sh name or #! line), the
// Makefile and every Go package, tests included.
func Collect(root string) ([]Found, error) {
	byKey := map[string]*Found{}
	add := func(rel string, uses []Use) {
		groups := GuestScripts[rel]
		if len(groups) == 0 {
			groups = []string{""}
		}
		for _, guest := range groups {
			for _, u := range uses {
				key := u.Command + "\x00" + guest
				f := byKey[key]
				if f == nil {
					f = &Found{Command: u.Command, Guest: guest}
					byKey[key] = f
				}
				file := rel
				if u.File != "" {
					file, _ = filepath.Rel(root, u.File)
				}
				f.Where = append(f.Where, file+":"+strconv.Itoa(u.Line))
			}
		}
	}
	shared, err := sharedFunctions(root)
	if err != nil {
		return nil, err
	}
	goDirs := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == ".git" || rel == "bin" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, ".go"):
			goDirs[filepath.Dir(path)] = append(goDirs[filepath.Dir(path)], path)
		case rel == "Makefile":
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			add(rel, MakefileCommands(string(src)))
		case d.Type().IsRegular():
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if isShellScript(path, src) {
				add(rel, ShellCommandsWith(string(src), shared[rel]))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Two passes over Go: constants of every package first, for names like casadm.Command.
	type pkg struct {
		dir   string
		fset  *token.FileSet
		files []*ast.File
	}
	var pkgs []pkg
	imported := map[string]string{}
	for dir, paths := range goDirs {
		fset, files, err := ParseGoDir(paths)
		if err != nil {
			return nil, err
		}
		for k, v := range GoConstants(files) {
			imported[k] = v
		}
		pkgs = append(pkgs, pkg{dir, fset, files})
	}
	for _, p := range pkgs {
		add("", GoCommands(p.fset, p.files, imported))
	}
	var out []Found
	for _, f := range byKey {
		sort.Strings(f.Where)
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Command != out[j].Command {
			return out[i].Command < out[j].Command
		}
		return out[i].Guest < out[j].Guest
	})
	return out, nil
}

func isShellScript(path string, src []byte) bool {
	if strings.HasSuffix(path, ".sh") {
		return true
	}
	first, _, _ := bytes.Cut(src, []byte("\n"))
	return bytes.HasPrefix(first, []byte("#!")) && (bytes.HasSuffix(first, []byte("sh")) || bytes.Contains(first, []byte("bash")))
}

// ReadColumns reads a whitespace-separated text file, skipping blank lines and # comments.
func ReadColumns(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rows = append(rows, strings.Fields(line))
	}
	return rows, sc.Err()
}
