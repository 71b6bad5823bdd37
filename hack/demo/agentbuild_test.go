package main

import (
	"strings"
	"testing"
)

func TestAgentBuildVerdict(t *testing.T) {
	for _, tc := range []struct {
		name              string
		tags              string
		root, wipefsAsked bool
		wantNote, wantErr string
	}{
		{"libblkid build as root", "libblkid,netgo,osusergo", true, false, "", ""},
		{"libblkid build without root", "netgo,libblkid", false, false, "", ""},
		{"wipefs build as root", "", true, false, "", "is the wipefs build"},
		{"a tag that only contains the word", "nolibblkid", true, false, "", "is the wipefs build"},
		{"wipefs build asked for", "", true, true, "as PRISM_LIBBLKID=0 asked", ""},
		{"wipefs build without root", "", false, false, "as root, make demo installs libblkid-dev", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			note, err := agentBuildVerdict("bin/prism-agent", tc.tags, tc.root, tc.wipefsAsked)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
			if tc.wantNote == "" && note != "" || !strings.Contains(note, tc.wantNote) {
				t.Errorf("note %q, want one containing %q", note, tc.wantNote)
			}
		})
	}
}
