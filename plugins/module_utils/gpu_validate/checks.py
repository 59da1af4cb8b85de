# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate verdicts (pure): node readiness, allocatable GPUs, driver pods, workload pods.

Each check returns ``{"status": pass|fail|skipped|unreachable, "message": ...}``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    FAIL,
    GFD_COUNT,
    GFD_REPLICAS,
    GPU_RESOURCE,
    PASS,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import (
    component_state,
    failed_reason,
    log_tail,
    pod_is_ready,
    pod_log_text,
    pod_state,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig, node_ready


def to_int(value, default=None):
    try:
        return int(to_text(value))
    except (TypeError, ValueError):
        return default


def node_labels(node):
    return dig(node, ("metadata", "labels")) or {}


def allocatable_gpus(node):
    value = (dig(node, ("status", "allocatable")) or {}).get(GPU_RESOURCE)
    return to_int(value, 0) if value is not None else 0


def expected_gpus(node, override=None):
    """(expected count or None, where it came from).

    GFD's ``nvidia.com/gpu.count`` times ``nvidia.com/gpu.replicas`` (time-slicing
    advertises each GPU that many times); None means "at least one".
    """
    if override:
        return override, "expected_gpus"
    labels = node_labels(node)
    count = to_int(labels.get(GFD_COUNT))
    if count is None:
        return None, None
    replicas = to_int(labels.get(GFD_REPLICAS), 1) or 1
    if replicas > 1:
        return count * replicas, "{0} x {1}".format(GFD_COUNT, GFD_REPLICAS)
    return count, GFD_COUNT


def check_node_ready(node):
    ready, why = node_ready(node)
    if ready:
        return {"status": PASS, "message": "Ready"}
    return {"status": FAIL, "message": why}


def untolerated_taints(node, tolerations):
    """NoSchedule/NoExecute taints of the node that the tolerations do not cover."""
    out = []
    for taint in dig(node, ("spec", "taints")) or []:
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
    names = [p["metadata"]["name"] for p in pods]
    ready = [p for p in pods if pod_is_ready(p)]
    if ready:
        return {"status": PASS, "message": "driver pod {0} Ready".format(ready[0]["metadata"]["name"]), "pods": names}
    parts = []
    for pod in pods:
        text = "driver pod {0} {1}".format(pod["metadata"]["name"], pod_state(pod))
        tail = (logs or {}).get(pod["metadata"]["name"])
        if tail:
            text += ": " + log_tail(tail, 2)
        parts.append(text)
    return {"status": FAIL, "message": "; ".join(parts), "pods": names}


def _no_output(what, text):
    return what + (": " + log_tail(text) if text.strip() else " (empty log)")


def judge_output(check, text, driver_version=None):
    """(ok, detail) for the output of a Succeeded validation container."""
    if check == "vectoradd":
        if "Test PASSED" in text:
            return True, "Test PASSED"
        return False, _no_output("the log has no 'Test PASSED'", text)
    match = re.search(r"Driver Version:\s*([0-9.]+)", text)
    if "NVIDIA-SMI" not in text or not match:
        return False, _no_output("no nvidia-smi table in the log", text)
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
    state = pod_state(pod)
    if phase == "Failed":
        message = "{0} pod Failed ({1})".format(label, state if state != "Failed" else failed_reason(pod))
        if text.strip():
            message += ": " + log_tail(text)
        return {"status": FAIL, "message": message}
    if timed_out:
        if not state.startswith(("Pending", "Running")):
            state = "{0}: {1}".format(phase, state)
        return {"status": FAIL, "message": "{0} pod still {1} after {2}s".format(label, state, timeout)}
    return {"status": FAIL, "message": "{0} pod {1}".format(label, state)}
