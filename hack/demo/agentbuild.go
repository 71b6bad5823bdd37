package main

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"strings"
)

// checkAgentBuild reads the build tags Go recorded in the demo's agent: the demo runs the
// agent users run, the image's, which links libblkid (decision 0034). make demo installs
// libblkid-dev as root (hack/install-deps.sh build) before hack/build-agent.sh builds it.
func checkAgentBuild(path string) error {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the build of %s: %w (make demo builds it)", path, err)
	}
	tags := ""
	for _, s := range info.Settings {
		if s.Key == "-tags" {
			tags = s.Value
		}
	}
	note, err := agentBuildVerdict(path, tags, os.Geteuid() == 0, os.Getenv("PRISM_LIBBLKID") == "0")
	if note != "" {
		logf("%s", note)
	}
	return err
}

// agentBuildVerdict decides from an agent's build tags: as root, where make demo installs
// libblkid-dev, the wipefs build is an error unless PRISM_LIBBLKID=0 asked for it; without
// root it is a note, as install-deps.sh could only name the missing package.
func agentBuildVerdict(path, tags string, root, wipefsAsked bool) (string, error) {
	for _, tag := range strings.Split(tags, ",") {
		if tag == "libblkid" {
			return "", nil
		}
	}
	switch {
	case wipefsAsked:
		return fmt.Sprintf("%s is the wipefs build, as PRISM_LIBBLKID=0 asked: the image's agent links libblkid", path), nil
	case root:
		return "", fmt.Errorf("%s is the wipefs build (tags %q), not the image's libblkid one: make demo installs libblkid-dev (hack/install-deps.sh build) and builds it with hack/build-agent.sh; PRISM_LIBBLKID=0 runs the wipefs build anyway", path, tags)
	default:
		return fmt.Sprintf("%s is the wipefs build: as root, make demo installs libblkid-dev and links libblkid in, as the image's agent does", path), nil
	}
}
