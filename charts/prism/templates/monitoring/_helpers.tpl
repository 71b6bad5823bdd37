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

{{- /*
prism.monitoring.scrapeAuth: with metrics.secure, HTTPS and the bearer token of
prism-metrics-scraper (or monitoring.scrapeToken.secretName). PodMonitors cannot name a token
file, only a Secret; the Secret must be in the PodMonitor's namespace.
*/ -}}
{{- define "prism.monitoring.scrapeAuth" -}}
{{- if .Values.metrics.secure -}}
scheme: https
authorization:
  type: Bearer
  credentials:
    name: {{ if .Values.monitoring.scrapeToken.create }}prism-metrics-scraper-token{{ else }}{{ required "monitoring.scrapeToken.secretName: name the Secret holding the scrape token, or set monitoring.scrapeToken.create" .Values.monitoring.scrapeToken.secretName }}{{ end }}
    key: token
tlsConfig:
  {{- toYaml .Values.monitoring.tlsConfig | nindent 2 }}
{{- end -}}
{{- end }}
