package main

import (
	"net"
)

// freeAddrs returns n loopback addresses with ports free now, so that two demos (or a demo
// and a test) on one machine do not collide. All n are held open until all are chosen, so
// they differ; another process could still take one before the demo's process binds it.
func freeAddrs(n int) ([]string, error) {
	var addrs []string
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}
