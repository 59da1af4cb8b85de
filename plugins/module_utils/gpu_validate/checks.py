# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate verdicts (pure): node readiness, allocatable GPUs, driver pods, workload pods.

Each check returns ``{"status": pass|fail|skipped|unreachable, "message": ...}``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import burnin
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import FAIL, GPU_RESOURCE, PASS
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.pods import (
    component_state,
    failed_reason,
    log_tail,
    pod_is_ready,
    pod_log_text,
    pod_state,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.resources import (
    allocatable,
    expectations,
    mig_strategy,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig, node_ready


def allocatable_gpus(node):
    """What the node advertises of its main GPU resource (nvidia.com/gpu, or gpu.shared when renamed)."""
    return allocatable(node, expectations(node)[0]["resource"])


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


def _judge_row(node, row):
    """(have, ok, what was expected) for one resource."""
    have = allocatable(node, row["resource"])
    if row["want"]:
        return have, have == row["want"], str(row["want"])
    if row["max"] is not None:
        return have, have <= row["max"], "at most {0}".format(row["max"])
    return have, have >= 1, "at least 1"


def _problems(judged, mixed):
    problems = []
    for row, have, ok, expected in judged:
        if not ok:
            text = "allocatable {0} {1}, expected {2}".format(row["resource"], have, expected)
            problems.append(text + (" ({0})".format(row["source"]) if row["source"] else ""))
    if mixed and not problems and not sum(have for _row, have, _ok, _exp in judged):
        problems.append("allocatable {0} 0 and no MIG device (MIG mixed)".format(GPU_RESOURCE))
    return problems


def check_allocatable(node, override=None, plugin_pods=None, plugin_selector=None):
    """The node advertises what GFD's labels promise, per resource (MIG mixed: one per profile)."""
    rows = expectations(node, override)
    judged = [(row,) + _judge_row(node, row) for row in rows]
    have_all = dict((row["resource"], have) for row, have, _ok, _exp in judged)
    main = rows[0]
    mixed = len(rows) > 1 or mig_strategy(node) == "mixed"
    result = {
        "allocatable": sum(have_all.values()) if mixed else have_all[main["resource"]],
        "expected": None if mixed else main["want"],
        "expected_from": "MIG mixed" if mixed else main["source"],
        "resources": have_all,
    }
    problems = _problems(judged, mixed)
    if not problems:
        parts = ", ".join("{0} {1}".format(row["resource"], have) for row, have, _ok, _exp in judged)
        result.update(status=PASS, message="allocatable {0}{1}".format(parts, " (MIG mixed)" if mixed else ""))
        return result
    message = "; ".join(problems)
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
    # R610 and newer print "KMD Version:" where older branches print "Driver Version:".
    match = re.search(r"(?:Driver|KMD) Version:\s*([0-9.]+)", text)
    if "NVIDIA-SMI" not in text or not match:
        return False, _no_output("no nvidia-smi table in the log", text)
    found = match.group(1)
    gpus = re.findall(r"^\|\s+\d+\s+(.+?)\s{2,}", text, re.M)
    detail = "driver {0}".format(found) + (", {0}".format(gpus[0].strip()) if gpus else "")
    if driver_version and not (found == driver_version or found.startswith(driver_version + ".")):
        return False, "nvidia-smi reports driver {0}, expected {1}".format(found, driver_version)
    return True, detail


def check_burnin(text, level):
    """The burn-in's verdict from dcgmi's JSON (also when it exited non-zero: 205/226 come with the full output)."""
    ok, message, gpus = burnin.judge(text, level)
    return {"status": PASS if ok else FAIL, "message": "burn-in: " + message, "gpus": gpus}


def check_workload(
    check, pod, log, timed_out=False, timeout=None, driver_version=None, burnin_level=None, log_error=None
):
    """Judge one validation pod: Succeeded with the expected output (the burn-in: finished with DCGM's JSON).

    ``log_error``: why the log could not be read; a verdict that fails on the termination message alone says it,
    since that message holds only the output's last lines."""
    label = {"vectoradd": "vectoradd", "nvidia_smi": "nvidia-smi", "burnin": "burn-in"}[check]
    if pod is None:
        return {"status": FAIL, "message": "{0} pod disappeared before it finished".format(label)}
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    text = pod_log_text(pod, log)
    unread = " (its log could not be read: {0}; judged on the termination message)".format(log_error)
    if check == "burnin" and (phase == "Succeeded" or (phase == "Failed" and "{" in text)):
        res = check_burnin(text, burnin_level or 2)
        if res["status"] == FAIL and log_error:
            res["message"] += unread
        return res
    if phase == "Succeeded":
        ok, detail = judge_output(check, text, driver_version)
        if ok:
            return {"status": PASS, "message": "{0}: {1}".format(label, detail)}
        return {
            "status": FAIL,
            "message": "{0} pod Succeeded but {1}{2}".format(label, detail, unread if log_error else ""),
        }
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
