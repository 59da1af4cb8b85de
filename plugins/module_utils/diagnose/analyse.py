# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What is wrong with each GPU node, and the likely cause (pure; collect.py reads the cluster).

Per GPU node: the symptoms (node conditions, operand pods that are missing or not ready, GPUs not
allocatable, failed validation checks) and the evidence (condition messages, container states, the pods' logs
and previous logs, the events of the node, its pods and the DaemonSets that lack a pod on it), matched against
the failure signatures (signatures.py). A node with symptoms and no matching line says "no known signature"
and shows the evidence it saw.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.daemonsets import daemonset_wants
from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.match import match_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout.plan import ANN_FAILURE, FAILED, STATE_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import pod_state
from ansible_collections.gpuops.cluster.plugins.module_utils.timeline import parse_time

# The collection's owner label of a DaemonSet -> the ``where`` of its pods' logs (match.WHERE). The driver's log
# also carries the kernel's messages (dmesg lines the driver script prints on a failed load).
LOG_SOURCES = {
    "driver": ("driver_log", "kernel_log"),
    "container_toolkit": ("toolkit_log",),
    "device_plugin": ("device_plugin_log",),
    "gpu_feature_discovery": ("gfd_log",),
    "monitoring": ("dcgm_log",),
    "nfd": ("gfd_log",),
}
# A DaemonSet not made by the collection (NFD's, the GPU Operator's, one in ``namespaces``): its component from its
# name, first match wins; a DaemonSet of no known component has its logs matched against every signature.
NAME_COMPONENTS = (
    ("node-feature-discovery", "nfd"),
    ("nfd", "nfd"),
    ("toolkit", "container_toolkit"),
    ("device-plugin", "device_plugin"),
    ("feature-discovery", "gpu_feature_discovery"),
    ("gfd", "gpu_feature_discovery"),
    ("dcgm", "monitoring"),
    ("driver", "driver"),
)
PRESSURE_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable")
NO_SIGNATURE = "no known signature"
# How collect.py records a log it could not read (kept in the archive, not taken as evidence).
LOG_NOT_AVAILABLE = "[log not available"
EVIDENCE_LINES = 6
GPU_RESOURCE = "nvidia.com/gpu"

# Secrets that can reach a log, an event or an object the archive keeps: PEM blocks (entitlement certificates; also
# cut short, or inside a JSON log line with escaped newlines), bearer and basic credentials, JWTs (service-account
# tokens), URL user info (proxy settings), registry auths and secret-like names' values, quoted or not, in
# key=value, key: value and JSON (escaped or not) forms.
_SECRET_WORDS = r"(?:password|passwd|token|secret|api[_-]?key|credentials?|private[_-]?key)"
_REDACTIONS = (
    (
        re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----", re.DOTALL),
        r"-----BEGIN \1----- <redacted> -----END \1-----",
    ),
    (
        re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(?:(?:\r?\n|\\n)[A-Za-z0-9+/=]{4,})+"),
        r"-----BEGIN \1----- <redacted>",
    ),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]+=*"), r"\1<redacted>"),
    (re.compile(r"(?i)\b(basic\s+)[A-Za-z0-9+/]{8,}=*"), r"\1<redacted>"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "<redacted>"),
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+@"), r"\1<redacted>@"),
    (
        re.compile(
            r'(?i)(\\?"(?:auth|identitytoken|\.dockerconfigjson|[a-z0-9_.-]*' + _SECRET_WORDS + r'[a-z0-9_.-]*)\\?"'
            r'\s*:\s*\\?")[^"\\]*'
        ),
        r"\1<redacted>",
    ),
    (
        re.compile(
            r"(?i)((?<![A-Za-z0-9])[A-Za-z0-9_.-]*" + _SECRET_WORDS + r"[A-Za-z0-9_.-]*)(\s*[=:]\s*)(['\"]?)"
            r"(?!<redacted>)[^\s,;&'\"]+"
        ),
        r"\1\2\3<redacted>",
    ),
)
# Env variables whose literal value is a secret; object fields whose string value is one; command-line flags whose
# next argument is one.
_SECRET_NAME = re.compile(r"(?i)(pass|token|secret|key|auth|cred|cert)")
_SECRET_KEY = re.compile(r"(?i)^" + _SECRET_WORDS + r"$|(token|secret|password)$")
_SECRET_FLAG = re.compile(r"(?i)^--?[a-z0-9-]*" + _SECRET_WORDS + r"$")
# kubectl's copy of the whole object, env values included, as one string.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def redact(text):
    """``text`` with every secret this module knows the shape of replaced by ``<redacted>``."""
    if not text:
        return text
    for pattern, replacement in _REDACTIONS:
        text = pattern.sub(replacement, text)
    return text


