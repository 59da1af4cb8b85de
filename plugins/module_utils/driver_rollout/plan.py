# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The driver rollout's decisions, as pure functions: which GPU nodes run an outdated driver, in which order and
waves they are taken out, which pods leave first, and the node patches of each stage.

The model is NVIDIA's driver upgrade controller (k8s-operator-libs pkg/upgrade: cordon, wait for or delete the GPU
pods, restart the driver pod, validate, uncordon; the node's state in a label, its initial schedulability in an
annotation), without a controller: one run walks the nodes, and the label lets the next run resume where it
stopped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.gpuops.cluster.plugins.module_utils.daemonsets import (
    affinity_matches,
    current_revision,
    daemonset_wants,
    owner_daemonset,
    pod_revision,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig

# The node's stage (label) and what the rollout keeps about it (annotations).
STATE_LABEL = "gpuops.cluster/driver-upgrade"
DRAIN, RELOAD, VALIDATE, FAILED = "drain", "reload", "validate", "failed"
STAGES = (DRAIN, RELOAD, VALIDATE, FAILED)
# The operands (toolkit, device plugin, GFD, DCGM exporter) carry "STATE_LABEL NotIn [reload]" in their node
# affinity: the DaemonSet controller takes them off a node while its driver is replaced, as the GPU Operator's
# driver manager does with its nvidia.com/gpu.deploy.* labels (they hold the device: "driver is in use").
PAUSED = RELOAD
ANN_UNSCHEDULABLE = "gpuops.cluster/driver-upgrade.initially-unschedulable"
ANN_FAILURE = "gpuops.cluster/driver-upgrade.failure"
# Extended resources of NVIDIA's device plugin: a pod that requests one holds a GPU (k8s-operator-libs'
# default pod deletion filter: resources named nvidia.com/gpu* and nvidia.com/mig-*).
GPU_RESOURCE_RE = re.compile(r"^nvidia\.com/(gpu|mig-)")
TERMINAL = ("Succeeded", "Failed")


def parse_max_unavailable(value, total):
    """``1``, ``"2"`` or ``"25%"`` (of ``total`` GPU nodes, rounded up, at least 1) -> a number of nodes."""
    text = str(value).strip()
    match = re.match(r"^([0-9]+)(%?)$", text)
    if not match or int(match.group(1)) < 1 or (match.group(2) and int(match.group(1)) > 100):
        raise GpuopsError(
            "{0!r} is neither a number of nodes (1 or more) nor a percentage of the GPU nodes (1%-100%), "
            "e.g. 1 or '25%'".format(value),
            param="max_unavailable",
        )
    if match.group(2):
        return max(1, int(math.ceil(total * int(match.group(1)) / 100.0)))
    return int(match.group(1))


def gpu_requests(pod):
    """The NVIDIA resources the pod's containers (and init containers) request or limit."""
    spec = pod.get("spec") or {}
    names = set()
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = container.get("resources") or {}
        for part in ("requests", "limits"):
            names.update(k for k in (res.get(part) or {}) if GPU_RESOURCE_RE.match(k))
    return sorted(names)


def gpu_pods(pods):
    """The pods to evict before a driver reload: running (not terminal) pods that hold an NVIDIA resource and are not
    DaemonSet pods (a DaemonSet would put them back; its operands leave through the pause label)."""
    return [
        p for p in pods if dig(p, ("status", "phase")) not in TERMINAL and gpu_requests(p) and not owner_daemonset(p)
    ]


def leaves_when_paused(ds, node):
    """Whether the DaemonSet's pod leaves the node once it carries the pause label (its affinity excludes it)."""
    labels = dict(dig(node, ("metadata", "labels")) or {})
    labels[STATE_LABEL] = PAUSED
    return not affinity_matches(dig(ds, ("spec", "template", "spec")) or {}, labels)


# The owner label of the collection's operand DaemonSets (their namespaces may differ from the driver's).
OWNER_LABEL = "gpuops.cluster/owner"
OPERAND_OWNERS = ("container_toolkit", "device_plugin", "gpu_feature_discovery", "monitoring")


def gpu_clients(daemonsets, namespace, driver_names):
    """The DaemonSets whose pods must leave a node while its driver is replaced: every one in the driver's namespace
    but the driver's own, the collection's operands wherever they run, and any whose pods request an NVIDIA
    resource."""
    out = []
    for ds in daemonsets:
        meta = ds.get("metadata") or {}
        if meta.get("namespace") == namespace and meta.get("name") in driver_names:
            continue
        owner = (meta.get("labels") or {}).get(OWNER_LABEL)
        if (
            meta.get("namespace") == namespace
            or owner in OPERAND_OWNERS
            or gpu_requests(dig(ds, ("spec", "template")) or {})
        ):
            out.append(ds)
    return out


def ds_key(obj):
    return "{0}/{1}".format(dig(obj, ("metadata", "namespace")), dig(obj, ("metadata", "name")))


def pod_owner_key(pod):
    owner = owner_daemonset(pod)
    return "{0}/{1}".format(dig(pod, ("metadata", "namespace")), owner) if owner else None


def unpaused_operands(clients, nodes):
    """'<namespace>/<name>' of the GPU-client DaemonSets running on the nodes that would not leave a paused node."""
    out = set()
    for ds in clients:
        for node in nodes:
            if daemonset_wants(ds, node)[0] and not leaves_when_paused(ds, node):
                out.add(ds_key(ds))
    return sorted(out)


def stage_of(node):
    return (dig(node, ("metadata", "labels")) or {}).get(STATE_LABEL)


def image_of(pod):
    containers = dig(pod, ("spec", "containers")) or [{}]
    return containers[0].get("image")


def pod_ready(pod):
    if dig(pod, ("metadata", "deletionTimestamp")):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in dig(pod, ("status", "conditions")) or [])


