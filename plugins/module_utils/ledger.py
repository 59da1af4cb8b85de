# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""state_ledger: which states of site.yml can be skipped because nothing they depend on changed.

After a run in which every state converged and validated, site.yml records, per state:

* ``inputs``: a digest of the state's variables and of the collection's own files
  (computed on the controller: a changed variable or a new collection version re-runs it);
* ``nodes``: digests of the GPU nodes (``node_facts``): which nodes, kernels, OS, runtime, NFD
  labels for every state; GPU resources, NVIDIA labels, taints and roles for the
  states from the device plugin on;
* ``objects``: a stamp of every object the state made (``object_stamp``: everything but
  ``status`` and the server's bookkeeping), found by the collection's managed-by and owner labels.

A later run skips a state only when all three are as recorded and its workloads are ready
(kubernetes.core's DaemonSet / Deployment / StatefulSet predicates, MachineSet replicas). The
first state that differs runs, and every state after it (a later state builds on the earlier
ones: a new driver image must be validated again). The last state (``gpu_validation``) is never
skipped by site.yml: it checks every GPU node on every run.

A run that fails drops every state's record (``mode: invalidate``) and leaves a note of where it failed
(``FAILURE_KEY``): what broke may be something no record shows (a node's module, a foreign quota), so the
next run runs every state, and says why, until one converges and validates again.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.normalize import OWNER_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.runner import ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import list_gpu_nodes
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    dig,
    get_item,
    label_selector,
    list_items,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.state_inputs import digest
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import check_dns_label, check_dns_subdomain

LEDGER_VERSION = 1
# The ConfigMap key of the note a failed run leaves (not a state name: state names have underscores).
FAILURE_KEY = "last-failure"

# (apiVersion, kind) of what the states create. Pods, Builds and Machines are left out: they come and
# go with the workloads that own them, whose readiness is checked instead.
KINDS = (
    ("v1", "Namespace"),
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "Service"),
    ("v1", "ResourceQuota"),
    ("v1", "LimitRange"),
    ("apps/v1", "DaemonSet"),
    ("apps/v1", "Deployment"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("machine.openshift.io/v1beta1", "MachineSet"),
    ("machineconfiguration.openshift.io/v1", "MachineConfig"),
    ("autoscaling.openshift.io/v1beta1", "MachineAutoscaler"),
    ("autoscaling.openshift.io/v1", "ClusterAutoscaler"),
    ("operators.coreos.com/v1", "OperatorGroup"),
    ("operators.coreos.com/v1alpha1", "Subscription"),
    ("nfd.openshift.io/v1", "NodeFeatureDiscovery"),
    ("nfd.k8s-sigs.io/v1alpha1", "NodeFeatureRule"),
    ("image.openshift.io/v1", "ImageStream"),
    ("build.openshift.io/v1", "BuildConfig"),
)
# Objects a module makes with the managed-by label but no owner label: the state that makes them.
KIND_OWNERS = {"MachineSet": "gpu_machineset", "ImageStream": "driver", "BuildConfig": "driver"}

BASE_LABEL_PREFIXES = ("feature.node.kubernetes.io/",)
LATE_LABEL_PREFIXES = ("nvidia.com/", "node-role.kubernetes.io/", "gpuops")
# Taints the node lifecycle controller sets and lifts with the node's conditions (not-ready, unreachable, ...).
CONDITION_TAINTS = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")
# The states that depend on the GPU nodes' late facts (``node_facts``); a state of another name depends on all.
EARLY_STATES = frozenset(["gpu_machineset", "entitlement", "nfd", "driver", "container_toolkit"])
# GFD rewrites its timestamp on every labelling pass: it says nothing about the node.
VOLATILE_NODE_LABELS = ("nvidia.com/gfd.timestamp",)
VOLATILE_METADATA = ("resourceVersion", "managedFields", "creationTimestamp", "selfLink")


def object_key(obj):
    """'DaemonSet nvidia-gpu/nvidia-device-plugin-daemonset' ('Namespace /nvidia-gpu' when cluster-scoped)."""
    meta = obj.get("metadata") or {}
    return "{0} {1}/{2}".format(obj.get("kind"), meta.get("namespace") or "", meta.get("name"))


def object_stamp(obj):
    """What changes when anyone changes the object: all of it but status and the server's bookkeeping.

    A controller that only reports (status, resourceVersion) does not change it; an edit, a
    re-creation (new uid) or a label someone removed does.
    """
    body = dict((k, v) for k, v in obj.items() if k != "status")
    body["metadata"] = dict((k, v) for k, v in (obj.get("metadata") or {}).items() if k not in VOLATILE_METADATA)
    return digest(body)


def state_of(obj):
    """The state that made ``obj`` (its owner label, or the module that makes that kind), or None."""
    labels = dig(obj, ("metadata", "labels")) or {}
    if labels.get(MANAGED_BY_LABEL) != MANAGED_BY:
        return None
    return labels.get(OWNER_LABEL) or KIND_OWNERS.get(obj.get("kind"))


def _instance(obj):
    from kubernetes.dynamic.resource import ResourceInstance

    return ResourceInstance(None, obj)


def not_ready(obj):
    """Why a workload the state made is not ready ('DaemonSet ns/name: 1/2 ready'), or None."""
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.waiter import RESOURCE_PREDICATES

    kind = obj.get("kind")
    status = obj.get("status") or {}
    if kind in ("DaemonSet", "Deployment", "StatefulSet"):
        if RESOURCE_PREDICATES[kind](_instance(obj)):
            return None
        if kind == "DaemonSet":
            return "{0}: {1}/{2} ready".format(
                object_key(obj), status.get("numberReady", 0), status.get("desiredNumberScheduled", "?")
            )
        return "{0}: {1}/{2} ready".format(
            object_key(obj), status.get("readyReplicas", 0), dig(obj, ("spec", "replicas"), 1)
        )
    if kind == "MachineSet":
        want = dig(obj, ("spec", "replicas"), 0) or 0
        if (status.get("readyReplicas") or 0) < want:
            return "{0}: {1}/{2} machines ready".format(object_key(obj), status.get("readyReplicas") or 0, want)
    return None


def _node_labels(labels, prefixes):
    return dict((k, v) for k, v in (labels or {}).items() if k.startswith(prefixes) and k not in VOLATILE_NODE_LABELS)


def node_facts(node):
    """What the states depend on of a GPU node: (base, late).

    ``base`` matters to every state (the node itself, its kernel, OS, runtime, NFD labels). A node's
    Ready condition is not among them: it follows heartbeats, and a node that is not ready is
    gpu_validation's to report, which runs every time;
    ``late`` only to the states from the device plugin on (all but ``EARLY_STATES``): the GPU resources and NVIDIA
    labels the device plugin and GFD publish, and the taints and roles the scheduling state sets. An
    earlier state is not re-run because a later one did its job.
    """
    info = dig(node, ("status", "nodeInfo")) or {}
    labels = dig(node, ("metadata", "labels")) or {}
    name = dig(node, ("metadata", "name"))
    base = {
        "name": name,
        "uid": dig(node, ("metadata", "uid")),
        "kernel": info.get("kernelVersion"),
        "os": info.get("osImage"),
        "runtime": info.get("containerRuntimeVersion"),
        "labels": _node_labels(labels, BASE_LABEL_PREFIXES),
    }
    late = {
        "name": name,
        "labels": _node_labels(labels, LATE_LABEL_PREFIXES),
        "taints": sorted(
            (t.get("key") or "", t.get("value") or "", t.get("effect") or "")
            for t in dig(node, ("spec", "taints")) or []
            if not (t.get("key") or "").startswith(CONDITION_TAINTS)
        ),
        "gpus": dict(
            (k, v) for k, v in (dig(node, ("status", "allocatable")) or {}).items() if k.startswith("nvidia.com/")
        ),
    }
    return base, late


def node_digest(nodes):
    """{'base': digest, 'late': digest} of the GPU nodes (``node_facts``)."""
    facts = sorted((node_facts(n) for n in nodes), key=lambda f: f[0]["name"])
    return {"base": digest([f[0] for f in facts]), "late": digest([f[1] for f in facts])}


def stamps_by_state(objects):
    """{state: {object_key: stamp}} of the objects the states made."""
    out = {}
    for obj in objects:
        state = state_of(obj)
        if state:
            out.setdefault(state, {})[object_key(obj)] = object_stamp(obj)
    return out


def parse_entry(text):
    """A recorded entry (dict) or None when it cannot be read (an older format, a hand edit)."""
    try:
        entry = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("v") != LEDGER_VERSION:
        return None
    if not isinstance(entry.get("objects"), dict) or not isinstance(entry.get("kinds"), list):
        return None
    return entry


def entry_text(inputs, nodes, objects, kinds):
    """One state's record, as the ConfigMap value: compact and key-sorted, so that the same facts give the same text."""
    return json.dumps(
        {"v": LEDGER_VERSION, "inputs": inputs, "nodes": nodes, "objects": objects, "kinds": sorted(kinds)},
        sort_keys=True,
        separators=(",", ":"),
    )


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def failure_text(state, task, at):
    """The note a failed run leaves in the ledger: where and when it failed (no message: it may hold a secret)."""
    return json.dumps({"state": state, "task": task, "at": at}, sort_keys=True, separators=(",", ":"))


def failure_words(text):
    """'the run of 2026-11-28T22:01:02Z failed in gpu_validation (task: ...)', or None."""
    try:
        note = json.loads(text) if text else None
    except ValueError:
        note = None
    if not isinstance(note, dict):
        return None
    words = "the run of {0} failed in {1}".format(note.get("at") or "an unknown time", note.get("state") or "a state")
    return words + (" (task: {0})".format(note["task"]) if note.get("task") else "")


def why_changed(name, entry, inputs, nodes, live, problems, failure=None):
    """Why a state must run (one line), or '' when it may be skipped.

    ``live``: {object_key: stamp} of the state's objects now; ``problems``: workloads of it not ready;
    ``failure``: ``failure_words`` of the ledger's failure note, if any.
    """
    if entry is None:
        if failure:
            return "its record was dropped because {0}; every state runs until a run validates".format(failure)
        return "no record of a run that converged and validated"
    if entry.get("inputs") != inputs:
        return "its variables or the collection changed"
    recorded_nodes = entry.get("nodes") if isinstance(entry.get("nodes"), dict) else {}
    if recorded_nodes.get("base") != nodes["base"]:
        return "the GPU nodes changed (which nodes, kernel, OS, runtime or NFD labels)"
    recorded = entry["objects"]
    gone = sorted(set(recorded) - set(live))
    if gone:
        return "{0} is gone".format(gone[0]) + (" (and {0} more)".format(len(gone) - 1) if len(gone) > 1 else "")
    edited = sorted(k for k in recorded if live[k] != recorded[k])
    if edited:
        return "{0} was changed".format(edited[0]) + (
            " (and {0} more)".format(len(edited) - 1) if len(edited) > 1 else ""
        )
    new = sorted(set(live) - set(recorded))
    if new:
        return "{0} is not in the record".format(new[0])
    if name not in EARLY_STATES and recorded_nodes.get("late") != nodes["late"]:
        return "the GPU nodes' GPU resources, NVIDIA labels, taints or roles changed"
    if problems:
        return "not ready: " + "; ".join(problems[:3]) + (" ..." if len(problems) > 3 else "")
    return ""


def decide(states, entries, nodes, live, problems, force=False, failure=None):
    """(run, reasons): the states to run, in order, and why each one runs.

    ``states``: [(name, inputs)] in run order; ``entries``: {name: entry or None}; ``live``:
    {name: {key: stamp}}; ``problems``: {name: [not ready]}; ``failure``: ``failure_words`` of the
    ledger's note of a failed run. From the first state that must run on, every state runs.
    """
    if force:
        return [n for n, dummy in states], dict((n, "forced (gpuops_ledger is off)") for n, dummy in states)
    run, reasons, first = [], {}, None
    for name, inputs in states:
        if first is None:
            why = why_changed(
                name, entries.get(name), inputs, nodes, live.get(name, {}), problems.get(name, []), failure
            )
            if not why:
                continue
            first = name
        else:
            why = "runs after {0}, which runs".format(first)
        reasons[name] = why
        run.append(name)
    return run, reasons


def invalidated(data, failed_state, failed_task, at):
    """The ledger's data after a failed run: no state's record, and the note of where it failed."""
    if not failed_state:
        raise GpuopsError("is required with mode=invalidate: the state that failed.", param="failed_state")
    return {FAILURE_KEY: failure_text(failed_state, failed_task or None, at)} if data is not None else None


def check_params(params):
    """(mode, [(name, inputs)], namespace, name, gpu_label, force), checked."""
    mode = params.get("mode")
    states = params.get("states") or []
    out = []
    for position, state in enumerate(states):
        if not isinstance(state, dict) or not state.get("name") or not isinstance(state.get("name"), str):
            raise GpuopsError(
                "item {0} must be a dictionary with a state name and its inputs digest, e.g. "
                "{{'name': 'driver', 'inputs': '3f2a...'}}.".format(position),
                param="states",
            )
        if not isinstance(state.get("inputs"), str) or not state["inputs"]:
            raise GpuopsError(
                "state {0!r} needs 'inputs', a non-empty digest of its variables.".format(state["name"]),
                param="states",
            )
        out.append((state["name"], state["inputs"]))
    names = [n for n, dummy in out]
    if len(set(names)) != len(names):
        raise GpuopsError("names a state twice: {0}.".format(", ".join(names)), param="states")
    namespace = check_dns_label(params.get("namespace"), "namespace", "namespace name")
    name = check_dns_subdomain(params.get("name"), "name", "ConfigMap name")
    return mode, out, namespace, name, params.get("gpu_label") or None, bool(params.get("force"))


def argument_spec():
    return module_spec(
        mode=dict(type="str", choices=["check", "record", "invalidate"], default="check"),
        states=dict(type="list", elements="dict", default=[]),
        namespace=dict(type="str", default="kube-system"),
        name=dict(type="str", default="gpuops-state-ledger"),
        gpu_label=dict(type="str"),
        force=dict(type="bool", default=False),
        failed_state=dict(type="str"),
        failed_task=dict(type="str"),
        write=dict(type="bool", default=False),
    )


def check_asked(params):
    """check_params for the ledger asked inside another module's run (platform_info's ``state_ledger``): reads only,
    so mode check without write; record and invalidate stay state_ledger tasks of their own."""
    if params.get("mode") != "check" or params.get("write"):
        raise GpuopsError(
            "only mode=check (without write) is asked here; record and invalidate run as gpuops.cluster.state_ledger "
            "tasks.",
            param="mode",
        )
    return check_params(params)


def check_recorded(params):
    """check_params for the record at the end of a run, inside gpu_timeline's run (its ``state_ledger``): mode record
    only (with or without write)."""
    if params.get("mode") != "record":
        raise GpuopsError(
            "only mode=record is run here (the record at the end of a run); check and invalidate run as "
            "gpuops.cluster.state_ledger tasks (check also as platform_info's state_ledger).",
            param="mode",
        )
    return check_params(params)


def _read_live(client, svc, kinds):
    """[object] labelled managed-by us, of the served ``kinds``; and the kinds actually served."""
    selector = label_selector({MANAGED_BY_LABEL: MANAGED_BY})
    objects, served = [], []
    for api_version, kind in kinds:
        resource = svc.find_resource(kind, api_version, fail=False)
        if resource is None:
            continue
        served.append((api_version, kind))
        objects.extend(list_items(client, resource, label_selector=selector, typed=True))
    return objects, served


def _written(module, client, name, namespace, result):
    """``result`` (mode record or invalidate), with its data written to the ledger ConfigMap when ``write`` asks for
    it (k8s_ensure's present path, owner state_ledger: only when it changed); no ledger to invalidate, no write."""
    result["changed"] = False
    if module.params.get("write") and result["data"] is not None:
        definition = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
            "data": result["data"],
        }
        written = ensure_present(module, client, [definition], owner="state_ledger")
        result.update((k, v) for k, v in written.items() if k != "pruned")
    return result


def run(module, client, svc):
    mode, states, namespace, name, gpu_label, force = check_params(module.params)
    cm = get_item(client, svc.find_resource("ConfigMap", "v1", fail=True), name, namespace)
    data = (cm or {}).get("data") or {}
    if mode == "invalidate":
        # Nothing recorded, nothing to drop: the next run runs every state anyway.
        new_data = invalidated(
            data if cm is not None else None,
            module.params.get("failed_state"),
            module.params.get("failed_task"),
            now_utc(),
        )
        return _written(
            module,
            client,
            name,
            namespace,
            {"data": new_data, "run": [], "skip": [], "reasons": {}, "recorded": cm is not None},
        )
    entries = dict((n, parse_entry(data.get(n))) for n, dummy in states)
    nodes = node_digest(list_gpu_nodes(client, svc.find_resource("Node", "v1", fail=True), gpu_label=gpu_label))
    if mode == "check":
        kinds = set()
        for entry in entries.values():
            kinds.update(tuple(k) for k in (entry or {}).get("kinds") or [])
        objects, dummy = _read_live(client, svc, sorted(kinds))
        live = stamps_by_state(objects)
        problems = {}
        for obj in objects:
            why = not_ready(obj) if state_of(obj) else None
            if why:
                problems.setdefault(state_of(obj), []).append(why)
        to_run, reasons = decide(states, entries, nodes, live, problems, force, failure_words(data.get(FAILURE_KEY)))
        skipped = [n for n, dummy in states if n not in to_run]
        return {
            "changed": False,
            "run": to_run,
            "skip": skipped,
            "reasons": reasons,
            "recorded": cm is not None,
        }
    objects, served = _read_live(client, svc, KINDS)
    live = stamps_by_state(objects)
    # The states recorded now validated: the failure note has no more to say (a state still without a record
    # runs for that reason).
    new_data = dict((k, v) for k, v in data.items() if k != FAILURE_KEY)
    for state, inputs in states:
        # Every served kind is read again on the next check, so that an object appearing with a state's
        # labels is noticed as well as one that went.
        new_data[state] = entry_text(inputs, nodes, live.get(state, {}), [list(k) for k in served])
    return _written(
        module,
        client,
        name,
        namespace,
        {"data": new_data, "run": [], "skip": [], "reasons": {}, "recorded": cm is not None},
    )