def _redact_env(value):
    return [
        (
            dict(e, value="<redacted>")
            if isinstance(e, dict) and "value" in e and _SECRET_NAME.search(e.get("name") or "")
            else e
        )
        for e in value
    ]


def _redact_list(value):
    out, hide = [], False
    for item in value:
        out.append("<redacted>" if hide and isinstance(item, str) else redact_object(item))
        hide = isinstance(item, str) and bool(_SECRET_FLAG.match(item))
    return out


def redact_object(obj):
    """A copy of an API object with every string redacted, and the values of secret-like env variables, fields
    (``secret``, ``password``, ``...Token``) and command-line flags, and kubectl's last-applied copy, replaced."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if key == "env" and isinstance(value, list):
                value = _redact_env(value)
            if isinstance(value, str) and (key == LAST_APPLIED or _SECRET_KEY.search(str(key))):
                out[key] = "<redacted>"
                continue
            out[key] = redact_object(value)
        return out
    if isinstance(obj, list):
        return _redact_list(obj)
    if isinstance(obj, str):
        return redact(obj)
    return obj


def component_of(ds, owner=None):
    """The operand a DaemonSet runs: the collection's owner label when it is one of LOG_SOURCES, else from its name."""
    if owner in LOG_SOURCES:
        return owner
    name = (_meta(ds, "name") or "").lower()
    for part, component in NAME_COMPONENTS:
        if part in name:
            return component
    return "other"


def _meta(obj, key):
    return (obj.get("metadata") or {}).get(key)


def _container_messages(pod):
    """(text, where) of the containers' waiting and last-terminated messages."""
    out = []
    status = pod.get("status") or {}
    for cstatus in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        for part in ((cstatus.get("state") or {}), (cstatus.get("lastState") or {})):
            for detail in part.values():
                if isinstance(detail, dict) and detail.get("message"):
                    out.append(detail["message"])
    return out


def _events_about(events, kind, name, namespace=None):
    return [
        e
        for e in events
        if (e.get("involvedObject") or {}).get("kind") == kind
        and (e.get("involvedObject") or {}).get("name") == name
        and (namespace is None or (e.get("involvedObject") or {}).get("namespace") == namespace)
    ]


def _event_line(event):
    return "{0} {1}: {2}".format(event.get("type") or "", event.get("reason") or "", event.get("message") or "").strip()


class _Seen(object):
    """What one node shows: symptoms (what is wrong), evidence (texts to match, with their source) and context
    (the lines to show when nothing matches)."""

    def __init__(self):
        self.symptoms, self.evidence, self.context = [], [], []

    def warnings(self, events, label=None, show=True):
        for event in events:
            if event.get("type") == "Warning":
                self.evidence.append({"text": event.get("message") or "", "where": "event"})
                if show:
                    self.context.append((label + ": " if label else "") + _event_line(event))


def _since_ready(events, pod):
    """The events of a Ready pod that happened last after it became Ready: what it overcame before (a sandbox refused
    until the toolkit had configured the runtime, as the GPU Operator's operands all are while it installs) is
    history, not a finding. An event without a time counts."""
    ready_at = next(
        (parse_time(c.get("lastTransitionTime")) for c in (pod.get("status") or {}).get("conditions") or []
         if c.get("type") == "Ready" and c.get("status") == "True"),
        None,
    )  # fmt: skip
    if ready_at is None:
        return events
    out = []
    for event in events:
        last = parse_time(event.get("lastTimestamp") or event.get("eventTime") or _meta(event, "creationTimestamp"))
        if last is None or last >= ready_at:
            out.append(event)
    return out


