# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Time-to-GPU-ready: per GPU node, when each step of the enablement happened, read from the cluster.

The steps and where their time comes from (no anchor publishes this; every value is an API fact):

* ``machine_created``: the Machine's creationTimestamp (OpenShift; the Node's ``machine.openshift.io/machine``
  annotation names it);
* ``node_created``: the Node's creationTimestamp;
* ``node_ready``: the ``lastTransitionTime`` of the Node's Ready condition (a later reboot, e.g. a
  MachineConfig rollout, moves it: then it is reported after the labels and flagged);
* ``nfd_labelled``: the ``time`` of the managedFields entry that owns the NFD GPU label (the entry of its writer,
  ``nfd-master`` on a real cluster: nfd-master patches the Node without a field manager, so the API server names
  the entry after its User-Agent). That time moves with every later change of the labels its writer owns, and
  nfd-master also writes GFD's ``nvidia.com/*`` labels (through nfd-worker's features.d or a NodeFeature object),
  so once GFD has run the entry's time is GFD's, after the driver was Ready. Then the Ready of the node's
  nfd-worker pod stands in: nfd-worker sends its first report before it serves its health endpoint
  (node-feature-discovery pkg/nfd-worker/nfd-worker.go, Run) and nfd-master labels the node as it receives it,
  so the worker's Ready is the labelling to within a readiness probe period (the labels come after it only
  when nfd-master itself was not up yet). ``sources`` says which one a row used; when both are after the
  driver's Ready, the time is unknown;
