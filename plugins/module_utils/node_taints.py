# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""node_taints: add taints to many nodes (or take back the ones added) without touching the others.

A node's ``spec.taints`` is an atomic list (no merge key): a strategic-merge or
server-side-apply write of the list replaces the whole list and takes ownership
of every taint in it, including the ones the node lifecycle controller or
``kubectl cordon`` own (``node.kubernetes.io/unschedulable``). So each node gets
one JSON patch that only appends the missing taints (``add /spec/taints/-``) or
removes ours by index, guarded by a ``test`` of the resourceVersion it was
planned from; a node changed in between fails the test and is read and planned
again.

Which taints the module added is recorded on the node in the annotation
``gpuops.cluster/added-taints`` (``key=value:effect`` entries, comma separated),
so that ``state=absent`` removes exactly those: a taint that was already there
(set by hand, or by the MachineSet template on OpenShift) is left alone.

Pure planning functions here; the requests are in ``run``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError, describe_api_error
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    diff_entry,
    list_items,
    name_of,
    parallel_map,
    pool_size,
    status_of,
)

MARKER = "gpuops.cluster/added-taints"
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
RETRIES = 5


def argument_spec():
    """node_taints' options (here, not in the module: k8s_ensure's ``node_taints`` takes them too)."""
    return module_spec(
        taints=dict(
            type="list",
            elements="dict",
            required=True,
            options=dict(
                key=dict(type="str", required=True, no_log=False),
                value=dict(type="str", default=""),
                effect=dict(type="str", required=True, choices=list(EFFECTS)),
            ),
        ),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        node_names=dict(type="list", elements="str"),
        parallel=dict(type="int", default=16),
    )


def check_params(params):
    """The rules the spec cannot express, checked before any write (run checks them again)."""
    check_taints(params["taints"])
    if params["state"] == "present" and not params.get("node_names"):
        raise GpuopsError("is empty; list the nodes to taint (state=present needs them).", param="node_names")


def taint_text(taint):
    """``key=value:effect`` (kubectl's form)."""
    return "{0}={1}:{2}".format(taint["key"], taint.get("value") or "", taint["effect"])


def check_taints(taints):
    """Normalized taints ({key, value, effect}) or GpuopsError naming the bad one."""
    out = []
    for index, taint in enumerate(taints or []):
        where = "taints[{0}]".format(index)
        key = (taint.get("key") or "").strip()
        if not key:
            raise GpuopsError("{0}: key is empty; give the taint key (e.g. nvidia.com/gpu).".format(where), "taints")
        effect = taint.get("effect")
        if effect not in EFFECTS:
            raise GpuopsError(
                "{0}: effect {1!r} is not one of {2}.".format(where, effect, ", ".join(EFFECTS)), param="taints"
            )
        item = {"key": key, "value": to_text(taint.get("value") or ""), "effect": effect}
        if any(t["key"] == key and t["effect"] == effect for t in out):
            raise GpuopsError("{0}: {1} is listed twice.".format(where, taint_text(item)), param="taints")
        out.append(item)
    if not out:
        raise GpuopsError("is empty; list at least one taint.", param="taints")
    return out


def _same_slot(a, b):
    # The API server identifies a taint by key and effect (two taints with both equal are refused).
    return a.get("key") == b.get("key") and a.get("effect") == b.get("effect")


def node_taints(node):
    return list(((node or {}).get("spec") or {}).get("taints") or [])


def recorded(node):
    """The taint texts this module recorded on the node as added by it."""
    value = (((node or {}).get("metadata") or {}).get("annotations") or {}).get(MARKER) or ""
    return [part for part in (p.strip() for p in value.split(",")) if part]


def _marker_ops(node, entries):
    annotations = ((node.get("metadata") or {}).get("annotations")) or {}
    path = "/metadata/annotations/" + MARKER.replace("~", "~0").replace("/", "~1")
    if not entries:
        return [{"op": "remove", "path": path}] if MARKER in annotations else []
    value = ",".join(entries)
    if not annotations:
        return [{"op": "add", "path": "/metadata/annotations", "value": {MARKER: value}}]
    return [{"op": "replace" if MARKER in annotations else "add", "path": path, "value": value}]


