# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""GPU node validation: the logic behind gpuops.cluster.gpu_validate.

The validation steps of the manual procedure (seed 000) and of the GPU Operator
state machine (seed 002) as one run over every selected GPU node at once:

* ``allocatable`` - the node advertises the expected ``nvidia.com/gpu``
  (expected from the GFD label ``nvidia.com/gpu.count`` x ``nvidia.com/gpu.replicas``
  or the ``expected_gpus`` parameter);
* ``driver`` - a driver pod on the node is Ready (else its state, e.g. CrashLoopBackOff);
* ``vectoradd`` / ``nvidia_smi`` - a pod pinned to the node requests one GPU and
  must Succeed with "Test PASSED" / an nvidia-smi table in its log;
* ``metrics`` - the node's DCGM exporter serves DCGM_FI_DEV_GPU_TEMP for each GPU,
  read through the API server proxy (no pod network needed on the client side).

Pure functions render pods, judge results and build the reports (JSON, JUnit XML,
Markdown); ``run()`` at the end creates all pods, polls them together, reads their
logs in parallel and always deletes them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json
import os
import random
import re
import string
import threading
import time
import traceback
import xml.etree.ElementTree as ET

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    GpuopsError,
    Progress,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import (
    describe_selection as describe_node_selection,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import (
    select_gpu_nodes,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import label_selector

try:
    from concurrent.futures import ThreadPoolExecutor
except ImportError:  # pragma: no cover - Python 2 only
    ThreadPoolExecutor = None

try:
    from kubernetes.dynamic.exceptions import NotFoundError
except ImportError:  # pragma: no cover - AnsibleK8SModule reports the missing library

    class NotFoundError(Exception):
        pass


CHECKS = ("allocatable", "driver", "vectoradd", "nvidia_smi", "metrics")
WORKLOAD_CHECKS = ("vectoradd", "nvidia_smi")
DEFAULT_CHECKS = ["allocatable", "driver", "vectoradd"]
NODE_CHECK = "node_ready"
GPU_RESOURCE = "nvidia.com/gpu"
GFD_COUNT = "nvidia.com/gpu.count"
GFD_REPLICAS = "nvidia.com/gpu.replicas"
GFD_PRODUCT = "nvidia.com/gpu.product"
COMPONENT_LABEL = "app.kubernetes.io/component"
APP_NAME = "gpu-validate"
RUN_LABEL = "gpuops.cluster/validation-run"
CHECK_LABEL = "gpuops.cluster/check"
NODE_ANNOTATION = "gpuops.cluster/node"
MIN_TIMEOUT = 10
PASS, FAIL, SKIP, UNREACHABLE = "pass", "fail", "skipped", "unreachable"
TEMP_METRIC = "DCGM_FI_DEV_GPU_TEMP"
# Container states that never recover by waiting (kubelet keeps backing off).
HOPELESS_WAITING = (
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "ErrImageNeverPull",
)
TOLERATION_KEYS = ("key", "operator", "value", "effect", "tolerationSeconds")
IMAGE_REF_RE = re.compile(
    r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$"
)
DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
SELECTOR_RE = re.compile(r"^\s*!?[A-Za-z0-9./_-]+(\s*(=|==|!=)\s*[A-Za-z0-9._-]*|\s+(in|notin)\s*\([^()]*\))?\s*$")

DEFAULT_TOLERATIONS = [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]


# ---------------------------------------------------------------------------
# Parameters (pure, plus filesystem checks of report paths)
# ---------------------------------------------------------------------------


def _check_selector(value, param):
    if value is None:
        return None
    value = to_text(value).strip()
    if not value or not all(SELECTOR_RE.match(part) for part in _split_selector(value)):
        raise GpuopsError(
            "{0!r} is not a label selector (kubectl syntax, e.g. {1}=nvidia-driver).".format(value, COMPONENT_LABEL),
            param=param,
        )
    return value


def _split_selector(value):
    parts, depth, cur = [], 0, ""
    for ch in value:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def check_report_path(path, param):
    """The report file can be written: its folder exists and is writable."""
    if not path:
        return None
    path = os.path.abspath(os.path.expanduser(to_text(path)))
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise GpuopsError(
            "{0} is a directory; give a file name such as {1}".format(path, os.path.join(path, "gpu-validate.json")),
            param=param,
        )
    if not os.path.isdir(folder):
        raise GpuopsError("the folder {0} does not exist; create it or choose another path".format(folder), param=param)
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise GpuopsError(
            "{0} exists and is not writable; fix its permissions or choose another path".format(path), param=param
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise GpuopsError(
            "the folder {0} is not writable by this user; choose another path".format(folder), param=param
        )
    return path


def validate_tolerations(tolerations):
    if tolerations is None:
        return copy.deepcopy(DEFAULT_TOLERATIONS)
    out = []
    for i, tol in enumerate(tolerations):
        if not isinstance(tol, dict):
            raise GpuopsError(
                "entry {0} is not a dictionary (key/operator/value/effect)".format(i), param="tolerations"
            )
        unknown = sorted(set(tol) - set(TOLERATION_KEYS))
        if unknown:
            raise GpuopsError(
                "entry {0} has unknown key(s) {1}; use {2}".format(i, ", ".join(unknown), ", ".join(TOLERATION_KEYS)),
                param="tolerations",
            )
        operator = tol.get("operator", "Equal")
        if operator not in ("Equal", "Exists"):
            raise GpuopsError(
                "entry {0}: operator must be Equal or Exists, not {1!r}".format(i, operator), param="tolerations"
            )
        if operator == "Exists" and tol.get("value"):
            raise GpuopsError("entry {0}: operator Exists takes no value".format(i), param="tolerations")
        if tol.get("effect") not in (None, "", "NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise GpuopsError(
                "entry {0}: effect must be NoSchedule, PreferNoSchedule or NoExecute".format(i), param="tolerations"
            )
        if not tol.get("key") and operator != "Exists":
            raise GpuopsError("entry {0}: an empty key needs operator Exists".format(i), param="tolerations")
        out.append(dict((k, v) for k, v in tol.items() if v is not None))
    return out


def validate_params(params):
    """Check every parameter before anything is read or written; return the config."""
    cfg = {}
    checks = list(params.get("checks") if params.get("checks") is not None else DEFAULT_CHECKS)
    if not checks:
        raise GpuopsError("is empty; choose from {0}".format(", ".join(CHECKS)), param="checks")
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise GpuopsError(
            "unknown check(s) {0}; choose from {1}".format(", ".join(map(to_text, unknown)), ", ".join(CHECKS)),
            param="checks",
        )
    cfg["checks"] = [c for c in CHECKS if c in checks]
    for key in ("namespace", "driver_namespace", "metrics_namespace"):
        value = params.get(key)
        if key != "namespace" and not value:
            value = cfg["namespace"]
        if not value or len(value) > 63 or not DNS_LABEL_RE.match(value):
            raise GpuopsError(
                "{0!r} is not a namespace name (lower-case letters, digits, '-')".format(value), param=key
            )
        cfg[key] = value
    cfg["node_selector"] = dict((to_text(k), to_text(v)) for k, v in (params.get("node_selector") or {}).items())
    names = params.get("nodes")
    if names is not None:
        if not names:
            raise GpuopsError("is empty; list node names or leave it unset", param="nodes")
        bad = [n for n in names if not DNS_SUBDOMAIN_RE.match(to_text(n)) or len(n) > 253]
        if bad:
            raise GpuopsError("{0} is not a node name".format(", ".join(repr(b) for b in bad)), param="nodes")
    cfg["nodes"] = list(names) if names else None
    for key in ("driver_selector", "device_plugin_selector", "metrics_selector"):
        cfg[key] = _check_selector(params.get(key), key)
    if "driver" in cfg["checks"] and not cfg["driver_selector"]:
        raise GpuopsError(
            "is needed by the driver check (e.g. {0}=nvidia-driver)".format(COMPONENT_LABEL), param="driver_selector"
        )
    expected = params.get("expected_gpus")
    if expected is not None and expected < 1:
        raise GpuopsError(
            "must be 1 or more (or unset to read {0} from each node)".format(GFD_COUNT), param="expected_gpus"
        )
    cfg["expected_gpus"] = expected
    for key in ("vectoradd_image", "nvidia_smi_image"):
        value = to_text(params.get(key) or "")
        if not IMAGE_REF_RE.match(value):
            raise GpuopsError("{0!r} is not an image reference (registry/repository:tag)".format(value), param=key)
        cfg[key] = value
    cfg["tolerations"] = validate_tolerations(params.get("tolerations"))
    cfg["pin"] = params.get("pin") or "affinity"
    if cfg["pin"] not in ("affinity", "nodeName"):
        raise GpuopsError("must be affinity or nodeName", param="pin")
    cfg["run_as_user"] = params.get("run_as_user")
    if cfg["run_as_user"] is not None and cfg["run_as_user"] < 1:
        raise GpuopsError("must be a non-root UID (1 or more); the pods run with runAsNonRoot", param="run_as_user")
    for key in ("priority_class_name", "runtime_class_name", "service_account"):
        value = params.get(key)
        if value and (len(value) > 253 or not DNS_SUBDOMAIN_RE.match(value)):
            raise GpuopsError("{0!r} is not a valid name".format(value), param=key)
        cfg[key] = value or None
    cfg["image_pull_secrets"] = list(params.get("image_pull_secrets") or [])
    timeout = params.get("timeout")
    if timeout is None or timeout < MIN_TIMEOUT:
        raise GpuopsError(
            "{0}s is too short: a validation pod must be scheduled, pull its image and run; give at least {1} "
            "(300 is sensible on real clusters, where the CUDA image pull alone takes a minute)".format(
                timeout, MIN_TIMEOUT
            ),
            param="timeout",
        )
    cfg["timeout"] = timeout
    interval = params.get("poll_interval")
    interval = 0 if interval is None else interval
    if interval < 1 or interval > timeout:
        raise GpuopsError("must be between 1 and timeout ({0})".format(timeout), param="poll_interval")
    cfg["poll_interval"] = interval
    port = params.get("metrics_port")
    if port is None or port < 1 or port > 65535:
        raise GpuopsError("must be a TCP port (1-65535)", param="metrics_port")
    cfg["metrics_port"] = port
    cfg["metrics_path"] = "/" + to_text(params.get("metrics_path") or "/metrics").lstrip("/")
    cfg["metrics_via"] = params.get("metrics_via") or "pod"
    if cfg["metrics_via"] not in ("pod", "service"):
        raise GpuopsError("must be pod or service", param="metrics_via")
    if "metrics" in cfg["checks"] and cfg["metrics_via"] == "pod" and not cfg["metrics_selector"]:
        raise GpuopsError(
            "is needed by the metrics check with metrics_via: pod (e.g. {0}=dcgm-exporter)".format(COMPONENT_LABEL),
            param="metrics_selector",
        )
    service = params.get("metrics_service")
    if service and not DNS_LABEL_RE.match(service):
        raise GpuopsError("{0!r} is not a service name".format(service), param="metrics_service")
    cfg["metrics_service"] = service
    cfg["driver_version"] = params.get("driver_version")
    if cfg["driver_version"] and not re.match(r"^[0-9]{3,4}(\.[0-9]{1,3}){0,2}$", cfg["driver_version"]):
        raise GpuopsError(
            "{0!r} is not a driver version such as 550.90.07 or branch 550".format(cfg["driver_version"]),
            param="driver_version",
        )
    cfg["parallel"] = 16 if params.get("parallel") is None else params["parallel"]
    if cfg["parallel"] < 1 or cfg["parallel"] > 100:
        raise GpuopsError("must be between 1 and 100", param="parallel")
    cfg["fail_on_error"] = params.get("fail_on_error", True)
    cfg["reports"] = {}
    for fmt, key in (("json", "report_json"), ("junit", "report_junit"), ("markdown", "report_markdown")):
        path = check_report_path(params.get(key), key)
        if path:
            cfg["reports"][fmt] = path
    return cfg


# ---------------------------------------------------------------------------
# Node facts (pure)
# ---------------------------------------------------------------------------


def _int(value, default=None):
    try:
        return int(to_text(value))
    except (TypeError, ValueError):
        return default


def node_ready(node):
    """(ready, why-not) from the Ready condition and spec.unschedulable."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            if cond.get("status") == "True":
                return True, None
            return False, "node NotReady ({0})".format(cond.get("reason") or cond.get("message") or cond.get("status"))
    return False, "node NotReady (no Ready condition)"


def allocatable_gpus(node):
    value = ((node.get("status") or {}).get("allocatable") or {}).get(GPU_RESOURCE)
    return _int(value, 0) if value is not None else 0


def expected_gpus(node, override=None):
    """(expected count or None, where it came from).

    GFD's ``nvidia.com/gpu.count`` times ``nvidia.com/gpu.replicas`` (time-slicing
    advertises each GPU that many times); None means "at least one".
    """
    if override:
        return override, "expected_gpus"
    labels = (node.get("metadata") or {}).get("labels") or {}
    count = _int(labels.get(GFD_COUNT))
    if count is None:
        return None, None
    replicas = _int(labels.get(GFD_REPLICAS), 1) or 1
    if replicas > 1:
        return count * replicas, "{0} x {1}".format(GFD_COUNT, GFD_REPLICAS)
    return count, GFD_COUNT


def untolerated_taints(node, tolerations):
    """NoSchedule/NoExecute taints of the node that the tolerations do not cover."""
    out = []
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(tol, taint) for tol in tolerations):
            out.append(taint)
    return out


def _tolerates(tol, taint):
    if tol.get("effect") and tol["effect"] != taint.get("effect"):
        return False
    if tol.get("operator", "Equal") == "Exists":
        return not tol.get("key") or tol["key"] == taint.get("key")
    return tol.get("key") == taint.get("key") and (tol.get("value") or "") == (taint.get("value") or "")


def taint_text(taint):
    return "{0}{1}:{2}".format(
        taint.get("key"), "=" + taint["value"] if taint.get("value") else "", taint.get("effect")
    )


def pods_on(pods, node_name):
    return [p for p in pods if (p.get("spec") or {}).get("nodeName") == node_name]


# ---------------------------------------------------------------------------
# Pod state (pure)
# ---------------------------------------------------------------------------


def pod_is_ready(pod):
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def pod_state(pod):
    """A short human state: 'Ready', 'CrashLoopBackOff (restarts 5, last exit 1)', 'Pending: <why>'."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if meta.get("deletionTimestamp"):
        return "Terminating"
    if pod_is_ready(pod):
        return "Ready"
    statuses = list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])
    for cs in statuses:
        state = cs.get("state") or {}
        restarts = cs.get("restartCount") or 0
        last = (cs.get("lastState") or {}).get("terminated") or {}
        if state.get("waiting") and state["waiting"].get("reason") not in (
            None,
            "ContainerCreating",
            "PodInitializing",
        ):
            extra = []
            if restarts:
                extra.append("restarts {0}".format(restarts))
            if last.get("exitCode") is not None:
                extra.append("last exit {0}".format(last["exitCode"]))
            text = state["waiting"]["reason"]
            if extra:
                text += " ({0})".format(", ".join(extra))
            if state["waiting"].get("message") and state["waiting"]["reason"] not in ("CrashLoopBackOff",):
                text += ": " + _one_line(state["waiting"]["message"])
            return text
        if state.get("terminated") and state["terminated"].get("exitCode"):
            term = state["terminated"]
            return "{0} (exit {1})".format(term.get("reason") or "Terminated", term.get("exitCode"))
    phase = status.get("phase") or "Pending"
    if phase == "Pending":
        for cond in status.get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                return "Pending: {0}".format(_one_line(cond.get("message") or cond.get("reason") or "not scheduled"))
        for cs in statuses:
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason"):
                return "Pending: {0}".format(waiting["reason"])
        return "Pending"
    if phase == "Running":
        return "Running, not Ready"
    return phase


