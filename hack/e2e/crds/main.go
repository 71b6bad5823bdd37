// Command crds keeps, of a multi-document YAML stream, the CustomResourceDefinitions of one
// API group. The e2e guest's Rook stage needs the csi.ceph.io CRDs without the ceph-csi
// operator: Rook v1.20.2's operator writes a CephConnection and a ClientProfile
// (csi.ceph.io/v1) each time it saves its mons, unconditionally, and its chart installs those
// CRDs only through the ceph-csi-operator subchart, which lives in a Helm repository this
// machine cannot reach. Rook ships the same CRDs in deploy/examples/csi-operator.yaml, with
// the CSI operator's Deployment and RBAC after them; this keeps the CRDs only.
//
//	crds -group csi.ceph.io <csi-operator.yaml >csi-crds.yaml
//
// Standard library only: a document is kept if it has the top-level line
// `kind: CustomResourceDefinition` and the line `  group: GROUP` (spec.group, as
// controller-gen writes it).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	group := flag.String("group", "", "API group of the CRDs to keep (spec.group)")
	flag.Parse()
	if *group == "" {
		fmt.Fprintln(os.Stderr, "crds: -group is required")
		os.Exit(2)
	}
	n, err := filter(os.Stdin, os.Stdout, *group)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crds:", err)
		os.Exit(1)
	}
	if n == 0 {
		fmt.Fprintf(os.Stderr, "crds: no CustomResourceDefinition of group %s\n", *group)
		os.Exit(1)
	}
}

// filter copies the CRDs of group from r to w, each document started with "---", and returns
// how many it kept.
func filter(r io.Reader, w io.Writer, group string) (int, error) {
	var kept int
	var doc []string
	flush := func() error {
		defer func() { doc = doc[:0] }()
		if !isCRDOf(doc, group) {
			return nil
		}
		kept++
		_, err := fmt.Fprintf(w, "---\n%s\n", strings.Join(doc, "\n"))
		return err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimRight(line, " ") == "---" {
			if err := flush(); err != nil {
				return kept, err
			}
			continue
		}
		doc = append(doc, line)
	}
	if err := sc.Err(); err != nil {
		return kept, err
	}
	return kept, flush()
}

func isCRDOf(doc []string, group string) bool {
	var crd, inGroup bool
	for _, l := range doc {
		switch strings.TrimRight(l, " ") {
		case "kind: CustomResourceDefinition":
			crd = true
		case "  group: " + group:
			inGroup = true
		}
	}
	return crd && inGroup
}
