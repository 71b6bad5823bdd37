package images

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// ChartRef is the image the chart runs by default: values.yaml's image.repository and
// image.tag, the tag defaulting to Chart.yaml's appVersion (templates/_helpers.tpl,
// prism.image). make images tags the image with it.
func ChartRef(chartDir string) (string, error) {
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	var values struct {
		Image struct {
			Repository string `json:"repository"`
			Tag        string `json:"tag"`
		} `json:"image"`
	}
	for file, into := range map[string]any{"Chart.yaml": &chart, "values.yaml": &values} {
		data, err := os.ReadFile(filepath.Join(chartDir, file))
		if err != nil {
			return "", err
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
	}
	tag := values.Image.Tag
	if tag == "" {
		tag = chart.AppVersion
	}
	if values.Image.Repository == "" || tag == "" {
		return "", fmt.Errorf("%s: no image.repository or no tag (image.tag, appVersion)", chartDir)
	}
	return values.Image.Repository + ":" + tag, nil
}
