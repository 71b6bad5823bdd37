// Package depscan finds the commands Prism's scripts, Makefile and Go code run, so that a
// test can check each one's Debian package is in the base image or installed by
// hack/install-deps.sh (hack/packages.txt). commands.tsv maps each command to its package; it
// is generated with dpkg -S on a machine that has the packages installed.
package depscan

//go:generate go run ./gentable -o commands.tsv
