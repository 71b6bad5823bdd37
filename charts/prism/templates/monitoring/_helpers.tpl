{{- /*
prism.monitoring.serves: "true" when the cluster serves monitoring.coreos.com/v1/<Kind> (or
.Values.monitoring.skipCapabilitiesCheck is set), "" otherwise. Argument: (list $ "Kind").
*/ -}}
{{- define "prism.monitoring.serves" -}}
{{- $root := index . 0 -}}
{{- $kind := index . 1 -}}
{{- if or $root.Values.monitoring.skipCapabilitiesCheck ($root.Capabilities.APIVersions.Has (printf "monitoring.coreos.com/v1/%s" $kind)) -}}
true
{{- end -}}
{{- end }}

{{- /* prism.monitoring.labels: the chart's labels plus .Values.monitoring.labels. */ -}}
{{- define "prism.monitoring.labels" -}}
{{ include "prism.labels" . }}
{{- with .Values.monitoring.labels }}
{{ toYaml . }}
{{- end }}
{{- end }}