def _node_state(seen, node, events):
    for cond in (node.get("status") or {}).get("conditions") or []:
        ctype, status, message = cond.get("type"), cond.get("status"), cond.get("message") or cond.get("reason") or ""
        if (ctype == "Ready" and status != "True") or (ctype in PRESSURE_CONDITIONS and status == "True"):
            seen.symptoms.append("node {0}: {1}".format("NotReady" if ctype == "Ready" else ctype, message))
            seen.evidence.append({"text": message, "where": "node_condition"})
    seen.warnings(_events_about(events, "Node", _meta(node, "name")))


def _pod_state(seen, component, pod, logs, events):
    ready, words = pod_state(pod)
    pod_name, pod_ns = _meta(pod, "name"), _meta(pod, "namespace")
    sources = LOG_SOURCES.get(component, (None,))
    if not ready:
        seen.symptoms.append("{0} pod {1}: {2}".format(component, pod_name, words))
        for message in _container_messages(pod):
            seen.evidence.append({"text": message, "where": "pod_status"})
            # A terminated container's message is the tail of its log.
            seen.evidence.extend({"text": message, "where": w} for w in sources)
    about = _events_about(events, "Pod", pod_name, pod_ns)
    if ready:
        about = _since_ready(about, pod)
    seen.warnings(about, pod_name, show=not ready)
    for (ns, pname, container, previous), text in sorted(logs.items()):
        if (ns, pname) != (pod_ns, pod_name) or not text or text.startswith(LOG_NOT_AVAILABLE):
            continue
        seen.evidence.extend({"text": text, "where": w} for w in sources)
        if not ready:
            tail = [line for line in text.splitlines() if line.strip()][-3:]
            label = "{0}/{1}{2}".format(pname, container, " (previous)" if previous else "")
            seen.context.extend("{0}: {1}".format(label, line) for line in tail)


def node_findings(node, daemonsets, pods, logs, events, validation=None):
    """One GPU node's row: symptoms, findings (matched signatures) and, when nothing matched, the evidence.

    ``daemonsets``: [(component, DaemonSet)]; ``pods``: [(component, pod)] of those DaemonSets; ``logs``:
    {(namespace, pod, container, previous): text}; ``events``: Event objects; ``validation``: the node's entry in
    the last gpu-validation.json, if any.
    """
    name = _meta(node, "name")
    seen = _Seen()
    _node_state(seen, node, events)
    _upgrade_state(seen, node)
    mine = [(c, p) for c, p in pods if (p.get("spec") or {}).get("nodeName") == name]
    for component, ds in daemonsets:
        ds_ns, ds_name = _meta(ds, "namespace"), _meta(ds, "name")
        owned = [p for c, p in mine if _owner(p) == (ds_ns, ds_name)]
        wanted, why_not = daemonset_wants(ds, node)
        if owned:
            for pod in owned:
                _pod_state(seen, component, pod, logs, events)
        elif why_not:
            seen.symptoms.append("no {0} pod ({1}): {2}".format(component, ds_name, why_not))
        elif wanted:
            seen.symptoms.append("no {0} pod ({1})".format(component, ds_name))
            seen.warnings(_events_about(events, "DaemonSet", ds_name, ds_ns), "DaemonSet " + ds_name)

    alloc = ((node.get("status") or {}).get("allocatable") or {}).get(GPU_RESOURCE)
    plugin_ready = any(pod_state(p)[0] for c, p in mine if c == "device_plugin")
    if plugin_ready and str(alloc or "0") in ("0", ""):
        seen.symptoms.append("no allocatable GPUs ({0}: {1})".format(GPU_RESOURCE, alloc or "absent"))

    for failure in (validation or {}).get("failures") or []:
        seen.symptoms.append("validation: " + failure)
        seen.evidence.append({"text": failure, "where": "validator_log"})
        seen.context.append("validation: " + failure)
    symptoms, evidence, context = seen.symptoms, seen.evidence, seen.context

    findings = match_lines(evidence)
    row = {
        "node": name,
        "status": "problem" if symptoms else ("warning" if findings else "ok"),
        "symptoms": [redact(s) for s in symptoms],
        "findings": [dict(f, evidence=redact(f["evidence"])) for f in findings],
        "evidence": [],
    }
    if symptoms and not findings:
        row["evidence"] = [redact(line) for line in (context or symptoms)[-EVIDENCE_LINES:]]
    return row


