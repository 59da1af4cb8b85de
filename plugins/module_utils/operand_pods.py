# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The state of a DaemonSet's pod on each node, in words a failure message can carry.

Pure functions (no API calls): the roles read the pods with ``k8s_info`` and
hand them to the ``operand_pod_states`` filter, which names, per node, the pod
and why it is not ready (``CrashLoopBackOff (restarts 3, last exit 1)``,
``PodInitializing``, ``ImagePullBackOff: Back-off pulling image ...``, or no pod
at all).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.kube import condition_true


def _pod_ready(pod):
    return condition_true(pod, "Ready")


def _container_state(status):
    """One container's state in words, or None when it is ready."""
    if status.get("ready"):
        return None
    state = status.get("state") or {}
    restarts = status.get("restartCount") or 0
    last = ((status.get("lastState") or {}).get("terminated")) or {}
    extra = []
    if restarts:
        extra.append("restarts %d" % restarts)
    if last.get("exitCode") is not None and restarts:
        extra.append("last exit %s" % last.get("exitCode"))
    suffix = " (%s)" % ", ".join(extra) if extra else ""
    if "waiting" in state:
        waiting = state["waiting"] or {}
        reason = waiting.get("reason") or "Waiting"
        message = waiting.get("message") or ""
        # The back-off message repeats the pod's name and uid: it says nothing the reason does not.
        if message and not message.startswith("back-off"):
            return "%s%s: %s" % (reason, suffix, message)
        return reason + suffix
    if "terminated" in state:
        term = state["terminated"] or {}
        return "Terminated %s (exit %s)%s" % (term.get("reason") or "", term.get("exitCode"), suffix)
    if "running" in state:
        return "Running, not ready" + suffix
    return "no container status yet"


# A node or pod its node lifecycle controller marked (``marked_by_node_controller``) is read again for this long
# before the verdict stands: the kubelet posts again within 10 s of reaching the API (nodeStatusUpdateFrequency,
# and the status manager's sync of the pods).
SETTLE_SECONDS = 30


def settling(pod):
    """True for a running pod whose containers are all ready but whose Ready condition is False.

    The node lifecycle controller marks a node's pods so when it saw no heartbeat from the node for its grace
    period (kubernetes pkg/controller/nodelifecycle, ``MarkPodsNotReady``), e.g. after an API server restart; the
    kubelet sets the condition back within its status sync (pkg/kubelet/status/status_manager.go,
    ``needsReconcile``, every 10 s) once it reaches the API again. Nothing is wrong on the node: it is worth
    waiting for, unlike a container that is not ready."""
    if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    status = pod.get("status") or {}
    containers = status.get("containerStatuses") or []
    return (
        status.get("phase") == "Running"
        and bool(containers)
        and all(c.get("ready") for c in containers)
        and not _pod_ready(pod)
    )


def marked_by_node_controller(node, pods=()):
    """True when the node lifecycle controller, not the kubelet, last said what is wrong: the node's Ready condition
    is Unknown (what it sets when the kubelet stopped posting status, reason NodeStatusUnknown), or the node is Ready
    and one of ``pods`` (the node's) is only ``settling``. After an API server restart both pass by themselves; a
    node that is really gone stays Unknown, and a node whose kubelet says NotReady (False) is not waited for."""
    ready = [
        c.get("status") for c in ((node or {}).get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"
    ]
    if ready == ["Unknown"]:
        return True
    return ready == ["True"] and any(settling(pod) for pod in pods or [])


def pod_state(pod):
    """(ready, words) for one pod."""
    if pod is None:
        return False, "no pod"
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return False, "Terminating"
    status = pod.get("status") or {}
    ready = _pod_ready(pod)
    if ready:
        return True, "Running, ready"
    words = []
    for cstatus in status.get("initContainerStatuses") or []:
        state = _container_state(cstatus)
        if state and not ((cstatus.get("state") or {}).get("terminated") or {}).get("exitCode") == 0:
            words.append("init %s: %s" % (cstatus.get("name"), state))
    for cstatus in status.get("containerStatuses") or []:
        state = _container_state(cstatus)
        if state:
            words.append(state)
    if not words and settling(pod):
        return False, "Running, its containers ready but the pod marked not ready (its node missed heartbeats)"
    if not words:
        phase = status.get("phase") or "Pending"
        reasons = [
            c.get("message") or c.get("reason")
            for c in status.get("conditions") or []
            if c.get("status") == "False" and (c.get("message") or c.get("reason"))
        ]
        words.append(phase + (": " + reasons[0] if reasons else ""))
    return False, "; ".join(words)


def operand_pod_states(pods, node_names):
    """Per node of ``node_names`` (in that order): the node, its pod (a ready one first, else the newest), whether
    it is ready, its state in words and its container names."""
    by_node = {}
    for pod in pods or []:
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            by_node.setdefault(node, []).append(pod)
    result = []
    for node in node_names or []:
        candidates = sorted(
            by_node.get(node, []),
            key=lambda p: (_pod_ready(p), (p.get("metadata") or {}).get("creationTimestamp") or ""),
            reverse=True,
        )
        pod = candidates[0] if candidates else None
        ready, words = pod_state(pod)
        result.append(
            {
                "node": node,
                "pod": (pod.get("metadata") or {}).get("name") if pod else None,
                "ready": ready,
                "settling": settling(pod),
                "state": words,
                "containers": [c.get("name") for c in ((pod or {}).get("spec") or {}).get("containers") or []],
            }
        )
    return result


def ready_endpoint_nodes(slices):
    """The nodes with a ready endpoint in a Service's EndpointSlices (discovery.k8s.io/v1), sorted."""
    nodes = set()
    for piece in slices or []:
        for endpoint in piece.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready") and endpoint.get("nodeName"):
                nodes.add(endpoint["nodeName"])
    return sorted(nodes)
