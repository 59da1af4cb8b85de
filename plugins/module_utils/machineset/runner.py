# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""machineset_clone: plan every write from one list of MachineSets, check it all, then write and wait.

Nothing is written before every check passed (sources, provider, names,
ownership, instance type, the AWS offering when asked). The result lists one
entry per GPU MachineSet and, in diff mode, one before/after per object.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpuops.cluster.plugins.module_utils import follow
from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    GpuopsError,
    Progress,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import diff_entry, dig, list_items, name_of
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.capacity import (
    CAPACITY_ANNOTATIONS,
    capacity_annotations,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.clone import clone, update_patch
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.ec2 import aws_validate
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.model import (
    API_VERSION,
    KIND,
    describe,
    detect_provider,
    is_managed,
    provider_value,
    select_sources,
    source_of,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.names import (
    check_owner,
    check_targets,
    target_names,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.params import validate_params
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.providers import (
    check_instance_type,
    prepare_value,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.wait import machines_of, wait_machines

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import diff_objects
except ImportError:  # pragma: no cover - reported by common.new_module
    diff_objects = None


class Outcome(object):
    """What the task does: the writes, one item per GPU MachineSet, diff entries and warnings."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.writes = []  # (action, name, body)
        self.items = []
        self.diff = []
        self.warnings = []

    def add_diff(self, name, before, after):
        entry = diff_entry("{0} {1}/{2}".format(KIND, self.namespace, name), before, after)
        if entry:
            self.diff.append(entry)


def item(obj, source_name, action, gpu=None, notes=None):
    info = describe(obj) if obj else {}
    return {
        "name": name_of(obj),
        "source": source_name,
        "provider": info.get("provider"),
        "zone": info.get("zone"),
        "region": info.get("region"),
        "instance_type": info.get("instance_type"),
        "replicas": info.get("replicas"),
        "action": action,
        "changed": action in ("created", "updated", "deleted"),
        "gpu": gpu or {},
        "notes": notes or [],
        "scale_from_zero": dict(
            (k, v) for k, v in (dig(obj, ("metadata", "annotations")) or {}).items() if k in CAPACITY_ANNOTATIONS
        ),
    }


def list_machinesets(client, resource, namespace):
    return list_items(client, resource, namespace=namespace, typed=True)


def _aws_offering(plan, pairs, providers):
    """validate_instance_type: the EC2 answer (AWS only), or None when not asked."""
    if not plan["validate"]:
        return None
    other = sorted(set(p for p in providers.values() if p != "aws"))
    if other:
        raise GpuopsError(
            "checks instance types through the AWS API only; the source MachineSets are on {0}. "
            "Set validate_instance_type=false.".format(", ".join(other)),
            param="validate_instance_type",
        )
    region_zones = {}
    for source, dummy in pairs:
        info = describe(source, "aws")
        region_zones.setdefault(info["region"] or "", set()).add(info["zone"])
    return aws_validate(plan, region_zones)


def plan_present(plan, sources, existing_by_name):
    """[(source, desired GPU MachineSet, gpu facts, notes)], every check done before the first write."""
    pairs = target_names(sources, plan["name"], plan["name_pattern"], plan["instance_type"])
    check_targets(pairs, existing_by_name, plan["name"])
    providers = dict((name_of(source), detect_provider(source)) for source, dummy in pairs)
    validated = _aws_offering(plan, pairs, providers)
    desired = []
    for source, target in pairs:
        provider = providers[name_of(source)]
        want = clone(source, target, plan, provider)
        value = provider_value(want)
        notes = prepare_value(provider, value, plan)
        gpu = check_instance_type(provider, plan["instance_type"], value, plan["allow_unknown"], validated)
        _set_capacity(want, provider, gpu, plan, notes)
        desired.append((source, want, gpu, notes))
    return desired


def _set_capacity(want, provider, gpu, plan, notes):
    """The scale-from-zero annotations of the GPU instance type on the clone (those the user gave win)."""
    if not plan["capacity_annotations"]:
        return
    wanted, note = capacity_annotations(provider, plan["instance_type"], gpu)
    if note:
        notes.append(note)
    annotations = want["metadata"].setdefault("annotations", {})
    for key, value in wanted.items():
        if key not in plan["annotations"]:
            annotations[key] = value


def _present(plan, sources, by_name, out):
    for source, want, gpu, notes in plan_present(plan, sources, by_name):
        name = name_of(want)
        if gpu.get("source") == "unchecked" and not out.warnings:
            out.warnings.append(
                "instance type {0} is not in the GPU catalog and was not checked "
                "(allow_unknown_instance_type=true); make sure it has NVIDIA GPUs".format(plan["instance_type"])
            )
        current = by_name.get(name)
        if current is None:
            out.writes.append(("create", name, want))
            out.items.append(item(want, name_of(source), "created", gpu, notes))
            out.add_diff(name, {}, want)
            continue
        patch, predicted = update_patch(current, want)
        if not patch:
            out.items.append(item(current, name_of(source), "unchanged", gpu, notes))
            continue
        out.writes.append(("patch", name, patch))
        out.items.append(item(predicted, name_of(source), "updated", gpu, notes))
        dummy, changes = diff_objects(current, predicted)
        out.add_diff(name, changes.get("before", {}), changes.get("after", {}))


def _absent_targets(plan, sources, by_name):
    """[(GPU MachineSet name, source name)] to remove; another source's GPU MachineSet is refused."""
    if not sources:
        return [(plan["name"], None)]
    pairs = target_names(sources, plan["name"], plan["name_pattern"], plan["instance_type"])
    param = "name" if plan["name"] else "name_pattern"
    for source, target in pairs:
        current = by_name.get(target)
        if current is not None and is_managed(current):
            check_owner(source, target, current, param, "delete another source's GPU MachineSet")
    return [(target, name_of(source)) for source, target in pairs]


def _absent(plan, sources, by_name, out):
    for name, source_name in _absent_targets(plan, sources, by_name):
        current = by_name.get(name)
        if current is None:
            out.items.append({"name": name, "source": source_name, "action": "absent", "changed": False})
        elif not is_managed(current):
            out.warnings.append(
                "left MachineSet {0} alone: it was not created by gpuops.cluster (no {1}={2} "
                "label)".format(name, MANAGED_BY_LABEL, MANAGED_BY)
            )
            out.items.append(item(current, source_name, "skipped"))
        else:
            out.writes.append(("delete", name, None))
            out.items.append(item(current, source_name or source_of(current), "deleted"))
            out.add_diff(name, current, {})


def _write(svc, resource, out, by_name):
    objects = {}
    for action, name, body in out.writes:
        if action == "create":
            objects[name] = svc.create(resource, body)[0]
        elif action == "patch":
            objects[name] = svc.patch_resource(resource, body, name, out.namespace, merge_type="merge")[0]
        else:
            svc.delete(resource, {"metadata": {"name": name, "namespace": out.namespace}}, by_name[name])
    for entry in out.items:
        if entry["name"] in objects:
            entry["replicas"] = dig(objects[entry["name"]], ("spec", "replicas"))


def _wait(module, client, svc, plan, out):
    progress = Progress(module)
    if plan["state"] == "present":
        want = dict((i["name"], i["replicas"] or 0) for i in out.items)
        absent = False
    else:
        want = dict((i["name"], 0) for i in out.items if i["action"] in ("deleted", "absent"))
        absent = True
    if want:
        wait_machines(
            client, svc, out.namespace, want, plan["wait_timeout"], plan["wait_sleep"], progress, absent=absent
        )
    return progress.events


def _observe(client, svc, resource, out):
    """The GPU MachineSets of this run as they are now, their Machines and those Machines' Nodes: what a caller
    judges readiness on, read once after the writes and the wait (three list requests)."""
    names = sorted(set(i["name"] for i in out.items))
    if not names:
        return {"machinesets": [], "machines": [], "nodes": []}
    machinesets = [m for m in list_machinesets(client, resource, out.namespace) if name_of(m) in names]
    machine_res = svc.find_resource("Machine", API_VERSION, fail=True)
    machines = list_items(client, machine_res, namespace=out.namespace, label_selector=machines_of(names), typed=True)
    wanted = set(dig(m, ("status", "nodeRef", "name")) for m in machines) - set([None])
    nodes = []
    if wanted:
        node_res = svc.find_resource("Node", "v1", fail=True)
        nodes = [n for n in list_items(client, node_res, typed=True) if name_of(n) in wanted]
    return {"machinesets": machinesets, "machines": machines, "nodes": nodes}


def _machineset_resource(svc):
    resource = svc.find_resource(KIND, API_VERSION)
    if resource is None:
        raise GpuopsError(
            "this cluster does not serve {0} {1} (the OpenShift Machine API), so there is nothing to clone. "
            "machineset_clone needs an OpenShift 4 cluster with machine-api (IPI on AWS, Azure or GCP); on other "
            "clusters add GPU nodes with the tool that provisions your nodes.".format(API_VERSION, KIND),
        )
    return resource


def _k8s_read():
    from ansible_collections.gpuops.cluster.plugins.module_utils import k8s_read

    return "gpuops.cluster.k8s_read", k8s_read.argument_spec, k8s_read.check_params, k8s_read.run


# machineset_clone's follower: the gpu_machineset role's reads (the GPU MachineSets it made before, the
# ClusterAutoscaler) in its plan's module run: one module start fewer on every OpenShift run.
FOLLOWERS = (("k8s_read", _k8s_read),)


def run(module, client, svc):
    """machineset_clone: create / update / delete GPU MachineSets cloned from worker MachineSets."""
    started = time.monotonic()
    plan = validate_params(module.params)
    # Checked before any read or write, as k8s_ensure checks its followers.
    asked = follow.check(module.params, FOLLOWERS)
    resource = _machineset_resource(svc)
    out = Outcome(plan["namespace"])
    machinesets = list_machinesets(client, resource, out.namespace)
    by_name = dict((name_of(m), m) for m in machinesets)
    sources = select_sources(machinesets, out.namespace, plan["source"], plan["all_workers"], plan["zones"])
    if plan["state"] == "present":
        _present(plan, sources, by_name, out)
    else:
        _absent(plan, sources, by_name, out)

    result = {"changed": bool(out.writes), "namespace": out.namespace}
    if not module.check_mode:
        _write(svc, resource, out, by_name)
        if plan["wait"] and out.items:
            result["progress"] = _wait(module, client, svc, plan, out)
    if module._diff:
        result["diff"] = out.diff
    if plan["state"] == "present":
        result["observed"] = _observe(client, svc, resource, out)
    result["machinesets"] = out.items
    result["duration"] = round(time.monotonic() - started, 3)
    for warning in out.warnings:
        module.warn(warning)
    follow.run(module, client, svc, asked, result, FOLLOWERS)
    return result
