{{- define "prism.name" -}}prism{{- end }}

{{- define "prism.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "prism.labels" -}}
app.kubernetes.io/name: prism
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- /* The operator's metrics port: 8443 (HTTPS, kubebuilder's convention) or 8080 (plain HTTP). */ -}}
{{- define "prism.operatorMetricsPort" -}}{{ if .Values.metrics.secure }}8443{{ else }}8080{{ end }}{{- end }}
