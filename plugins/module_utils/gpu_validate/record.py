# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate's validation record (pure): what was validated, and what changed since.

A node's *fingerprint* is what a workload validation depends on: the kernel the
node runs, the images of its driver and device plugin pods, the content of the
ConfigMaps the device plugin pods mount (the time-slicing / MIG config) with the
node's ``nvidia.com/device-plugin.config`` label, and the GPU resources it
advertises. The record keeps, per node, the fingerprint on which the workload
checks last passed, when, and which checks; a later run re-runs the workload
checks only on nodes whose fingerprint changed, that have no record, or whose
record lacks a requested check (``force`` re-runs them everywhere).

The record travels as ConfigMap data: one key per node, a compact, key-sorted
JSON value, so that an unchanged record renders to the very same strings.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    PASS,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.resources import node_labels
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig

PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"


def _images(pods):
    return sorted(
        set(
            to_text(c.get("image") or "")
            for p in pods
            for c in (dig(p, ("spec", "initContainers")) or []) + (dig(p, ("spec", "containers")) or [])
        )
    )


def config_refs(pods):
    """(namespace, name) of every ConfigMap the pods mount or read (volumes, projections, env)."""
    refs = set()
    for pod in pods:
        ns = dig(pod, ("metadata", "namespace")) or ""
        spec = pod.get("spec") or {}
        for volume in spec.get("volumes") or []:
            if (volume.get("configMap") or {}).get("name"):
                refs.add((ns, volume["configMap"]["name"]))
            for source in (volume.get("projected") or {}).get("sources") or []:
                if (source.get("configMap") or {}).get("name"):
                    refs.add((ns, source["configMap"]["name"]))
        for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
            for env in container.get("env") or []:
                ref = dig(env, ("valueFrom", "configMapKeyRef")) or {}
                if ref.get("name"):
                    refs.add((ns, ref["name"]))
            for env_from in container.get("envFrom") or []:
                if (env_from.get("configMapRef") or {}).get("name"):
                    refs.add((ns, env_from["configMapRef"]["name"]))
    return sorted(refs)


def config_hash(refs, config_maps):
    """sha256 (16 hex) of the referenced ConfigMaps' data; None when the pods reference none.

    ``config_maps``: {(namespace, name): ConfigMap or None (missing)}.
    """
    if not refs:
        return None
    content = []
    for ref in refs:
        cm = config_maps.get(tuple(ref))
        content.append(
            [
                list(ref),
                None if cm is None else {"data": cm.get("data") or {}, "binaryData": cm.get("binaryData") or {}},
            ]
        )
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def gpu_allocatable(node):
    """{resource: count} of the GPU resources the node advertises (nvidia.com/gpu*, MIG devices)."""
    alloc = dig(node, ("status", "allocatable")) or {}
    return dict(
        (to_text(k), to_text(v))
        for k, v in alloc.items()
        if k == GPU_RESOURCE or k.startswith(GPU_RESOURCE + ".") or k.startswith(MIG_RESOURCE_PREFIX)
    )


def node_fingerprint(node, driver_pods, plugin_pods, config_maps):
    """What the node's workload validation depends on (the pods are the node's own)."""
    refs = config_refs(plugin_pods)
    return {
        "kernel": to_text(dig(node, ("status", "nodeInfo", "kernelVersion")) or ""),
        "driver": _images(driver_pods),
        "device_plugin": _images(plugin_pods),
        "plugin_config": config_hash(refs, config_maps),
        "plugin_config_label": node_labels(node).get(PLUGIN_CONFIG_LABEL),
        "allocatable": gpu_allocatable(node),
    }


def _short(value):
    if isinstance(value, list):
        return ", ".join(value) if value else "none"
    if isinstance(value, dict):
        return ", ".join("{0} {1}".format(k, v) for k, v in sorted(value.items())) if value else "none"
    return "none" if value is None or value == "" else to_text(value)


FIELD_NAMES = (
    ("kernel", "kernel"),
    ("driver", "driver image"),
    ("device_plugin", "device plugin image"),
    ("plugin_config", "device plugin config"),
    ("plugin_config_label", "label " + PLUGIN_CONFIG_LABEL),
    ("allocatable", "allocatable"),
)


def fingerprint_changes(old, new):
    """Human-readable differences, e.g. ['kernel 5.15.0-119-generic -> 6.8.0-45-generic']."""
    old = old or {}
    out = []
    for key, label in FIELD_NAMES:
        if old.get(key) != new.get(key):
            if key == "plugin_config":
                out.append("{0} changed ({1} -> {2})".format(label, _short(old.get(key)), _short(new.get(key))))
            else:
                out.append("{0} {1} -> {2}".format(label, _short(old.get(key)), _short(new.get(key))))
    return out


def parse_record(data):
    """The previous record from ConfigMap data ({node: JSON text}) or a dict of dicts; bad entries are dropped."""
    record = {}
    for name, entry in (data or {}).items():
        if isinstance(entry, (str, bytes)) or not isinstance(entry, dict):
            try:
                entry = json.loads(to_text(entry))
            except (TypeError, ValueError):
                continue
        if isinstance(entry, dict) and isinstance(entry.get("fingerprint"), dict):
            record[to_text(name)] = entry
    return record


def plan_revalidation(previous, fingerprints, workload_checks, force=False):
    """{node: {"run": bool, "reason": text, "last_validated": time or None}} for the workload checks.

    ``previous``: parsed record; ``fingerprints``: {node: fingerprint}; ``workload_checks``: the
    requested workload checks (nothing runs without any).
    """
    plan = {}
    for name in sorted(fingerprints):
        entry = previous.get(name)
        last = entry.get("validated") if entry else None
        if not workload_checks:
            plan[name] = {"run": False, "reason": "no workload check requested", "last_validated": last}
            continue
        if force:
            reason = "forced"
        elif entry is None:
            reason = "never validated"
        else:
            changes = fingerprint_changes(entry["fingerprint"], fingerprints[name])
            missing = [c for c in workload_checks if c not in (entry.get("checks") or [])]
            if changes:
                reason = "; ".join(changes)
            elif missing:
                reason = "not validated with {0} yet".format(", ".join(missing))
            else:
                plan[name] = {"run": False, "reason": "unchanged", "last_validated": last}
                continue
        plan[name] = {"run": True, "reason": reason, "last_validated": last}
    return plan


def next_record(previous, fingerprints, plan, results, workload_checks, now, recorded=None):
    """The record after this run: {node: entry} for the current nodes only.

    A node whose workload checks ran gets a new entry when every one passed, and loses its entry otherwise
    (it is validated again next time); a node whose checks did not run (unchanged, check mode) keeps its entry.
    """
    record = {}
    for name, fingerprint in fingerprints.items():
        ran = [c for c in workload_checks if (results.get(name) or {}).get(c, {}).get("pod")]
        if plan.get(name, {}).get("run") and ran:
            # A check that does not apply to the node (a burn-in on MIG or shared GPUs) does not hold it back.
            if all(
                (results[name].get(c) or {}).get("status") == PASS or (results[name].get(c) or {}).get("not_applicable")
                for c in workload_checks
            ):
                record[name] = {
                    "fingerprint": fingerprint,
                    "validated": now,
                    "checks": list(recorded or workload_checks),
                }
        elif name in previous:
            record[name] = previous[name]
    return record


def record_data(record):
    """ConfigMap data: {node: compact key-sorted JSON} (same record, same strings)."""
    return dict(
        (name, json.dumps(entry, sort_keys=True, separators=(",", ":"))) for name, entry in sorted(record.items())
    )
