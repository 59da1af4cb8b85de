# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The monitoring role's logic (pure; the filters of plugins/filter/monitoring.py and the unit tests share it).

- ``counter_metrics``: the metrics a dcgm-exporter counters CSV produces.
- ``exporter_runtime_class``: the exporter pods' RuntimeClass (none when CDI is off on CRI-O).
- ``monitoring_problems``: the inputs no input rule covers (module_utils/role_inputs.py) and what preflight read.
- ``monitoring_failures``: the GPU nodes without a ready exporter, Service endpoint or metrics, in words.
- ``label_set_by``: whether a field manager set a label (absent removes only the namespace label it set).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_COMMENT_OR_BLANK = re.compile(r"^\s*(#|$)")
_LABEL_FIELD = re.compile(r",\s*label\s*,")
_METRIC = re.compile(r"^\s*([A-Za-z0-9_]+).*$")


def _shown(value, limit=80):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def counter_metrics(text):
    """Metric names of a counters CSV: the first field of every line that is no comment, blank or ``label`` field."""
    names = []
    for line in (text or "").splitlines():
        if _COMMENT_OR_BLANK.match(line) or _LABEL_FIELD.search(line):
            continue
        names.append(_METRIC.sub(r"\1", line))
    return names


def exporter_runtime_class(gpu_nodes, runtime_class, cdi_enabled, openshift):
    """``runtime_class``, or "" when CDI is off on CRI-O: hook mode has no nvidia runtime handler (GO setRuntimeClassName).

    The GPU nodes' container runtimes (NFD's ``container_runtime``) tell CRI-O; without any known, OpenShift means CRI-O.
    """
    runtimes = [n.get("container_runtime") for n in gpu_nodes or [] if n.get("gpu") and n.get("container_runtime")]
    crio = any(r.startswith("cri-o://") for r in runtimes) or (not runtimes and bool(openshift))
    return "" if not cdi_enabled and crio else runtime_class


def monitoring_problems(values, metrics, alert_metrics, counters_found, namespace_missing=False):
    """One message per monitoring input that no input rule covers, then what the counters and the namespace lack.

    ``values``: the role variables below; ``metrics``: what the counters CSV produces (``counter_metrics``);
    ``counters_found``: whether ``monitoring_counters_csv`` is a file on the controller; ``namespace_missing``: the
    namespace was read and is not there.
    """
    out = []
    csv = values.get("monitoring_counters_csv")
    if not counters_found:
        out.append(
            "monitoring: monitoring_counters_csv must be a counters CSV file on the controller, got {0} (no such "
            "file).".format(_shown(csv, 120))
        )
    labels = values.get("monitoring_grafana_labels")
    if not (isinstance(labels, dict) and labels):
        out.append(
            "monitoring: monitoring_grafana_labels must be a non-empty dictionary (the Grafana sidecar's label "
            'selector, e.g. grafana_dashboard: "1").'
        )
    daemonsets = values.get("monitoring_alert_driver_daemonsets")
    if not (isinstance(daemonsets, str) and daemonsets and '"' not in daemonsets):
        out.append(
            "monitoring: monitoring_alert_driver_daemonsets must be a regular expression of driver DaemonSet names "
            "without double quotes, got {0}.".format(_shown(daemonsets))
        )
    missing = [m for m in alert_metrics if m not in (metrics or [])]
    if counters_found and missing:
        out.append(
            "monitoring: monitoring_counters_csv {0} does not collect {1}, which the alerts read: add the line(s) "
            "(see the role's files/dcgm-counters.csv).".format(csv, ", ".join(missing))
        )
    if namespace_missing:
        out.append(
            "monitoring: monitoring_namespace {0} does not exist: the driver role creates the GPU stack's namespace; "
            "run it first (or set gpuops_gpu_namespace to the driver's namespace).".format(
                values.get("monitoring_namespace")
            )
        )
    return out


def monitoring_failures(not_ready, endpoint_nodes, gpu_nodes, metric_failures, namespace, service, port, app):
    """Why GPU nodes are not monitored, one message each, the first kind that applies.

    ``not_ready``: operand_pods' entries of the nodes without a ready exporter; ``endpoint_nodes``: the nodes
    with a ready endpoint of the Service (operand_pods' ``endpoint_nodes``); ``metric_failures``: gpu_validate's ``failures`` (``<node>: <reason>; <reason>``).
    A node without a ready pod comes first (with its cause), then GPU nodes without a ready Service endpoint
    although their pods are ready, then missing metrics.
    """
    out = []
    for entry in not_ready or []:
        if entry.get("pod") is None:
            out.append(
                "monitoring: node {0}: no exporter pod (DaemonSet {1} does not select it: check its NFD GPU label, "
                "taints against monitoring_tolerations, monitoring_node_selector)".format(entry.get("node"), service)
            )
        else:
            state = entry.get("state") or ""
            health = " (GET /health on :{0} fails)".format(port) if state.startswith("Running, not ready") else ""
            out.append(
                "monitoring: node {0}: pod {1} not ready: {2}{3}".format(entry.get("node"), entry["pod"], state, health)
            )
    if out:
        return out
    ready = set(endpoint_nodes or [])
    missing = [n for n in gpu_nodes or [] if n not in ready]
    if missing:
        return [
            "monitoring: Service {0}/{1}: no ready endpoint on GPU node(s) {2} although their exporter pods are ready: "
            "check the Service selector app={3} and the EndpointSlice controller.".format(
                namespace, service, ", ".join(missing), app
            )
        ]
    return ["monitoring: node " + failure for failure in metric_failures or []]


def label_set_by(obj, manager, label):
    """Whether field manager ``manager`` set the label ``label`` of ``obj`` (its managedFields say who set what)."""
    for entry in ((obj or {}).get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") != manager:
            continue
        labels = ((entry.get("fieldsV1") or {}).get("f:metadata") or {}).get("f:labels") or {}
        if "f:" + label in labels:
            return True
    return False
