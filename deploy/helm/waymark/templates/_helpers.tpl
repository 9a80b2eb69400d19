{{/*
Names. Everything is named after the release's full name, so that two
releases in one namespace never share a Service, a StatefulSet or a cluster
id.
*/}}
{{- define "waymark.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "waymark.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* StatefulSets; their pod names add "-<ordinal>", so they stay short. */}}
{{- define "waymark.namesrv.fullname" -}}
{{- printf "%s-namesrv" (include "waymark.fullname" .) | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- define "waymark.controller.fullname" -}}
{{- printf "%s-controller" (include "waymark.fullname" .) | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{/* The headless Services that give every pod a stable DNS name. */}}
{{- define "waymark.namesrv.headless" -}}
{{- printf "%s-hl" (include "waymark.namesrv.fullname" .) -}}
{{- end -}}
{{- define "waymark.controller.headless" -}}
{{- printf "%s-hl" (include "waymark.controller.fullname" .) -}}
{{- end -}}

{{- define "waymark.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "waymark.labels" -}}
helm.sh/chart: {{ include "waymark.chart" . }}
app.kubernetes.io/name: {{ include "waymark.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component ("namesrv" or "controller"): call with (list . "namesrv"). */}}
{{- define "waymark.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "waymark.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "waymark.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
The stable DNS name of pod <ordinal> of a StatefulSet behind a headless
Service: <sts>-<i>.<headless>.<namespace>.svc.<clusterDomain>. Call with
(list . "<sts>" "<headless>" <i>).
*/}}
{{- define "waymark.podDNS" -}}
{{- $root := index . 0 -}}
{{- printf "%s-%d.%s.%s.svc.%s" (index . 1) (int (index . 3)) (index . 2) $root.Release.Namespace $root.Values.clusterDomain -}}
{{- end -}}

{{/* clusterSeeds: every NameServer's gossip address, this pod's own included (a node does not count itself). */}}
{{- define "waymark.namesrv.seeds" -}}
{{- $sts := include "waymark.namesrv.fullname" . -}}
{{- $hl := include "waymark.namesrv.headless" . -}}
{{- $seeds := list -}}
{{- range $i := until (int .Values.namesrv.replicas) -}}
{{- $seeds = append $seeds (printf "%s:%d" (include "waymark.podDNS" (list $ $sts $hl $i)) (int $.Values.namesrv.ports.gossip)) -}}
{{- end -}}
{{- join "," $seeds -}}
{{- end -}}

{{/*
controllerDLegerPeers as rocketmq-operator writes it: id-host:port;…, each
id the pod name without its dashes (the image's entrypoint derives this
node's id from MY_POD_NAME the same way).
*/}}
{{- define "waymark.controller.peers" -}}
{{- $sts := include "waymark.controller.fullname" . -}}
{{- $hl := include "waymark.controller.headless" . -}}
{{- $peers := list -}}
{{- range $i := until (int .Values.controller.replicas) -}}
{{- $id := printf "%s-%d" $sts $i | replace "-" "" -}}
{{- $peers = append $peers (printf "%s-%s:%d" $id (include "waymark.podDNS" (list $ $sts $hl $i)) (int $.Values.controller.ports.remoting)) -}}
{{- end -}}
{{- join ";" $peers -}}
{{- end -}}

{{/* brokers' controllerAddr: every controller's remoting address. */}}
{{- define "waymark.controller.addrs" -}}
{{- $sts := include "waymark.controller.fullname" . -}}
{{- $hl := include "waymark.controller.headless" . -}}
{{- $addrs := list -}}
{{- range $i := until (int .Values.controller.replicas) -}}
{{- $addrs = append $addrs (printf "%s:%d" (include "waymark.podDNS" (list $ $sts $hl $i)) (int $.Values.controller.ports.remoting)) -}}
{{- end -}}
{{- join ";" $addrs -}}
{{- end -}}

{{/* brokers' and clients' namesrvAddr: every NameServer pod's stable address. */}}
{{- define "waymark.namesrv.addrs" -}}
{{- $sts := include "waymark.namesrv.fullname" . -}}
{{- $hl := include "waymark.namesrv.headless" . -}}
{{- $addrs := list -}}
{{- range $i := until (int .Values.namesrv.replicas) -}}
{{- $addrs = append $addrs (printf "%s:%d" (include "waymark.podDNS" (list $ $sts $hl $i)) (int $.Values.namesrv.ports.remoting)) -}}
{{- end -}}
{{- join ";" $addrs -}}
{{- end -}}

{{/*
A properties value: Java's Properties.load reads a backslash as an escape,
so each is doubled; line breaks are refused by values.schema.json. Whole
numbers print as such.
*/}}
{{- define "waymark.propertyValue" -}}
{{- $value := . -}}
{{- /* Helm reads numbers as floats: 134217728 would print as 1.34217728e+08. */ -}}
{{- if and (kindIs "float64" $value) (eq $value (floor $value)) -}}
{{- $value = int64 $value -}}
{{- end -}}
{{- toString $value | replace "\\" "\\\\" -}}
{{- end -}}

{{/*
Pod anti-affinity on the host name: "soft" prefers, "hard" requires one pod
of the component per node. Call with (list . "namesrv" "soft").
*/}}
{{- define "waymark.antiAffinity" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- $mode := index . 2 -}}
{{- if eq $mode "hard" -}}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "waymark.selectorLabels" (list $root $component) | nindent 10 }}
{{- else if eq $mode "soft" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "waymark.selectorLabels" (list $root $component) | nindent 12 }}
{{- end }}
{{- end -}}