def _one_line(text, limit=300):
    text = " ".join(to_text(text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def log_tail(text, lines=3):
    kept = [line for line in to_text(text or "").rstrip().splitlines() if line.strip()]
    return " / ".join(line.strip() for line in kept[-lines:])


def component_state(pods, what):
    """'device-plugin pod CrashLoopBackOff' or 'no device-plugin pod on the node'."""
    if not pods:
        return "no {0} pod on the node".format(what)
    return "; ".join("{0} pod {1}".format(what, pod_state(p)) for p in pods)


# ---------------------------------------------------------------------------
# Checks (pure): each returns {"status", "message", ...}
# ---------------------------------------------------------------------------


def check_node_ready(node):
    ready, why = node_ready(node)
    if ready and (node.get("spec") or {}).get("unschedulable"):
        return {"status": FAIL, "message": "node is cordoned (spec.unschedulable)"}
    return {"status": PASS, "message": "Ready"} if ready else {"status": FAIL, "message": why}


def check_allocatable(node, override=None, plugin_pods=None, plugin_selector=None):
    have = allocatable_gpus(node)
    want, source = expected_gpus(node, override)
    ok = have == want if want else have >= 1
    result = {"allocatable": have, "expected": want, "expected_from": source}
    if ok:
        result.update(status=PASS, message="allocatable {0} {1}".format(GPU_RESOURCE, have))
        return result
    message = "allocatable {0} {1}, expected {2}".format(GPU_RESOURCE, have, want if want else "at least 1")
    if source:
        message += " ({0})".format(source)
    if plugin_selector is not None:
        message += "; " + component_state(plugin_pods or [], "device-plugin")
    result.update(status=FAIL, message=message)
    return result


def check_driver(pods, logs=None):
    """Driver pods Ready on the node (``logs``: {pod name: log tail} of failing ones)."""
    if not pods:
        return {
            "status": FAIL,
            "message": "no driver pod on the node (is the driver DaemonSet selecting it, e.g. by kernel version?)",
        }
    ready = [p for p in pods if pod_is_ready(p)]
    if ready:
        return {
            "status": PASS,
            "message": "driver pod {0} Ready".format(ready[0]["metadata"]["name"]),
            "pods": [p["metadata"]["name"] for p in pods],
        }
    parts = []
    for pod in pods:
        text = "driver pod {0} {1}".format(pod["metadata"]["name"], pod_state(pod))
        tail = (logs or {}).get(pod["metadata"]["name"])
        if tail:
            text += ": " + log_tail(tail, 2)
        parts.append(text)
    return {"status": FAIL, "message": "; ".join(parts), "pods": [p["metadata"]["name"] for p in pods]}


def pod_log_text(pod, log):
    """The container output: the pods/log text, else the termination message."""
    if log and to_text(log).strip():
        return to_text(log)
    for cs in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated") or {}
        if term.get("message"):
            return to_text(term["message"])
    return ""


def judge_output(check, text, driver_version=None):
    """(ok, detail) for the output of a Succeeded validation container."""
    if check == "vectoradd":
        if "Test PASSED" in text:
            return True, "Test PASSED"
        return False, "the log has no 'Test PASSED'" + (": " + log_tail(text) if text.strip() else " (empty log)")
    match = re.search(r"Driver Version:\s*([0-9.]+)", text)
    if "NVIDIA-SMI" not in text or not match:
        return False, "no nvidia-smi table in the log" + (": " + log_tail(text) if text.strip() else " (empty log)")
    found = match.group(1)
    gpus = re.findall(r"^\|\s+\d+\s+(.+?)\s{2,}", text, re.M)
    detail = "driver {0}".format(found) + (", {0}".format(gpus[0].strip()) if gpus else "")
    if driver_version and not (found == driver_version or found.startswith(driver_version + ".")):
        return False, "nvidia-smi reports driver {0}, expected {1}".format(found, driver_version)
    return True, detail


def check_workload(check, pod, log, timed_out=False, timeout=None, driver_version=None):
    """Judge one validation pod: Succeeded with the expected output."""
    label = "vectoradd" if check == "vectoradd" else "nvidia-smi"
    if pod is None:
        return {"status": FAIL, "message": "{0} pod disappeared before it finished".format(label)}
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    text = pod_log_text(pod, log)
    if phase == "Succeeded":
        ok, detail = judge_output(check, text, driver_version)
        if ok:
            return {"status": PASS, "message": "{0}: {1}".format(label, detail)}
        return {"status": FAIL, "message": "{0} pod Succeeded but {1}".format(label, detail)}
    if phase == "Failed":
        message = "{0} pod Failed ({1})".format(
            label, pod_state(pod) if pod_state(pod) != "Failed" else _failed_reason(pod)
        )
        if text.strip():
            message += ": " + log_tail(text)
        return {"status": FAIL, "message": message}
    state = pod_state(pod)
    if timed_out:
        if not state.startswith(("Pending", "Running")):
            state = "{0}: {1}".format(phase, state)
        return {"status": FAIL, "message": "{0} pod still {1} after {2}s".format(label, state, timeout)}
    return {"status": FAIL, "message": "{0} pod {1}".format(label, state)}


def _failed_reason(pod):
    status = pod.get("status") or {}
    if status.get("reason"):
        return "{0}: {1}".format(status["reason"], _one_line(status.get("message") or ""))
    for cs in status.get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated") or {}
        if term:
            return "{0}, exit {1}".format(term.get("reason") or "Error", term.get("exitCode"))
    return "Failed"


def pod_finished(pod):
    """True when waiting longer cannot change the verdict."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return True
    for cs in list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or []):
        if ((cs.get("state") or {}).get("waiting") or {}).get("reason") in HOPELESS_WAITING:
            return True
    return False


METRIC_LINE_RE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+(\S+)")
LABEL_RE = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metric(text, name=TEMP_METRIC):
    """[(labels dict, value)] of one metric from Prometheus text exposition."""
    out = []
    for line in to_text(text or "").splitlines():
        if not line.startswith(name):
            continue
        match = METRIC_LINE_RE.match(line)
        if not match or match.group(1) != name:
            continue
        try:
            value = float(match.group(4))
        except ValueError:
            continue
        out.append((dict(LABEL_RE.findall(match.group(3) or "")), value))
    return out


def check_metrics(text, expected=None, node_name=None):
    """DCGM_FI_DEV_GPU_TEMP present for every GPU (distinct gpu/UUID label)."""
    series = parse_metric(text)
    if node_name is not None:
        own = [
            s
            for s in series
            if s[0].get("Hostname") in (None, node_name)
            or s[0].get("Hostname", "").split(".")[0] == node_name.split(".")[0]
        ]
        series = own
    gpus = {}
    for labels, value in series:
        gpus[labels.get("UUID") or labels.get("gpu") or labels.get("device") or str(len(gpus))] = value
    want = expected or 1
    if len(gpus) >= want:
        return {
            "status": PASS,
            "message": "{0} for {1} GPU(s) (max {2:g} C)".format(TEMP_METRIC, len(gpus), max(gpus.values())),
            "gpus": len(gpus),
        }
    return {
        "status": FAIL,
        "message": "{0} for {1} GPU(s), expected {2}".format(TEMP_METRIC, len(gpus), expected or "at least 1"),
        "gpus": len(gpus),
    }


def unreachable(what, error):
    return {"status": UNREACHABLE, "message": "metrics unreachable via {0}: {1}".format(what, _one_line(error, 240))}


# ---------------------------------------------------------------------------
# Pods (pure)
# ---------------------------------------------------------------------------


def run_id(rand=None):
    rand = rand or random.SystemRandom()
    return "".join(rand.choice(string.ascii_lowercase + string.digits) for _i in range(6))


def pod_name(check, node_name, run):
    digest = hashlib.sha256(to_text(node_name).encode("utf-8")).hexdigest()[:10]
    return "gpuops-{0}-{1}-{2}".format("vectoradd" if check == "vectoradd" else "nvidia-smi", digest, run)


def render_pod(check, node_name, cfg, run):
    """One validation pod: pinned to the node, one GPU, restricted security context.

    Pinning with a required node affinity on metadata.name (``pin: affinity``,
    how DaemonSet pods are placed) keeps the scheduler in the loop, so a node that
    does not advertise a free nvidia.com/gpu leaves the pod Pending with the
    scheduler's reason instead of running it anyway; ``pin: nodeName`` bypasses
    the scheduler (kubelet admission still checks the resource).
    """
    container_name = "vectoradd" if check == "vectoradd" else "nvidia-smi"
    container = {
        "name": container_name,
        "image": cfg["vectoradd_image"] if check == "vectoradd" else cfg["nvidia_smi_image"],
        "resources": {"limits": {GPU_RESOURCE: 1}, "requests": {GPU_RESOURCE: 1}},
        "env": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
        },
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if check == "nvidia_smi":
        container["command"] = ["nvidia-smi"]
    spec = {
        "restartPolicy": "Never",
        "containers": [container],
        "tolerations": copy.deepcopy(cfg["tolerations"]),
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 5,
        # A safety net: the kubelet stops the pod even if cleanup never happens.
        "activeDeadlineSeconds": int(cfg["timeout"]) + 120,
    }
    if cfg.get("run_as_user"):
        spec["securityContext"]["runAsUser"] = cfg["run_as_user"]
    if cfg["pin"] == "nodeName":
        spec["nodeName"] = node_name
    else:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                    ]
                }
            }
        }
    for key, field in (
        ("priority_class_name", "priorityClassName"),
        ("runtime_class_name", "runtimeClassName"),
        ("service_account", "serviceAccountName"),
    ):
        if cfg.get(key):
            spec[field] = cfg[key]
    if cfg.get("image_pull_secrets"):
        spec["imagePullSecrets"] = [{"name": n} for n in cfg["image_pull_secrets"]]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name(check, node_name, run),
            "namespace": cfg["namespace"],
            "labels": {
                MANAGED_BY_LABEL: MANAGED_BY,
                "app.kubernetes.io/name": APP_NAME,
                COMPONENT_LABEL: "gpu-validation",
                RUN_LABEL: run,
                CHECK_LABEL: check.replace("_", "-"),
            },
            "annotations": {NODE_ANNOTATION: node_name},
        },
        "spec": spec,
    }


# ---------------------------------------------------------------------------
# Report (pure)
# ---------------------------------------------------------------------------


def node_report(node, results, checks):
    """One node's entry: every requested check (plus node_ready), failures, GPU numbers."""
    name = node["metadata"]["name"]
    labels = node["metadata"].get("labels") or {}
    entry_checks = {NODE_CHECK: results.get(NODE_CHECK) or check_node_ready(node)}
    for check in checks:
        entry_checks[check] = results.get(check) or {"status": SKIP, "message": "not evaluated"}
    failures = []
    for check in [NODE_CHECK] + list(checks):
        res = entry_checks[check]
        if res["status"] in (FAIL, UNREACHABLE):
            failures.append(res["message"])
    alloc = entry_checks.get("allocatable") or {}
    return {
        "node": name,
        "passed": not failures,
        "product": labels.get(GFD_PRODUCT),
        "allocatable_gpus": alloc.get("allocatable", allocatable_gpus(node)),
        "expected_gpus": alloc.get("expected") if "allocatable" in entry_checks else expected_gpus(node)[0],
        "checks": entry_checks,
        "failures": failures,
    }


def build_report(node_reports, checks, started=None, duration=None, meta=None):
    failed = [n for n in node_reports if not n["passed"]]
    summary = {
        "result": "passed" if not failed else "failed",
        "nodes": len(node_reports),
        "passed": len(node_reports) - len(failed),
        "failed": len(failed),
        "checks": list(checks),
        "started": started,
        "duration": duration,
    }
    summary.update(meta or {})
    return {
        "summary": summary,
        "nodes": node_reports,
        "failures": ["{0}: {1}".format(n["node"], "; ".join(n["failures"])) for n in failed],
    }


def failure_message(report):
    """'GPU validation failed on 1 of 3 GPU nodes: ip-10-0-138-78: allocatable nvidia.com/gpu 0, expected 1; ...'"""
    summary = report["summary"]
    return "GPU validation failed on {0} of {1} GPU node(s) (checks: {2}): {3}".format(
        summary["failed"], summary["nodes"], ", ".join(summary["checks"]), " | ".join(report["failures"])
    )


def report_json(report):
    return json.dumps(report, indent=2, sort_keys=True) + "\n"


def report_junit(report, suite_name="gpuops.cluster.gpu_validate"):
    """JUnit XML: one testcase per node and check (classname = node), for AWX/CI."""
    summary = report["summary"]
    cases = [
        (n, c, n["checks"][c])
        for n in report["nodes"]
        for c in [NODE_CHECK] + list(summary["checks"])
        if c in n["checks"]
    ]
    failures = sum(1 for _n, _c, r in cases if r["status"] == FAIL)
    errors = sum(1 for _n, _c, r in cases if r["status"] == UNREACHABLE)
    skipped = sum(1 for _n, _c, r in cases if r["status"] == SKIP)
    attrs = {
        "name": suite_name,
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(skipped),
        "time": "{0:.3f}".format(summary.get("duration") or 0),
    }
    root = ET.Element("testsuites", attrs)
    suite = ET.SubElement(root, "testsuite", dict(attrs, timestamp=summary.get("started") or ""))
    for node, check, res in cases:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": "gpu_validate.{0}".format(node["node"]),
                "name": check,
                "time": "{0:.3f}".format(res.get("duration") or 0),
            },
        )
        if res["status"] == FAIL:
            ET.SubElement(case, "failure", {"message": res["message"], "type": check}).text = res["message"]
        elif res["status"] == UNREACHABLE:
            ET.SubElement(case, "error", {"message": res["message"], "type": "unreachable"}).text = res["message"]
        elif res["status"] == SKIP:
            ET.SubElement(case, "skipped", {"message": res["message"]})
        else:
            ET.SubElement(case, "system-out").text = res.get("message") or ""
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + to_text(ET.tostring(root, encoding="unicode")) + "\n"


