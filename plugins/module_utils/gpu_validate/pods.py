# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate pods: render a validation pod, read the state of any pod (pure)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import random
import string

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.burnin import command as burnin_command
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    APP_NAME,
    CHECK_LABEL,
    COMPONENT_LABEL,
    GPU_RESOURCE,
    NODE_ANNOTATION,
    RUN_LABEL,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import condition_true, dig

# Container states that never recover by waiting (kubelet keeps backing off).
HOPELESS_WAITING = (
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "ErrImageNeverPull",
)
TRANSIENT_WAITING = (None, "ContainerCreating", "PodInitializing")


def one_line(text, limit=300):
    text = " ".join(to_text(text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def log_tail(text, lines=3):
    kept = [line for line in to_text(text or "").rstrip().splitlines() if line.strip()]
    return " / ".join(line.strip() for line in kept[-lines:])


def pods_on(pods, node_name):
    return [p for p in pods if dig(p, ("spec", "nodeName")) == node_name]


def pod_is_ready(pod):
    return condition_true(pod, "Ready")


def _statuses(pod):
    status = pod.get("status") or {}
    return list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])


def _waiting_text(cs):
    """'CrashLoopBackOff (restarts 5, last exit 1)' for a container that waits on a problem, else None."""
    waiting = (cs.get("state") or {}).get("waiting")
    if not waiting or waiting.get("reason") in TRANSIENT_WAITING:
        return None
    extra = []
    if cs.get("restartCount"):
        extra.append("restarts {0}".format(cs["restartCount"]))
    last = (cs.get("lastState") or {}).get("terminated") or {}
    if last.get("exitCode") is not None:
        extra.append("last exit {0}".format(last["exitCode"]))
    text = waiting["reason"]
    if extra:
        text += " ({0})".format(", ".join(extra))
    if waiting.get("message") and waiting["reason"] != "CrashLoopBackOff":
        text += ": " + one_line(waiting["message"])
    return text


def _container_problem(statuses):
    for cs in statuses:
        text = _waiting_text(cs)
        if text:
            return text
        term = (cs.get("state") or {}).get("terminated") or {}
        if term.get("exitCode"):
            return "{0} (exit {1})".format(term.get("reason") or "Terminated", term.get("exitCode"))
    return None


def _pending_text(pod, statuses):
    for cond in dig(pod, ("status", "conditions")) or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return "Pending: {0}".format(one_line(cond.get("message") or cond.get("reason") or "not scheduled"))
    for cs in statuses:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            return "Pending: {0}".format(waiting["reason"])
    return "Pending"


def pod_state(pod):
    """A short human state: 'Ready', 'CrashLoopBackOff (restarts 5, last exit 1)', 'Pending: <why>'."""
    if dig(pod, ("metadata", "deletionTimestamp")):
        return "Terminating"
    if pod_is_ready(pod):
        return "Ready"
    statuses = _statuses(pod)
    problem = _container_problem(statuses)
    if problem:
        return problem
    phase = dig(pod, ("status", "phase")) or "Pending"
    if phase == "Pending":
        return _pending_text(pod, statuses)
    if phase == "Running":
        return "Running, not Ready"
    return phase


def pod_finished(pod):
    """True when waiting longer cannot change the verdict."""
    if dig(pod, ("status", "phase")) in ("Succeeded", "Failed"):
        return True
    return any(
        ((cs.get("state") or {}).get("waiting") or {}).get("reason") in HOPELESS_WAITING for cs in _statuses(pod)
    )


def failed_reason(pod):
    status = pod.get("status") or {}
    if status.get("reason"):
        return "{0}: {1}".format(status["reason"], one_line(status.get("message") or ""))
    for cs in status.get("containerStatuses") or []:
        term = (cs.get("state") or {}).get("terminated") or {}
        if term:
            return "{0}, exit {1}".format(term.get("reason") or "Error", term.get("exitCode"))
    return "Failed"


def pod_log_text(pod, log):
    """The container output: the pods/log text, else the termination message."""
    if log and to_text(log).strip():
        return to_text(log)
    for cs in dig(pod, ("status", "containerStatuses")) or []:
        term = (cs.get("state") or {}).get("terminated") or {}
        if term.get("message"):
            return to_text(term["message"])
    return ""


def component_state(pods, what):
    """'device-plugin pod CrashLoopBackOff' or 'no device-plugin pod on the node'."""
    if not pods:
        return "no {0} pod on the node".format(what)
    return "; ".join("{0} pod {1}".format(what, pod_state(p)) for p in pods)


def run_id(rand=None):
    rand = rand or random.SystemRandom()
    return "".join(rand.choice(string.ascii_lowercase + string.digits) for _i in range(6))


def pod_name(check, node_name, run):
    digest = hashlib.sha256(to_text(node_name).encode("utf-8")).hexdigest()[:10]
    return "gpuops-{0}-{1}-{2}".format(CONTAINER_NAMES[check], digest, run)


# Each workload check's container: its name and the image option it runs.
CONTAINER_NAMES = {"vectoradd": "vectoradd", "nvidia_smi": "nvidia-smi", "burnin": "dcgm-diag"}
IMAGE_OPTIONS = {"vectoradd": "vectoradd_image", "nvidia_smi": "nvidia_smi_image", "burnin": "burnin_image"}


def _container(check, cfg, resource, count=1):
    container = {
        "name": CONTAINER_NAMES[check],
        "image": cfg[IMAGE_OPTIONS[check]],
        "resources": {"limits": {resource: count}, "requests": {resource: count}},
        "env": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}],
        # No readOnlyRootFilesystem: the CDI createContainer hooks (nvidia-cdi-hook update-ldcache) write
        # /etc/ld.so.cache into the container's root filesystem (kserve/kserve#5711); the GPU Operator's
        # workload validation container does not set it either (validator/manifests/*-workload-validation.yaml).
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
        },
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if check == "nvidia_smi":
        container["command"] = ["nvidia-smi"]
    if check == "burnin":
        container["command"] = burnin_command(cfg["burnin_level"], cfg["burnin_duration"])
    return container


def _pin(spec, node_name, pin):
    if pin == "nodeName":
        spec["nodeName"] = node_name
        return
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        }
    }


def render_pod(check, node_name, cfg, run, resource=GPU_RESOURCE, count=1):
    """One validation pod: pinned to the node, one GPU, restricted security context.

    Pinning with a required node affinity on metadata.name (``pin: affinity``,
    how DaemonSet pods are placed) keeps the scheduler in the loop, so a node that
    does not advertise a free nvidia.com/gpu leaves the pod Pending with the
    scheduler's reason instead of running it anyway; ``pin: nodeName`` bypasses
    the scheduler (kubelet admission still checks the resource). ``resource``
    is what the node advertises: ``nvidia.com/gpu``, ``nvidia.com/gpu.shared``
    (time-slicing, renamed) or a MIG device ``nvidia.com/mig-<profile>``; ``count`` of it (the burn-in takes every
    GPU of the node).
    """
    spec = {
        "restartPolicy": "Never",
        "containers": [_container(check, cfg, resource, count)],
        "tolerations": copy.deepcopy(cfg["tolerations"]),
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 5,
        # A safety net: the kubelet stops the pod even if cleanup never happens.
        "activeDeadlineSeconds": int(cfg["wait_timeout"]) + 120,
    }
    if cfg.get("run_as_user"):
        spec["securityContext"]["runAsUser"] = cfg["run_as_user"]
    _pin(spec, node_name, cfg["pin"])
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
