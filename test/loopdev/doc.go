// Package loopdev holds a root-only test that attaches real loop devices, puts real
// content on them (ext4, xfs, a GPT, a read-only loop, empty loops) and checks what
// internal/node/inventory and `prism-agent inventory` report against independent tools
// (blockdev, blkid, wipefs, /proc/partitions), and that taking the inventory writes
// nothing. Run it as root: go test ./test/loopdev/ -count=1 -v
package loopdev