def driver_states(nodes, driver_sets, revisions, driver_pods, assume_outdated=False):
    """Per GPU node: its driver DaemonSet, that DaemonSet's current revision, the node's driver pod and whether it
    runs the current revision (``assume_outdated``: none does, as after a template change check mode did not
    write). Nodes no driver DaemonSet selects are left out (nothing to roll there)."""
    current = dict((ds["metadata"]["name"], current_revision(ds, revisions)) for ds in driver_sets)
    pods_by = {}
    for pod in driver_pods:
        if dig(pod, ("metadata", "deletionTimestamp")):
            continue
        pods_by.setdefault((owner_daemonset(pod), dig(pod, ("spec", "nodeName"))), []).append(pod)
    out = []
    for node in nodes:
        name = node["metadata"]["name"]
        ds = next((d for d in driver_sets if daemonset_wants(d, node)[0]), None)
        if ds is None:
            continue
        ds_name = ds["metadata"]["name"]
        pods = sorted(pods_by.get((ds_name, name), []), key=lambda p: p["metadata"].get("creationTimestamp") or "")
        pod = pods[-1] if pods else None
        out.append(
            {
                "node": name,
                "daemonset": ds_name,
                "revision": current[ds_name],
                "pod": pod,
                "current": bool(pod) and not assume_outdated and pod_revision(pod) == current[ds_name],
                "image": image_of(pod) if pod else None,
                "target_image": image_of(ds["spec"]["template"]),
                "stage": stage_of(node),
                "reachable": _reachable(node),
                # Whether the node advertised GPUs before its roll: only then is it waited for (and validated with
                # workloads) afterwards; a driver state run alone, before the device plugin's, has none.
                "had_gpus": has_gpus(node),
                "unschedulable": bool(dig(node, ("spec", "unschedulable"))),
                # Out of service after its roll too: cordoned before the rollout took it (kept in an annotation).
                "stays_cordoned": (
                    (dig(node, ("metadata", "annotations")) or {}).get(ANN_UNSCHEDULABLE) == "true"
                    if stage_of(node)
                    else bool(dig(node, ("spec", "unschedulable")))
                ),
            }
        )
    return out


def has_gpus(node):
    alloc = dig(node, ("status", "allocatable")) or {}
    return any(GPU_RESOURCE_RE.match(k) and str(v) not in ("0", "") for k, v in alloc.items())


def _reachable(node):
    for cond in dig(node, ("status", "conditions")) or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def needs_roll(state):
    """A node is rolled when its driver pod runs an older revision, or an earlier run left it mid-way or failed."""
    return state["stage"] in STAGES or (state["pod"] is not None and not state["current"])


def order(states):
    """Nodes to roll, in order: an earlier run's (resume), then those already cordoned (they serve nothing), then
    by name."""
    todo = [s for s in states if needs_roll(s)]
    return sorted(todo, key=lambda s: (0 if s["stage"] else 1 if s["unschedulable"] else 2, s["node"]))