def plan_present(node, taints):
    """(json patch ops, [taint texts added]) for one node; ([], []) when it carries every taint.

    A taint with the same key and effect but another value is a conflict (GpuopsError): changing its value
    would change a taint somebody else set.
    """
    current = node_taints(node)
    missing = []
    for taint in taints:
        same = [t for t in current if _same_slot(t, taint)]
        if not same:
            missing.append(taint)
        elif (same[0].get("value") or "") != taint["value"]:
            raise GpuopsError(
                "node {0} already carries {1}, not {2}; remove that taint or ask for its value.".format(
                    name_of(node), taint_text(same[0]), taint_text(taint)
                ),
                param="taints",
            )
    if not missing:
        return [], []
    ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": node["metadata"]["resourceVersion"]}]
    bodies = [dict((k, v) for k, v in t.items() if k != "value" or v) for t in missing]
    if "taints" in (node.get("spec") or {}) and node["spec"]["taints"] is not None:
        ops.extend({"op": "add", "path": "/spec/taints/-", "value": b} for b in bodies)
    else:
        ops.append({"op": "add", "path": "/spec/taints", "value": bodies})
    added = [taint_text(t) for t in missing]
    entries = recorded(node) + [a for a in added if a not in recorded(node)]
    ops.extend(_marker_ops(node, entries))
    return ops, added


def plan_absent(node, taints):
    """(json patch ops, [taint texts removed]) for one node: the listed taints that the marker says were ours."""
    entries = recorded(node)
    wanted = [taint_text(t) for t in taints]
    ours = [e for e in entries if e in wanted]
    if not ours:
        return [], []
    current = node_taints(node)
    indexes = [i for i, t in enumerate(current) if taint_text(t) in ours]
    ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": node["metadata"]["resourceVersion"]}]
    ops.extend({"op": "remove", "path": "/spec/taints/{0}".format(i)} for i in sorted(indexes, reverse=True))
    ops.extend(_marker_ops(node, [e for e in entries if e not in ours]))
    return ops, [taint_text(current[i]) for i in indexes]


def plan(node, taints, state):
    return plan_present(node, taints) if state == "present" else plan_absent(node, taints)


def apply_ops(node, ops):
    """The node as the patch would leave it (check mode, diff): taints and marker only."""
    taints = node_taints(node)
    annotations = dict(((node.get("metadata") or {}).get("annotations")) or {})
    for op in ops:
        if op["path"] == "/spec/taints":
            taints = list(op["value"])
        elif op["path"] == "/spec/taints/-":
            taints.append(op["value"])
        elif op["path"].startswith("/spec/taints/"):
            del taints[int(op["path"].rsplit("/", 1)[1])]
        elif op["path"] == "/metadata/annotations":
            annotations = dict(op["value"])
        elif op["path"].startswith("/metadata/annotations/"):
            if op["op"] == "remove":
                annotations.pop(MARKER, None)
            else:
                annotations[MARKER] = op["value"]
    return taints, annotations


def _view(name, taints, annotations):
    meta = {"name": name}
    if MARKER in annotations:
        meta["annotations"] = {MARKER: annotations[MARKER]}
    return {"metadata": meta, "spec": {"taints": taints}}


def diff_of(node, ops):
    taints, annotations = apply_ops(node, ops)
    before_ann = ((node.get("metadata") or {}).get("annotations")) or {}
    header = "Node " + name_of(node)
    return diff_entry(
        header, _view(name_of(node), node_taints(node), before_ann), _view(name_of(node), taints, annotations)
    )


