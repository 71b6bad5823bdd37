// Package crd embeds the generated CustomResourceDefinitions (config/crd/bases), so that the
// offline tools validate objects against exactly what the API server is given.
package crd

import "embed"

// Bases holds bases/*.yaml, one CRD per file, as `make manifests` writes them.
//
//go:embed bases/*.yaml
var Bases embed.FS