def _md(text):
    return to_text(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


def report_markdown(report):
    summary = report["summary"]
    checks = [NODE_CHECK] + list(summary["checks"])
    marks = {PASS: "pass", FAIL: "**FAIL**", SKIP: "skipped", UNREACHABLE: "**unreachable**"}
    lines = [
        "## GPU validation: {0} ({1}/{2} nodes passed)".format(
            summary["result"].upper(), summary["passed"], summary["nodes"]
        ),
        "",
        "| Node | Product | GPUs (allocatable/expected) | {0} | Result |".format(" | ".join(checks)),
        "|" + "---|" * (len(checks) + 4),
    ]
    for node in report["nodes"]:
        cells = [marks.get(node["checks"][c]["status"], node["checks"][c]["status"]) for c in checks]
        expected = node.get("expected_gpus")
        lines.append(
            "| {0} | {1} | {2}/{3} | {4} | {5} |".format(
                _md(node["node"]),
                _md(node.get("product") or "-"),
                node.get("allocatable_gpus"),
                expected if expected else ">=1",
                " | ".join(cells),
                "PASS" if node["passed"] else "**FAIL**",
            )
        )
    if report["failures"]:
        lines += ["", "### Failures", ""]
        lines += ["- {0}".format(_md(f)) for f in report["failures"]]
    lines += ["", "_checks: {0}; duration {1}s_".format(", ".join(summary["checks"]), summary.get("duration"))]
    return "\n".join(lines) + "\n"


RENDERERS = {"json": report_json, "junit": report_junit, "markdown": report_markdown}


def write_reports(report, paths):
    written = {}
    for fmt, path in sorted(paths.items()):
        tmp = path + ".tmp"
        with open(tmp, "w") as handle:
            handle.write(RENDERERS[fmt](report))
        os.rename(tmp, path)
        written[fmt] = path
    return written


# ---------------------------------------------------------------------------
# The module run (talks to the API)
# ---------------------------------------------------------------------------


def _core(client):
    from kubernetes.client import CoreV1Api

    return CoreV1Api(client.client.client)


def _list(client, resource, namespace=None, selector=None, param=None):
    params = {}
    if namespace:
        params["namespace"] = namespace
    if selector:
        params["label_selector"] = selector
    try:
        return client.get(resource, **params).to_dict().get("items") or []
    except Exception as exc:
        if param and getattr(exc, "status", None) == 400:
            raise GpuopsError(
                "the API server rejected the selector {0!r}: {1}".format(selector, _api_message(exc)), param=param
            )
        raise


def _api_message(exc):
    body = getattr(exc, "body", None)
    try:
        return json.loads(to_text(body)).get("message") or to_text(exc)
    except Exception:
        return _one_line(to_text(body or exc), 300)


def _pool_size(client):
    """Connections the kubernetes client keeps per host (urllib3 pool size)."""
    try:
        return int(client.configuration.connection_pool_maxsize) or 4
    except (AttributeError, TypeError, ValueError):
        return 4


def _pool(cfg, jobs):
    return ThreadPoolExecutor(max_workers=max(1, min(cfg["parallel"], len(jobs) or 1)))


def _parallel(cfg, func, items):
    """[(item, result, exception)] for func(item) run in a thread pool, in order."""
    if not items:
        return []
    pool = _pool(cfg, items)
    try:
        futures = [(item, pool.submit(func, item)) for item in items]
        out = []
        for item, future in futures:
            try:
                out.append((item, future.result(), None))
            except Exception as exc:  # reported per item
                out.append((item, None, exc))
        return out
    finally:
        pool.shutdown(wait=True)


def _read_log(core, pod, namespace, tail=None, previous=False):
    kwargs = {"_request_timeout": 15}
    if tail:
        kwargs["tail_lines"] = tail
    if previous:
        kwargs["previous"] = True
    return core.read_namespaced_pod_log(pod, namespace, **kwargs)


def _proxy_get(client, path):
    """GET through the API server proxy (services/.../proxy or pods/.../proxy)."""
    api = client.client.client
    response = api.call_api(
        path,
        "GET",
        auth_settings=["BearerToken"],
        response_type="str",
        _preload_content=False,
        _request_timeout=10,
        header_params={"Accept": "text/plain"},
    )
    data = response[0].data if isinstance(response, tuple) else response.data
    return to_text(data)


def select_nodes(cfg, client, svc):
    node_api = svc.find_resource("Node", "v1", fail=True)
    nodes = _list(
        client,
        node_api,
        selector=label_selector(cfg["node_selector"]) if cfg["node_selector"] else None,
        param="node_selector",
    )
    if cfg["nodes"]:
        known = set(n["metadata"]["name"] for n in nodes)
        missing = [n for n in cfg["nodes"] if n not in known]
        if missing:
            raise GpuopsError(
                "no node named {0}{1}. Fix the names or the selector.".format(
                    ", ".join(missing),
                    " among {0}".format(describe_node_selection(cfg["node_selector"])) if cfg["node_selector"] else "",
                ),
                param="nodes",
            )
        if not cfg["node_selector"]:
            # Named nodes are validated as GPU nodes whatever their labels say.
            return sorted(
                [n for n in nodes if n["metadata"]["name"] in cfg["nodes"]], key=lambda n: n["metadata"]["name"]
            )
    selected = select_gpu_nodes(nodes, cfg["node_selector"], cfg["nodes"])
    if not selected:
        raise GpuopsError(
            "no node matches ({0}; {1} node(s) looked at). Fix node_selector, or check that Node Feature "
            "Discovery labelled the GPU nodes (nfd_labels).".format(
                describe_node_selection(cfg["node_selector"], cfg["nodes"]), len(nodes)
            ),
            param="node_selector",
        )
    return selected


def _check_namespaces(cfg, client, svc):
    ns_api = svc.find_resource("Namespace", "v1", fail=True)
    needed = []
    if any(c in cfg["checks"] for c in WORKLOAD_CHECKS):
        needed.append(("namespace", cfg["namespace"]))
    if "driver" in cfg["checks"]:
        needed.append(("driver_namespace", cfg["driver_namespace"]))
    if "metrics" in cfg["checks"]:
        needed.append(("metrics_namespace", cfg["metrics_namespace"]))
    for param, name in needed:
        try:
            client.get(ns_api, name=name)
        except NotFoundError:
            raise GpuopsError("the namespace {0} does not exist; create it or set {1}".format(name, param), param=param)


def _metrics_for(cfg, client, nodes, exporter_pods, expected):
    """{node: result} for the metrics check (read through the API server proxy)."""
    ns, port, path = cfg["metrics_namespace"], cfg["metrics_port"], cfg["metrics_path"]
    results = {}
    if cfg["metrics_via"] == "service":
        service = cfg["metrics_service"] or "nvidia-dcgm-exporter"
        where = "service proxy /api/v1/namespaces/{0}/services/{1}:{2}/proxy{3}".format(ns, service, port, path)
        try:
            text = _proxy_get(client, where.split(" ", 2)[2])
        except Exception as exc:
            return dict((n["metadata"]["name"], unreachable(where, _api_message(exc))) for n in nodes)
        for node in nodes:
            name = node["metadata"]["name"]
            res = check_metrics(text, expected[name], node_name=name)
            if res["gpus"] == 0:
                res = unreachable(
                    where,
                    "the answer holds no series with Hostname={0} (a service proxy request reaches one exporter; "
                    "use metrics_via: pod to read every node)".format(name),
                )
            results[name] = res
        return results

    jobs = []
    for node in nodes:
        name = node["metadata"]["name"]
        pods = [p for p in pods_on(exporter_pods, name) if not (p.get("metadata") or {}).get("deletionTimestamp")]
        if not pods:
            results[name] = {
                "status": FAIL,
                "message": "no DCGM exporter pod on the node ({0} in {1})".format(cfg["metrics_selector"], ns),
            }
            continue
        jobs.append((name, pods[0]["metadata"]["name"]))

    def fetch(job):
        return _proxy_get(client, "/api/v1/namespaces/{0}/pods/{1}:{2}/proxy{3}".format(ns, job[1], port, path))

    for (name, pod), text, exc in _parallel(cfg, fetch, jobs):
        where = "pod proxy /api/v1/namespaces/{0}/pods/{1}:{2}/proxy{3}".format(ns, pod, port, path)
        if exc is not None:
            results[name] = unreachable(where, _api_message(exc))
        else:
            results[name] = check_metrics(text, expected[name])
    return results


class PodRun(object):
    """The validation pods of one run, handled together.

    All pods are created at once (thread pool), then followed with one watch
    (list + watch on the run label; polling with one list per poll_interval
    when the watch is not available). Each pod is handled as soon as it has
    finished: its log is read and the pod deleted, in the pool, while the
    others still run. ``cleanup()`` deletes whatever is left (timeouts,
    failures) and waits until no pod of the run is listed.
    """

    def __init__(self, cfg, client, pod_api, core, progress, clock=time.monotonic, sleep=time.sleep):
        self.cfg = cfg
        self.client = client
        self.pod_api = pod_api
        self.core = core
        self.progress = progress
        self.clock = clock
        self.sleep = sleep
        self.namespace = cfg["namespace"]
        self.selector = label_selector({RUN_LABEL: cfg["run"]})
        # No more threads than the client keeps connections: extra ones would each open a new TLS connection.
        self.pool = ThreadPoolExecutor(max_workers=max(1, min(cfg["parallel"], _pool_size(client))))
        self.created = []
        self.errors = {}
        self.pods = {}
        self.finished = {}
        self.futures = {}
        self.deleted = set()
        self.lock = threading.Lock()
        self.start = clock()
        self._last_progress = None

    # -- create
    def create(self, bodies):
        def create(body):
            return self.client.create(self.pod_api, body, namespace=self.namespace).to_dict()

        futures = [(body["metadata"]["name"], self.pool.submit(create, body)) for body in bodies]
        unauthorized = None
        for name, future in futures:
            try:
                future.result()
                self.created.append(name)
            except Exception as exc:  # reported per pod; 401 ends the run (after cleanup)
                if getattr(exc, "status", None) == 401:
                    unauthorized = exc
                self.errors[name] = _api_message(exc)
        if unauthorized is not None:
            raise unauthorized
        self.start = self.clock()
        return self.created

    # -- follow
    def done(self):
        return all(name in self.finished for name in self.created)

    def _delete(self, name):
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
        with self.lock:
            self.deleted.add(name)
        try:
            self.client.delete(self.pod_api, name=name, namespace=self.namespace, body=body)
        except NotFoundError:
            pass

    def _finish(self, name, phase):
        """Read the log of a finished pod (Succeeded/Failed), then delete it."""
        log = None
        try:
            if phase in ("Succeeded", "Failed"):
                log = _read_log(self.core, name, self.namespace)
        finally:
            self._delete(name)
        return log

    def _seen(self, pod, gone=False):
        name = (pod.get("metadata") or {}).get("name")
        if name not in self.created or name in self.finished:
            return
        if gone:
            with self.lock:
                ours = name in self.deleted
            if not ours:
                self.finished[name] = round(self.clock() - self.start, 3)
                self.pods[name] = None
            return
        self.pods[name] = pod
        if pod_finished(pod):
            self.finished[name] = round(self.clock() - self.start, 3)
            phase = (pod.get("status") or {}).get("phase")
            self.futures[name] = self.pool.submit(self._finish, name, phase)

    def _report(self, force=False):
        now = self.clock()
        if not force and self._last_progress is not None and now - self._last_progress < self.cfg["poll_interval"]:
            return
        self._last_progress = now
        counts = {}
        for name in self.created:
            pod = self.pods.get(name)
            phase = ((pod or {}).get("status") or {}).get("phase") or ("Gone" if name in self.pods else "Pending")
            counts[phase] = counts.get(phase, 0) + 1
        self.progress(
            "validation pods: {0}".format(", ".join("{0} {1}".format(v, k) for k, v in sorted(counts.items())))
        )

    def _list(self):
        items = _list(self.client, self.pod_api, self.namespace, self.selector)
        listed = set()
        for pod in items:
            listed.add(pod["metadata"]["name"])
            self._seen(pod)
        return listed

    def poll(self, deadline):
        """Follow the pods with one list per poll_interval. Returns True on timeout."""
        while True:
            listed = self._list()
            for name in self.created:
                if name not in listed:
                    self._seen({"metadata": {"name": name}}, gone=True)
            self._report()
            if self.done():
                return False
            now = self.clock()
            if now >= deadline:
                return True
            self.sleep(min(self.cfg["poll_interval"], max(0.05, deadline - now)))

    def watch(self, deadline):
        """Follow the pods with a watch (events arrive as they happen). Returns True on timeout."""
        from kubernetes import watch as k8s_watch

        version = None
        while not self.done():
            remaining = deadline - self.clock()
            if remaining <= 0:
                return True
            if version is None:
                listing = self.core.list_namespaced_pod(
                    self.namespace, label_selector=self.selector, _preload_content=False
                )
                data = json.loads(to_text(listing.data))
                version = (data.get("metadata") or {}).get("resourceVersion")
                listed = set()
                for pod in data.get("items") or []:
                    listed.add(pod["metadata"]["name"])
                    self._seen(pod)
                for name in self.created:
                    if name not in listed:
                        self._seen({"metadata": {"name": name}}, gone=True)
                self._report()
                continue
            stream = k8s_watch.Watch()
            try:
                for event in stream.stream(
                    self.core.list_namespaced_pod,
                    self.namespace,
                    label_selector=self.selector,
                    resource_version=version,
                    timeout_seconds=max(1, int(remaining + 0.999)),
                    _request_timeout=remaining + 30,
                ):
                    obj = event.get("raw_object") or {}
                    if event.get("type") == "ERROR":
                        version = None  # 410 Gone (too old): list again
                        break
                    version = (obj.get("metadata") or {}).get("resourceVersion") or version
                    self._seen(obj, gone=event.get("type") == "DELETED")
                    self._report()
                    if self.done() or self.clock() >= deadline:
                        break
            except Exception as exc:
                if getattr(exc, "status", None) == 410:
                    version = None
                    continue
                raise
            finally:
                stream.stop()
        return False

    def follow(self):
        """Wait until every pod finished or the timeout; True when it timed out."""
        deadline = self.start + self.cfg["timeout"]
        try:
            timed_out = self.watch(deadline)
        except Exception as exc:  # a proxy in between may not pass watches: poll instead
            if getattr(exc, "status", None) in (401, 403):
                raise
            self.progress(
                "watch unavailable ({0}); polling every {1}s".format(
                    _one_line(to_text(exc), 120), self.cfg["poll_interval"]
                )
            )
            timed_out = self.poll(deadline)
        self._report(force=True)
        return timed_out

    def logs(self):
        """{pod: log text} of the finished pods (None where the log could not be read)."""
        out = {}
        for name, future in self.futures.items():
            try:
                out[name] = future.result()
            except Exception:  # the verdict falls back to the termination message
                out[name] = None
        return out

    # -- cleanup
    def cleanup(self):
        """Delete every pod of the run that is still there; wait until none is listed. Returns leftovers."""
        try:
            for future in self.futures.values():
                try:
                    future.result()
                except Exception:  # a failed delete is retried below
                    pass
            with self.lock:
                pending = [n for n in self.created if n not in self.deleted]
            list(self.pool.map(self._delete, pending))
            left = [p["metadata"]["name"] for p in _list(self.client, self.pod_api, self.namespace, self.selector)]
            if left:
                body = {
                    "apiVersion": "v1",
                    "kind": "DeleteOptions",
                    "gracePeriodSeconds": 0,
                    "propagationPolicy": "Background",
                }
                self.client.delete(self.pod_api, namespace=self.namespace, label_selector=self.selector, body=body)
            deadline = self.clock() + 30
            while left and self.clock() < deadline:
                self.sleep(0.2)
                left = [p["metadata"]["name"] for p in _list(self.client, self.pod_api, self.namespace, self.selector)]
            if not left:
                self.progress("validation pods deleted")
            return left
        finally:
            self.pool.shutdown(wait=True)


def run(module, client, svc):
    """gpu_validate: validate, read, (create pods, poll, read logs, delete), report."""
    cfg = validate_params(module.params)
    progress = Progress(module)
    started_wall = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.monotonic()
    nodes = select_nodes(cfg, client, svc)
    _check_namespaces(cfg, client, svc)
    pod_api = svc.find_resource("Pod", "v1", fail=True)
    names = [n["metadata"]["name"] for n in nodes]
    results = dict((name, {NODE_CHECK: check_node_ready(node)}) for name, node in zip(names, nodes))
    expected = dict((n["metadata"]["name"], expected_gpus(n, cfg["expected_gpus"])[0]) for n in nodes)
    progress("validating {0} GPU node(s): {1}".format(len(nodes), ", ".join(cfg["checks"])))

    # Read-only checks first: everything is read before the first write.
    plugin_pods = (
        _list(client, pod_api, cfg["driver_namespace"], cfg["device_plugin_selector"], "device_plugin_selector")
        if "allocatable" in cfg["checks"] and cfg["device_plugin_selector"]
        else []
    )
    driver_pods = (
        _list(client, pod_api, cfg["driver_namespace"], cfg["driver_selector"], "driver_selector")
        if "driver" in cfg["checks"]
        else []
    )
    exporter_pods = (
        _list(client, pod_api, cfg["metrics_namespace"], cfg["metrics_selector"], "metrics_selector")
        if "metrics" in cfg["checks"] and cfg["metrics_via"] == "pod"
        else []
    )
    core = _core(client)
    if "driver" in cfg["checks"]:
        failing = [p for n in names for p in pods_on(driver_pods, n) if not pod_is_ready(p)]

        def driver_log(pod):
            crashed = any(
                (cs.get("restartCount") or 0) > 0 for cs in (pod.get("status") or {}).get("containerStatuses") or []
            )
            try:
                return _read_log(core, pod["metadata"]["name"], pod["metadata"]["namespace"], tail=5, previous=crashed)
            except Exception:
                return _read_log(core, pod["metadata"]["name"], pod["metadata"]["namespace"], tail=5)

        logs = dict(
            (p["metadata"]["name"], text) for p, text, exc in _parallel(cfg, driver_log, failing) if exc is None
        )
        for name in names:
            results[name]["driver"] = check_driver(pods_on(driver_pods, name), logs)
    for name, node in zip(names, nodes):
        if "allocatable" in cfg["checks"]:
            results[name]["allocatable"] = check_allocatable(
                node, cfg["expected_gpus"], pods_on(plugin_pods, name), cfg["device_plugin_selector"]
            )

    workloads = [c for c in cfg["checks"] if c in WORKLOAD_CHECKS]
    bodies, owner = [], {}
    cfg["run"] = run_id() if workloads and not module.check_mode else None
    for name, node in zip(names, nodes):
        for check in workloads:
            reason = None
            if module.check_mode:
                results[name][check] = {"status": SKIP, "message": "not run in check mode (it creates pods)"}
                continue
            if allocatable_gpus(node) < 1:
                reason = "not run: the node advertises no allocatable {0}, the pod could not be scheduled".format(
                    GPU_RESOURCE
                )
            elif (node.get("spec") or {}).get("unschedulable") and cfg["pin"] == "affinity":
                reason = "not run: the node is cordoned"
            else:
                taints = untolerated_taints(node, cfg["tolerations"])
                if taints:
                    reason = "not run: taint {0} is not tolerated; add it to tolerations".format(
                        ", ".join(taint_text(t) for t in taints)
                    )
            if reason:
                results[name][check] = {"status": FAIL, "message": "{0} {1}".format(check, reason)}
                continue
            body = render_pod(check, name, cfg, cfg["run"])
            bodies.append(body)
            owner[body["metadata"]["name"]] = (name, check)

    metrics_future = None
    pool = None
    pods_run = None
    timings = {}
    leftovers = []
    try:
        if "metrics" in cfg["checks"]:
            # Metrics are read while the pods run: the slowest part sets the pace.
            pool = ThreadPoolExecutor(max_workers=1)
            metrics_future = pool.submit(_metrics_for, cfg, client, nodes, exporter_pods, expected)
        if bodies:
            progress("creating {0} validation pod(s)".format(len(bodies)))
            pods_run = PodRun(cfg, client, pod_api, core, progress)
            timings["pods_start"] = round(time.monotonic() - t0, 3)
            pods_run.create(bodies)
            timings["pods_created"] = round(time.monotonic() - t0, 3)
            for pod_name_, error in pods_run.errors.items():
                name, check = owner[pod_name_]
                results[name][check] = {
                    "status": FAIL,
                    "message": "{0} pod could not be created: {1}".format(check, error),
                }
            if pods_run.created:
                timed_out = pods_run.follow()
                timings["pods_finished"] = round(time.monotonic() - t0, 3)
                logs = pods_run.logs()
                for pod_name_ in pods_run.created:
                    name, check = owner[pod_name_]
                    res = check_workload(
                        check,
                        pods_run.pods.get(pod_name_),
                        logs.get(pod_name_),
                        timed_out and pod_name_ not in pods_run.finished,
                        cfg["timeout"],
                        cfg["driver_version"],
                    )
                    res["pod"] = pod_name_
                    res["duration"] = pods_run.finished.get(pod_name_)
                    results[name][check] = res
        if metrics_future is not None:
            for name, res in metrics_future.result().items():
                results[name]["metrics"] = res
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
        if pods_run is not None:
            try:
                leftovers = pods_run.cleanup()
            except Exception as exc:  # never hide the real error; report what is left
                leftovers = ["(cleanup failed: {0})".format(_one_line(to_text(exc), 200))]
                module.warn(
                    "gpu_validate could not delete its pods (label {0}={1}): {2}".format(
                        RUN_LABEL, cfg["run"], traceback.format_exc(limit=1)
                    )
                )

    reports = [node_report(node, results[name], cfg["checks"]) for name, node in zip(names, nodes)]
    report = build_report(
        reports,
        cfg["checks"],
        started_wall,
        round(time.monotonic() - t0, 3),
        {
            "namespace": cfg["namespace"],
            "run": cfg.get("run"),
            "check_mode": bool(module.check_mode),
            "timings": timings,
        },
    )
    result = {
        "changed": False,
        "passed": report["summary"]["result"] == "passed",
        "summary": report["summary"],
        "nodes": report["nodes"],
        "failures": report["failures"],
        "progress": progress.events,
        "reports": {},
    }
    if leftovers:
        result["leftover_pods"] = leftovers
        module.warn("validation pods still present after cleanup: {0}".format(", ".join(leftovers)))
    if cfg["reports"]:
        if module.check_mode:
            result["reports"] = dict(
                (fmt, "{0} (not written in check mode)".format(p)) for fmt, p in cfg["reports"].items()
            )
        else:
            result["reports"] = write_reports(report, cfg["reports"])
    if not result["passed"] and cfg["fail_on_error"]:
        raise GpuopsError(failure_message(report), **dict((k, v) for k, v in result.items() if k != "changed"))
    return result