* ``driver_ready``: the ``lastTransitionTime`` of the Ready condition of the driver pod on the node;
* ``toolkit_ready``: the same for the container toolkit pod;
* ``allocatable``: the same for the device plugin pod, counted only while the node advertises GPUs in
  ``status.allocatable`` (a node's managedFields time for its status moves with every kubelet heartbeat, so
  the plugin's Ready is the honest time the resource appeared);
* ``validated``: when ``gpu_validation`` last validated the node (its record).

Plus the wall time of each state of the run (start/end marks recorded by the playbook; the states the ledger skipped
in one mark, with no time of their own).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import NVIDIA_PCI_LABELS, is_gpu_node
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import condition, dig, name_of

STEPS = (
    "machine_created",
    "node_created",
    "node_ready",
    "nfd_labelled",
    "driver_ready",
    "toolkit_ready",
    "allocatable",
    "validated",
)
PHASES = (
    ("provision", "machine_created", "node_created"),
    ("boot", "node_created", "node_ready"),
    ("nfd", "node_ready", "nfd_labelled"),
    ("driver", "nfd_labelled", "driver_ready"),
    ("toolkit", "driver_ready", "toolkit_ready"),
    ("plugin", "toolkit_ready", "allocatable"),
    ("validate", "allocatable", "validated"),
)
MACHINE_ANNOTATION = "machine.openshift.io/machine"
COMPONENT_LABEL = "app.kubernetes.io/component"
# Pod component -> the step its Ready marks. A pod without the label is a driver pod (older callers).
POD_STEPS = {
    "nvidia-driver": "driver_ready",
    "nvidia-container-toolkit": "toolkit_ready",
    "nvidia-device-plugin": "allocatable",
}
# The GPU Operator labels its toolkit and device plugin pods ``app: <DaemonSet name>`` only (its driver pods also
# carry the component label): pod app -> step.
OPERATOR_APP_STEPS = {
    "nvidia-container-toolkit-daemonset": "toolkit_ready",
    "nvidia-device-plugin-daemonset": "allocatable",
}
GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu.shared")
# The nfd-worker pods, as the OpenShift NFD operator and upstream's kustomize deploy them (app=nfd-worker) and as
# upstream's Helm chart (also the GPU Operator's NFD) does: one label selector each.
NFD_WORKER_SELECTORS = ("app=nfd-worker", "app.kubernetes.io/name in (node-feature-discovery,nfd),role=worker")
NFD_WORKER_NAMES = ("node-feature-discovery", "nfd")
# What ``sources["nfd_labelled"]`` says.
FROM_MANAGED_FIELDS = "managedFields ({0})"
FROM_NFD_WORKER = "nfd-worker Ready"


def parse_time(value):
    """RFC 3339 as the API server writes it (``2026-11-23T18:20:01Z``, optional fraction) -> aware datetime."""
    if not value:
        return None
    text = str(value).replace("Z", "+00:00")
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        return None


def state_range(states, from_state=None, until_state=None):
    """The states from ``from_state`` to ``until_state`` included, in run order; ValueError names the variable."""
    states = list(states)
    for var, value in (("gpuops_from_state", from_state), ("gpuops_until_state", until_state)):
        if value and value not in states:
            raise ValueError(
                "{0}: '{1}' is not a state of this playbook; use one of: {2}.".format(var, value, ", ".join(states))
            )
    first = states.index(from_state) if from_state else 0
    last = states.index(until_state) if until_state else len(states) - 1
    if first > last:
        raise ValueError(
            "gpuops_from_state '{0}' comes after gpuops_until_state '{1}'; the order is: {2}.".format(
                from_state, until_state, ", ".join(states)
            )
        )
    return states[first : last + 1]


def label_entry(node):
    """(time, manager) of the managedFields entry that owns the NFD GPU label (the latest such write), or (None, None).

    The entry whose ``fieldsV1`` holds ``f:metadata`` / ``f:labels`` / ``f:<label>`` for any form of the label
    (``gpu_nodes.NVIDIA_PCI_LABELS``).
    """
    keys = set("f:" + k for k in NVIDIA_PCI_LABELS)
    best, manager = None, None
    for entry in dig(node, ("metadata", "managedFields")) or []:
        labels = dig(entry, ("fieldsV1", "f:metadata", "f:labels")) or {}
        if keys.intersection(labels):
            when = parse_time(entry.get("time"))
            if when and (best is None or when > best):
                best, manager = when, entry.get("manager") or "?"
    return best, manager


def label_time(node):
    """When the node's NFD GPU label was last written, from managedFields (None when no entry owns it)."""
    return label_entry(node)[0]


def is_nfd_worker(pod):
    """True for an nfd-worker pod (``NFD_WORKER_SELECTORS``)."""
    labels = dig(pod, ("metadata", "labels")) or {}
    if labels.get("app") == "nfd-worker":
        return True
    return labels.get("app.kubernetes.io/name") in NFD_WORKER_NAMES and labels.get("role") == "worker"


def ready_time(obj):
    cond = condition(obj, "Ready")
    if not cond or cond.get("status") != "True":
        return None
    return parse_time(cond.get("lastTransitionTime"))


def advertises_gpus(node):
    allocatable = dig(node, ("status", "allocatable")) or {}
    for key, value in allocatable.items():
        if key in GPU_RESOURCES or key.startswith("nvidia.com/mig-"):
            try:
                if int(str(value)) > 0:
                    return True
            except ValueError:
                continue
    return False


def stack_ready_times(node, pods):
    """{step: [Ready times]} of the GPU stack pods on the node (nfd-worker pods are not stack pods)."""
    ready = {}
    for pod in pods:
        if is_nfd_worker(pod):
            continue
        labels = dig(pod, ("metadata", "labels")) or {}
        step = OPERATOR_APP_STEPS.get(labels.get("app")) or POD_STEPS.get(
            labels.get(COMPONENT_LABEL) or "nvidia-driver"
        )
        when = ready_time(pod)
        if step and when:
            ready.setdefault(step, []).append(when)
    if not advertises_gpus(node):
        ready.pop("allocatable", None)
    return ready


def first_stack_step(ready):
    """The earliest Ready of the driver, toolkit or device plugin (what the NFD label must precede), or None."""
    times = [min(ready[s]) for s in ("driver_ready", "toolkit_ready", "allocatable") if ready.get(s)]
    return min(times) if times else None


def needs_nfd_worker(node, pods):
    """True for a GPU node whose labelling time managedFields cannot give (none, or after the stack's first Ready).

    A time after the first Ready of the GPU stack says when the label's writer last changed its labels (GFD's,
    written by nfd-master too), not when the node was labelled.
    """
    if not is_gpu_node(dig(node, ("metadata", "labels"))):
        return False
    when = label_time(node)
    limit = first_stack_step(stack_ready_times(node, pods))
    return not when or bool(limit and when > limit)


def nfd_labelled(node, pods, limit):
    """(time, source) of the NFD GPU label: its managedFields entry, else the node's nfd-worker Ready; or (None, None).

    ``limit``: the first Ready of the GPU stack on the node; a candidate after it is not the labelling.
    """
    when, manager = label_entry(node)
    if when and not (limit and when > limit):
        return when, FROM_MANAGED_FIELDS.format(manager)
    if not is_gpu_node(dig(node, ("metadata", "labels"))):
        return None, None
    workers = [t for t in (ready_time(p) for p in pods if is_nfd_worker(p)) if t]
    if workers and not (limit and min(workers) > limit):
        return min(workers), FROM_NFD_WORKER
    return None, None


def node_steps(node, machines_by_name, pods, validated=None, sources=None):
    """{step: aware datetime or None}; ``sources`` (a dict), when given, gets where ``nfd_labelled`` came from."""
    machine_ref = dig(node, ("metadata", "annotations", MACHINE_ANNOTATION)) or ""
    machine = machines_by_name.get(machine_ref.split("/")[-1]) if machine_ref else None
    ready = stack_ready_times(node, pods)
    labelled, source = nfd_labelled(node, pods, first_stack_step(ready))
    if sources is not None:
        sources["nfd_labelled"] = source
    steps = {
        "machine_created": parse_time(dig(machine, ("metadata", "creationTimestamp"))) if machine else None,
        "node_created": parse_time(dig(node, ("metadata", "creationTimestamp"))),
        "node_ready": ready_time(node),
        "nfd_labelled": labelled,
        "validated": parse_time((validated or {}).get(name_of(node))),
    }
    for step in POD_STEPS.values():
        steps[step] = max(ready[step]) if ready.get(step) else None
    return steps


def phase_seconds(steps):
    """Seconds per phase; None when a step is missing. A negative span (a later reboot) is kept, and flagged.

    ``total``: from the first known step to the last step reached in order (driver Ready at least).
    """
    out = {}
    for phase, start, end in PHASES:
        a, b = steps.get(start), steps.get(end)
        out[phase] = round((b - a).total_seconds(), 1) if a and b else None
    known = [steps[s] for s in STEPS if steps.get(s)]
    last = None
    for step in ("driver_ready", "toolkit_ready", "allocatable", "validated"):
        if not steps.get(step):
            break
        last = steps[step]
    out["total"] = round((last - known[0]).total_seconds(), 1) if last else None
    return out


def node_timeline(nodes, machines=None, pods=None, validated=None):
    """One row per GPU node (NFD label, or a pod of the GPU stack on it), in name order.

    ``pods``: pods of the GPU stack (driver, toolkit, device plugin; by ``app.kubernetes.io/component``) and,
    optionally, the nfd-worker pods (``is_nfd_worker``: the labelling time when managedFields cannot say);
    ``validated``: {node: RFC 3339 time it was last validated}.
    """
    machines_by_name = dict((name_of(m), m) for m in machines or [])
    pods_by_node, stack_nodes = {}, set()
    for pod in pods or []:
        node_name = dig(pod, ("spec", "nodeName"))
        pods_by_node.setdefault(node_name, []).append(pod)
        if not is_nfd_worker(pod):
            stack_nodes.add(node_name)
    rows = []
    for node in sorted(nodes or [], key=name_of):
        labels = dig(node, ("metadata", "labels")) or {}
        if not is_gpu_node(labels) and name_of(node) not in stack_nodes:
            continue
        sources = {}
        steps = node_steps(node, machines_by_name, pods_by_node.get(name_of(node), []), validated, sources)
        seconds = phase_seconds(steps)
        row = {
            "node": name_of(node),
            "kernel": dig(node, ("status", "nodeInfo", "kernelVersion")) or "",
            "steps": dict((k, v.isoformat() if v else None) for k, v in steps.items()),
            "sources": sources,
            "seconds": seconds,
            # Ready after the NFD labels: the node rebooted (e.g. a MachineConfig rollout) after it was labelled.
            "out_of_order": seconds["nfd"] is not None and seconds["nfd"] < 0,
        }
        rows.append(row)
    return rows


# The result of a state the ledger skipped (site.yml marks them together: {event: skipped, states, at}).
SKIPPED_RESULT = "skipped: unchanged since its last good run"


def state_timeline(marks):
    """[{state, event: start|end, at}, {event: skipped, states, at}] -> [{state, start, end, seconds, result}] in
    run order; a skipped state starts and ends at its mark."""
    order, spans = [], {}
    for mark in marks or []:
        skipped = mark.get("event") == "skipped"
        for state in mark.get("states") or [] if skipped else [mark.get("state")]:
            if state not in spans:
                order.append(state)
                spans[state] = {"state": state, "start": None, "end": None, "seconds": None}
            for event in ("start", "end") if skipped else [mark.get("event")]:
                spans[state][event] = mark.get("at")
            if skipped:
                spans[state]["result"] = SKIPPED_RESULT
            elif mark.get("event") == "end" and mark.get("result"):
                spans[state]["result"] = mark["result"]
    for span in spans.values():
        a, b = parse_time(span["start"]), parse_time(span["end"])
        span["seconds"] = round((b - a).total_seconds(), 1) if a and b else None
    return [spans[s] for s in order]


def fmt_seconds(value):
    return "-" if value is None else "{0:.1f}".format(value)


def table(states, rows):
    """Printable lines: the states of the run, then time-to-GPU-ready per node."""
    width = max([16] + [len(s["state"] or "") for s in states])
    lines = ["{0:<{w}} {1:>9}  {2}".format("state", "seconds", "result", w=width)]
    for s in states:
        lines.append(
            "{0:<{w}} {1:>9}  {2}".format(s["state"], fmt_seconds(s["seconds"]), s.get("result") or "", w=width)
        )
    lines.append("")
    head = ["node"] + [p[0] for p in PHASES] + ["total"]
    width = max([len(h) for h in head[:1]] + [len(r["node"]) for r in rows]) if rows else 4
    row_fmt = "{0:<{w}} {1:>9}" + "".join(" {%d:>8}" % i for i in range(2, len(head)))
    lines.append(row_fmt.format(*head, w=width))
    for r in rows:
        sec = r["seconds"]
        cells = [fmt_seconds(sec[p[0]]) for p in PHASES] + [fmt_seconds(sec["total"])]
        lines.append(
            row_fmt.format(r["node"], *cells, w=width)
            + ("  (Ready moved later: a reboot)" if r["out_of_order"] else "")
        )
    if not rows:
        lines.append("(no GPU node yet)")
    if any((r.get("sources") or {}).get("nfd_labelled") == FROM_NFD_WORKER for r in rows):
        lines.append(
            "nfd: NFD's master rewrote the labels after the driver was Ready; the nfd-worker's Ready stands in"
        )
    return lines


def build(marks, nodes, machines=None, pods=None, validated=None):
    states = state_timeline(marks)
    rows = node_timeline(nodes, machines, pods, validated)
    return {"states": states, "nodes": rows, "table": table(states, rows)}
