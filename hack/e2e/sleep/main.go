// Command sleep is the e2e guest's first container image (hack/e2e/images.sh): a static binary
// that sleeps for its argument in seconds, or until SIGTERM/SIGINT without one. It serves as the
// pod sandbox's pause image and as the test pod's command, so the guest's containerd needs no
// registry. Test-only; Prism's own images are make images' business.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	// As a sandbox's PID 1 it may inherit orphans: reap them.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGCHLD)
	go func() {
		for {
			var ws syscall.WaitStatus
			if _, err := syscall.Wait4(-1, &ws, 0, nil); err != nil {
				time.Sleep(time.Second)
			}
		}
	}()
	var after <-chan time.Time
	if len(os.Args) > 1 {
		s, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sleep: %v\n", err)
			os.Exit(2)
		}
		after = time.After(time.Duration(s * float64(time.Second)))
	}
	fmt.Println("sleep: started")
	select {
	case s := <-sig:
		fmt.Printf("sleep: %v\n", s)
	case <-after:
	}
}