def plan_waves(states, todo, canary, max_unavailable):
    """(waves, slots, down). The nodes already out of service (an earlier run's, or cordoned before) go first,
    together: rolling them takes nothing more out. Then ``canary`` fresh nodes alone, then at most ``slots`` at a
    time, where ``slots`` is max_unavailable less the GPU nodes that stay out: NotReady or cordoned ones the
    rollout does not take, and those it takes that were cordoned before (they stay cordoned after their roll)."""
    planned = set(s["node"] for s in todo)
    down = sorted(s["node"] for s in states if s["node"] not in planned and (not s["reachable"] or s["unschedulable"]))
    down += sorted(s["node"] for s in todo if not s["reachable"])
    reachable = [s for s in todo if s["reachable"]]
    out_now = [s for s in reachable if s["stage"] or s["unschedulable"]]
    fresh = [s for s in reachable if not (s["stage"] or s["unschedulable"])]
    slots = max_unavailable - len(down) - len([s for s in out_now if s["stays_cordoned"]])
    waves = [out_now] if out_now else []
    if fresh and slots >= 1:
        first = min(canary, slots) if canary else slots
        waves.append(fresh[:first])
        rest = fresh[first:]
        while rest:
            waves.append(rest[:slots])
            rest = rest[slots:]
    return waves, slots, down


def start_stage(state):
    """Where a node's roll starts. An earlier run's progress is kept: a node whose driver already runs the current
    revision and is ready goes straight to validation; one left in reload stays there (its operands stay off)."""
    pod = state["pod"]
    driver_ok = pod is not None and state["current"] and pod_ready(pod)
    if state["stage"] in (RELOAD, VALIDATE, FAILED) and driver_ok:
        return VALIDATE
    if state["stage"] in (RELOAD, VALIDATE):
        return RELOAD
    return DRAIN


def restarts(pod):
    return max([c.get("restartCount") or 0 for c in dig(pod, ("status", "containerStatuses")) or []] or [0])


def replace_driver(state):
    """Whether to delete the node's driver pod: an older revision, or a current one that crash-loops (it restarts
    clean once no client holds the device); never a current one that is still loading."""
    pod = state["pod"]
    if pod is None or dig(pod, ("metadata", "deletionTimestamp")):
        return False
    if not state["current"]:
        return True
    return not pod_ready(pod) and restarts(pod) > 0


def mark_patch(node, stage, failure=None):
    """Merge patch: the node cordoned, in ``stage``; its schedulability before the first stage kept."""
    labels = dig(node, ("metadata", "labels")) or {}
    annotations = {}
    if STATE_LABEL not in labels:
        # The node's schedulability before its first stage (an annotation left from an older roll is replaced).
        annotations[ANN_UNSCHEDULABLE] = "true" if dig(node, ("spec", "unschedulable")) else None
    if failure is not None:
        annotations[ANN_FAILURE] = failure[:1000]
    elif (dig(node, ("metadata", "annotations")) or {}).get(ANN_FAILURE):
        annotations[ANN_FAILURE] = None
    patch = {"metadata": {"labels": {STATE_LABEL: stage}}, "spec": {"unschedulable": True}}
    if annotations:
        patch["metadata"]["annotations"] = annotations
    return _minimal(node, patch)


def finish_patch(node):
    """Merge patch: the stage label and annotations gone, the node as schedulable as it was before."""
    was = (dig(node, ("metadata", "annotations")) or {}).get(ANN_UNSCHEDULABLE) == "true"
    patch = {
        "metadata": {
            "labels": {STATE_LABEL: None},
            "annotations": {ANN_UNSCHEDULABLE: None, ANN_FAILURE: None},
        },
        "spec": {"unschedulable": True if was else None},
    }
    return _minimal(node, patch)


def _minimal(node, patch):
    """The patch without the fields the node already has (None: already absent); None when nothing is left."""
    out = {}
    for section, fields in patch.items():
        for key, value in fields.items():
            if isinstance(value, dict):
                have = dig(node, (section, key)) or {}
                keep = dict((k, v) for k, v in value.items() if have.get(k) != v and not (v is None and k not in have))
                if keep:
                    out.setdefault(section, {})[key] = keep
            else:
                have = dig(node, (section, key))
                if have != value and not (value is None and not have):
                    out.setdefault(section, {})[key] = value
    return out or None


def short_image(image):
    """The tag (or digest) of an image reference, what changes between driver versions."""
    if not image:
        return "-"
    last = image.rsplit("/", 1)[-1]
    return last.split("@", 1)[-1] if "@" in last else last.split(":", 1)[-1] if ":" in last else last


def table(rows):
    """A text table: node, result, stage, image before -> after, seconds."""
    header = ("node", "result", "driver before", "driver after", "seconds", "note")
    lines = [header]
    for r in rows:
        lines.append(
            (
                r["node"],
                r["result"],
                short_image(r.get("image_before")),
                short_image(r.get("image_after")),
                "-" if r.get("seconds") is None else "{0:.0f}".format(r["seconds"]),
                r.get("note") or "",
            )
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    return ["  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip() for line in lines]
