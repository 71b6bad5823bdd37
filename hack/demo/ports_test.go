package main

import (
	"net"
	"testing"
)

func TestFreeAddrsAreDistinctAndBindable(t *testing.T) {
	addrs, err := freeAddrs(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s twice in %v", a, addrs)
		}
		seen[a] = true
		l, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("%s is not free: %v", a, err)
		}
		l.Close()
	}
}