def _patch_one(client, resource, name, taints, state):
    """Plan and send one node's patch, re-reading it when it changed in between. (node, changes)."""
    node = None
    for attempt in range(RETRIES):
        if node is None:
            response = client.get(resource, name=name, serialize=False)
            node = json.loads(to_text(response.data))
        ops, changes = plan(node, taints, state)
        if not ops:
            return node, changes
        try:
            response = client.patch(
                resource, ops, name=name, serialize=False, content_type="application/json-patch+json"
            )
            return json.loads(to_text(response.data)), changes
        except Exception as exc:  # a failed resourceVersion test: 422 (Invalid) or 409; read again
            if status_of(exc) not in (409, 422) or attempt == RETRIES - 1:
                raise
            node = None
            time.sleep(0.2 * (attempt + 1))
    return node, []  # pragma: no cover - the loop returns or raises


def _select(params, client, resource, state):
    """The nodes to look at: those named, or (absent without names) every node this module tainted."""
    names = params.get("node_names")
    nodes = list_items(client, resource)
    by_name = dict((name_of(n), n) for n in nodes)
    if not names:
        return [n for n in sorted(nodes, key=name_of) if recorded(n)]
    missing = sorted(set(names) - set(by_name))
    if missing:
        raise GpuopsError("no Node named {0}.".format(", ".join(missing)), param="node_names")
    return [by_name[n] for n in sorted(set(names))]


def _send(module, client, resource, planned, taints, state):
    """Patch the planned nodes in parallel; {name: node after the patch}. A deleted node is a warning."""
    workers = min(module.params["parallel"], pool_size(client))
    done, errors = {}, {}
    sent = parallel_map(lambda item: _patch_one(client, resource, name_of(item[0]), taints, state), planned, workers)
    for item, out, exc in sent:
        if exc is None:
            done[name_of(item[0])] = out[0]
        elif status_of(exc) == 404:
            module.warn("node {0} was deleted while tainting".format(name_of(item[0])))
        else:
            errors[name_of(item[0])] = describe_api_error(exc) if status_of(exc) else to_text(exc)
    if errors:
        raise GpuopsError(
            "patching the taints failed on {0} of {1} nodes: {2}".format(
                len(errors), len(planned), "; ".join("{0}: {1}".format(k, v) for k, v in sorted(errors.items())[:5])
            ),
            changed=bool(done),
            changed_nodes=sorted(done),
        )
    return done


def _report(selected, planned, done, state):
    """One entry per selected node: what happened and its taints now (or as they would be, in check mode)."""
    ops_of = dict((name_of(n), ops) for n, ops, dummy in planned)
    changes_of = dict((name_of(n), c) for n, dummy, c in planned)
    report = []
    for node in selected:
        name = name_of(node)
        if name in done:
            now_taints = node_taints(done[name])
        elif name in ops_of:
            now_taints = apply_ops(node, ops_of[name])[0]
        else:
            now_taints = node_taints(node)
        action = ("added" if state == "present" else "removed") if changes_of.get(name) else "unchanged"
        report.append(
            {
                "name": name,
                "action": action,
                "changed_taints": changes_of.get(name, []),
                "taints": [taint_text(t) for t in now_taints],
            }
        )
    return report


def run(module, client, svc):
    """node_taints: one list request, then JSON patches in parallel where needed."""
    started = time.monotonic()
    state = module.params["state"]
    check_params(module.params)
    taints = check_taints(module.params["taints"])
    resource = svc.find_resource("Node", "v1", fail=True)
    selected = _select(module.params, client, resource, state)
    planned = []
    for node in selected:
        ops, changes = plan(node, taints, state)
        if ops:
            planned.append((node, ops, changes))
    result = {"changed": bool(planned), "changed_nodes": [name_of(n) for n, dummy, dummy2 in planned]}
    if module._diff:
        result["diff"] = [diff_of(n, ops) for n, ops, dummy in planned]
    done = _send(module, client, resource, planned, taints, state) if planned and not module.check_mode else {}
    result["nodes"] = _report(selected, planned, done, state)
    result["duration"] = round(time.monotonic() - started, 3)
    return result
