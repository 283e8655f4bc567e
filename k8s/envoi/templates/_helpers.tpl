{{/*
Names and labels. <fullname> is the release name, or <release>-envoi when the release name does
not contain "envoi"; truncated so that <fullname>-migrate-<service> stays within 63 characters.
*/}}
{{- define "envoi.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. Argument: dict "root" $ "component" NAME. */}}
{{- define "envoi.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{ include "envoi.selectorLabels" . }}
app.kubernetes.io/part-of: envoi
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/* What selects one component's pods. Argument: dict "root" $ "component" NAME. */}}
{{- define "envoi.selectorLabels" -}}
app.kubernetes.io/name: envoi
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{/*
Pod labels that the egress NetworkPolicies select on (envoi/egress-postgres, envoi/egress-nats,
envoi/egress-dns-resolvers, envoi/egress-smtp). Labels rather than names, so that the policies installed by a previous
release already admit a new service's migration Job, which runs before this release's policies
are applied. Argument: the list of egress kinds.
*/}}
{{- define "envoi.egressLabels" -}}
{{- range $index, $kind := . }}
{{- if $index }}{{ "\n" }}{{ end -}}
envoi/egress-{{ kebabcase $kind }}: 'true'
{{- end }}
{{- end -}}

{{- define "envoi.image" -}}
{{- $repository := required "image.repository is required: the image built by docker/Dockerfile, pushed to your registry" .Values.image.repository -}}
{{- printf "%s:%s" $repository (.Values.image.tag | default .Chart.AppVersion | toString) -}}
{{- end -}}

{{/* The Secret holding secrets.env's keys: yours (existingSecret) or the chart's. */}}
{{- define "envoi.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "envoi.fullname" .) -}}
{{- end -}}

{{- define "envoi.tlsSecretName" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "envoi.fullname" .)) -}}
{{- end -}}

{{/* The Secret keys the services use, as a JSON list (sorted, unique). */}}
{{- define "envoi.secretKeys" -}}
{{- $keys := list -}}
{{- range $name, $svc := .Values.services -}}
{{- $keys = concat $keys ($svc.secretEnv | default list) -}}
{{- end -}}
{{- $keys | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/* The Secret's keys a service takes only when set (optionalSecretEnv), less the required ones. */}}
{{- define "envoi.optionalSecretKeys" -}}
{{- $required := include "envoi.secretKeys" . | fromJsonArray -}}
{{- $keys := list -}}
{{- range $name, $svc := .Values.services -}}
{{- range ($svc.optionalSecretEnv | default list) -}}
{{- if not (has . $required) }}{{ $keys = append $keys . }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $keys | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/* Whether any service mounts the TLS Secret: "true" or "". */}}
{{- define "envoi.usesTls" -}}
{{- range $name, $svc := .Values.services -}}
{{- if $svc.tls }}true{{ end -}}
{{- end -}}
{{- end -}}

{{/*
A service's settings: the shared `config`, then its own on top. Argument: dict "root" $ "svc" SVC.
Returned as JSON (fromJson it).
*/}}
{{- define "envoi.serviceConfig" -}}
{{- $config := deepCopy (.root.Values.config | default dict) -}}
{{- range $key, $value := (.svc.config | default dict) -}}
{{- $_ := set $config $key $value -}}
{{- end -}}
{{- $config | toJson -}}
{{- end -}}

{{/*
Checks no schema can express, run once (from configmap.yaml): a required setting left empty, and a
grace period too short for the service's own shutdown.
*/}}
{{- define "envoi.validate" -}}
{{- range $name, $svc := .Values.services -}}
{{- $config := include "envoi.serviceConfig" (dict "root" $ "svc" $svc) | fromJson -}}
{{- range ($svc.requiredConfig | default list) -}}
{{- if not (get $config .) -}}
{{- fail (printf "services.%s.config.%s is required" $name .) -}}
{{- end -}}
{{- end -}}
{{- $graceMs := mul ($svc.terminationGracePeriodSeconds | default 30 | int) 1000 -}}
{{- $preStopMs := mul ($svc.preStopSleepSeconds | default 0 | int) 1000 -}}
{{- $shutdownMs := get $config "SHUTDOWN_GRACE_MS" | default "0" | int -}}
{{- if le $graceMs (add $shutdownMs $preStopMs) -}}
{{- fail (printf "services.%s.terminationGracePeriodSeconds (%d s) must exceed SHUTDOWN_GRACE_MS (%d ms) plus preStopSleepSeconds, or Kubernetes kills the process mid-reply" $name ($svc.terminationGracePeriodSeconds | default 30 | int) $shutdownMs) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The restricted Pod Security Standard, for pods and containers. */}}
{{- define "envoi.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "envoi.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ['ALL']
{{- end -}}

{{/* Pod-level settings shared by Deployments and Jobs (placement, pull secrets). */}}
{{- define "envoi.podPlacement" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