def _upgrade_state(seen, node):
    """A node the driver rollout left cordoned: failed (with its cause), or stopped mid-way."""
    stage = (_meta(node, "labels") or {}).get(STATE_LABEL)
    if stage == FAILED:
        cause = (_meta(node, "annotations") or {}).get(ANN_FAILURE) or "no cause recorded"
        seen.symptoms.append("driver upgrade failed, node cordoned: " + cause)
        seen.evidence.append({"text": cause, "where": "driver_log"})
        seen.context.append("driver upgrade: " + cause)
    elif stage:
        seen.symptoms.append(
            "cordoned for a driver upgrade (stage {0}) by a run that did not finish: the next site.yml run "
            "resumes it".format(stage)
        )


def _owner(pod):
    for ref in _meta(pod, "ownerReferences") or []:
        if ref.get("kind") == "DaemonSet":
            return _meta(pod, "namespace"), ref.get("name")
    return None


def validation_nodes(report):
    """{node: entry} of a gpu-validation.json report (``gpu_validate``), or {}."""
    if not isinstance(report, dict) or not isinstance(report.get("nodes"), list):
        return {}
    return dict((n.get("node"), n) for n in report["nodes"] if isinstance(n, dict) and n.get("node"))


def diagnose(nodes, daemonsets, pods, logs, events, report=None):
    """Rows (``node_findings``) for every GPU node, problems first, then by name."""
    validation = validation_nodes(report)
    rows = [node_findings(n, daemonsets, pods, logs, events, validation.get(_meta(n, "name"))) for n in nodes]
    order = {"problem": 0, "warning": 1, "ok": 2}
    return sorted(rows, key=lambda r: (order[r["status"]], r["node"]))


def _clip(text, width):
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 3] + "..."


def table(rows, width=60):
    """The rows as text lines: per node what is wrong, the likely cause, the fix (one line each)."""
    lines = []
    counts = dict((s, sum(1 for r in rows if r["status"] == s)) for s in ("problem", "warning", "ok"))
    lines.append(
        "GPU nodes: {0} ({1} with a problem, {2} with a warning, {3} ok)".format(
            len(rows), counts["problem"], counts["warning"], counts["ok"]
        )
    )
    for row in rows:
        if row["status"] == "ok":
            continue
        lines.append("{0} [{1}]".format(row["node"], row["status"]))
        for symptom in row["symptoms"][:4]:
            lines.append("  what:     " + _clip(symptom, width * 2))
        if len(row["symptoms"]) > 4:
            lines.append("  what:     ... and {0} more".format(len(row["symptoms"]) - 4))
        for finding in row["findings"]:
            lines.append("  cause:    {0} ({1})".format(_clip(finding["cause"], width * 2), finding["signature"]))
            lines.append("  fix:      " + _clip(finding["fix"], width * 2))
            lines.append("  evidence: " + _clip(finding["evidence"], width * 2))
            lines.append("  source:   " + finding["source"])
        if row["symptoms"] and not row["findings"]:
            lines.append("  cause:    " + NO_SIGNATURE + "; the evidence:")
            lines.extend("  evidence: " + _clip(line, width * 2) for line in row["evidence"])
    ok = [r["node"] for r in rows if r["status"] == "ok"]
    if ok:
        lines.append("ok: " + _clip(", ".join(ok), width * 2))
    return lines


def markdown(rows):
    """The rows as a Markdown table (the archive's summary.md)."""

    def cell(text):
        return " ".join((text or "").split()).replace("|", "\\|")

    out = [
        "| node | status | what is wrong | likely cause | fix | signature |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        what = "<br>".join(cell(s) for s in row["symptoms"]) or "-"
        if row["findings"]:
            for f in row["findings"]:
                out.append(
                    "| {0} | {1} | {2} | {3} | {4} | [{5}]({6}) |".format(
                        row["node"], row["status"], what, cell(f["cause"]), cell(f["fix"]), f["signature"], f["source"]
                    )
                )
        else:
            cause = (NO_SIGNATURE + ": " + "<br>".join(cell(e) for e in row["evidence"])) if row["symptoms"] else "-"
            out.append("| {0} | {1} | {2} | {3} | - | - |".format(row["node"], row["status"], what, cause))
    return "\n".join(out) + "\n"
