# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The gpu_machineset role's checks and summaries, as plain functions (the filters of plugins/filter/gpu_machineset.py).

What its inputs get wrong beyond argument_specs and the shared rules, the plan (zones, GPU MachineSets, the
accelerator label) from machineset_clone's check-mode answer, the result it hands to later states, the lines
that say what it did, and why a GPU MachineSet is not ready. Pure: no controller or kubernetes import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpuops.cluster.plugins.module_utils import role_inputs, validators

ROLE = "gpu_machineset"
ACCELERATOR_LABEL = "cluster-api/accelerator"
GPU_ROLE_LABEL = "node-role.kubernetes.io/gpu"
MACHINESET_LABEL = "machine.openshift.io/cluster-api-machineset"
GPU_ANNOTATION = "machine.openshift.io/GPU"


def _text(value):
    return "" if value is None else str(value)


def _is_true(value):
    return value is True or _text(value).strip().lower() in ("true", "yes", "on", "1")


def _blank(value):
    return not isinstance(value, str) or not value.strip()


def skip_reason(platform, clouds):
    """Why the role does nothing here ('' when it runs): plain Kubernetes, or an OpenShift platform whose
    MachineSets machineset_clone cannot clone."""
    platform = platform or {}
    if not _is_true(platform.get("openshift")):
        return (
            "plain Kubernetes has no OpenShift Machine API to clone GPU MachineSets from; provision the GPU nodes "
            "with your own tooling and set gpuops_expected_gpu_nodes"
        )
    if platform.get("cloud") not in (clouds or []):
        return (
            "OpenShift on platform {0} has no cloud MachineSets machineset_clone can clone ({1} only); add GPU "
            "nodes by hand".format(platform.get("cloud"), _clouds(clouds))
        )
    return ""


def _clouds(clouds):
    clouds = list(clouds or [])
    return ", ".join(clouds[:-1]) + " and " + clouds[-1] if len(clouds) > 1 else "".join(clouds)


def _whole(values, rules):
    return role_inputs.input_problems(ROLE, rules, values)


def _range_problems(values, low, high, high_min, why):
    """Both bounds whole numbers (the lower >= 0, the higher >= ``high_min``), the lower not above the higher."""
    out = _whole(values, {low: {"rule": "whole", "min": 0}, high: {"rule": "whole", "min": high_min}})
    if not out and int(values[low]) > int(values[high]):
        out.append(
            "{0}: {1} ({2}) is larger than {3} ({4}){5}.".format(ROLE, low, values[low], high, values[high], why)
        )
    return out


def input_problems(values):
    """What the shared rules cannot say about the role's variables (``values``: name -> value), in order."""
    out = []
    if _blank(values.get("gpu_machineset_instance_type")):
        out.append(
            "{0}: gpu_machineset_instance_type must name a GPU instance type (e.g. g4dn.xlarge, g5.xlarge), "
            "got '{1}'.".format(ROLE, _text(values.get("gpu_machineset_instance_type")))
        )
    zones = values.get("gpu_machineset_zones")
    if not isinstance(zones, list) or any(_blank(z) for z in zones):
        out.append(
            "{0}: gpu_machineset_zones must be a list of zone names (e.g. [us-east-2a]), got {1}.".format(
                ROLE, json.dumps(zones, default=str)
            )
        )
    if _blank(values.get("gpu_machineset_name_pattern")):
        out.append(
            "{0}: gpu_machineset_name_pattern must be a non-empty name pattern such as '{{infra}}-gpu-{{suffix}}'.".format(
                ROLE
            )
        )
    accelerator = values.get("gpu_machineset_accelerator")
    if not isinstance(accelerator, str) or validators.label_value_problem(accelerator):
        out.append(
            "{0}: gpu_machineset_accelerator '{1}' is not a valid label value (at most 63 letters, digits, '-', '_', "
            "'.', starting and ending with a letter or digit; e.g. nvidia-tesla-t4); it becomes the {2} node "
            "label.".format(ROLE, _text(accelerator), ACCELERATOR_LABEL)
        )
    if _is_true(values.get("gpu_machineset_autoscaling")):
        bounds = _range_problems(
            values,
            "gpu_machineset_autoscaler_min",
            "gpu_machineset_autoscaler_max",
            1,
            "; the MachineAutoscaler needs minReplicas <= maxReplicas",
        )
        out.extend(bounds)
        replicas = values.get("gpu_machineset_replicas")
        if not bounds and role_inputs.is_whole(replicas):
            low, high = int(values["gpu_machineset_autoscaler_min"]), int(values["gpu_machineset_autoscaler_max"])
            if not low <= int(replicas) <= high:
                out.append(
                    "{0}: gpu_machineset_replicas ({1}) is outside the MachineAutoscaler range "
                    "gpu_machineset_autoscaler_min..gpu_machineset_autoscaler_max ({2}..{3}); the role would fight the "
                    "autoscaler. Give replicas inside the range.".format(ROLE, replicas, low, high)
                )
    if _is_true(values.get("gpu_machineset_cluster_autoscaler")):
        out.extend(
            _range_problems(
                values,
                "gpu_machineset_cluster_autoscaler_gpus_min",
                "gpu_machineset_cluster_autoscaler_gpus_max",
                1,
                "",
            )
        )
    return out


def accelerator_of(model):
    """The cluster-api/accelerator value of a GPU model: nvidia-tesla-t4 for Tesla-T4 (nvidia-gpu when unknown)."""
    if not model:
        return "nvidia-gpu"
    name = re.sub(r"^nvidia-", "", model.lower())
    name = re.sub(r"-+$", "", re.sub(r"[^a-z0-9.]+", "-", name))
    return re.sub(r"[-.]+$", "", ("nvidia-" + name)[:63])


def _unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def plan(result, values, param_vars=None, cluster_autoscaler=None, owner=("gpuops.cluster/owner", ROLE)):
    """The plan from machineset_clone's check-mode ``result`` over every worker MachineSet.

    Returns ``input_problems`` (those of :func:`input_problems`), ``problems`` (the clone refused, or zones
    the workers do not cover, or a ClusterAutoscaler ``default`` that this role did not create while
    ``gpu_machineset_cluster_autoscaler`` asks for one),
    ``available_zones``, ``zones`` (selected), ``machinesets`` (those of the selected zones), ``names``,
    ``gpus_per_node`` and ``accelerator``.
    """
    result = result or {}
    out = {"input_problems": input_problems(values), "problems": []}
    planned = result.get("machinesets")
    if planned is None:
        param = result.get("param") or ""
        msg = _text(result.get("msg"))
        if param and msg.startswith(param + ": "):
            msg = msg[len(param) + 2 :]
        variable = (param_vars or {}).get(param, "gpu_machineset_instance_type")
        out["problems"].append("{0}: {1}: {2}".format(ROLE, variable, msg))
        planned = []
    available = _unique(ms.get("zone") for ms in planned)
    given = [z.strip() for z in values.get("gpu_machineset_zones") or [] if isinstance(z, str)]
    count = (
        int(values.get("gpu_machineset_zone_count") or 1)
        if role_inputs.is_whole(values.get("gpu_machineset_zone_count"))
        else 1
    )
    zones = given if given else available[:count]
    unknown = [z for z in zones if z not in available]
    if not out["problems"] and (unknown or (not given and count > len(available))):
        what = (
            "gpu_machineset_zones: zone(s) {0} not found;".format(", ".join(unknown))
            if unknown
            else "gpu_machineset_zone_count: {0} zones asked, but".format(count)
        )
        out["problems"].append(
            "{0}: {1} the worker MachineSets in {2} cover {3} zone(s): {4}. Pick zones from that list.".format(
                ROLE, what, values.get("gpu_machineset_namespace"), len(available), ", ".join(available)
            )
        )
    chosen = [ms for ms in planned if ms.get("zone") in zones]
    gpu = (chosen[0].get("gpu") or {}) if chosen else {}
    given_accelerator = values.get("gpu_machineset_accelerator")
    accelerator = given_accelerator if given_accelerator else accelerator_of(gpu.get("gpu_model"))
    out.update(
        available_zones=available,
        zones=zones,
        machinesets=chosen,
        names=[ms.get("name") for ms in chosen],
        gpus_per_node=gpu.get("gpu_count"),
        accelerator=accelerator,
    )
    labels = ((cluster_autoscaler or {}).get("metadata") or {}).get("labels") or {}
    if (
        cluster_autoscaler
        and _is_true(values.get("gpu_machineset_cluster_autoscaler"))
        and labels.get(owner[0]) != owner[1]
    ):
        out["problems"].append(
            "{0}: gpu_machineset_cluster_autoscaler: ClusterAutoscaler default exists and was not created by this "
            "role (no label {1}={2}); the role does not take it over. Add resourceLimits.gpus [{{type: {3}, min: {4}, "
            "max: {5}}}] to it yourself and set gpu_machineset_cluster_autoscaler: false.".format(
                ROLE,
                owner[0],
                owner[1],
                accelerator,
                values.get("gpu_machineset_cluster_autoscaler_gpus_min"),
                values.get("gpu_machineset_cluster_autoscaler_gpus_max"),
            )
        )
    return out


def _nodes_of(name, machines):
    return sorted(
        ((m.get("status") or {}).get("nodeRef") or {}).get("name")
        for m in machines or []
        if ((m.get("metadata") or {}).get("labels") or {}).get(MACHINESET_LABEL) == name
        and ((m.get("status") or {}).get("nodeRef") or {}).get("name")
    )


def result(machinesets, machines):
    """What later states get: per GPU MachineSet its name, zone, instance type, replicas, GPUs per node, nodes."""
    return [
        {
            "name": ms.get("name"),
            "zone": ms.get("zone"),
            "instance_type": ms.get("instance_type"),
            "replicas": ms.get("replicas"),
            "gpus_per_node": (ms.get("gpu") or {}).get("gpu_count"),
            "nodes": _nodes_of(ms.get("name"), machines),
        }
        for ms in machinesets or []
    ]


def lines(machinesets, autoscaling, accelerator, taint=False, check_mode=False):
    """One line per GPU MachineSet and per autoscaling object (``autoscaling``: k8s_ensure objects and pruned)."""
    would = "would be " if check_mode else ""
    out = []
    for ms in machinesets or []:
        out.append(
            "{0}: MachineSet {1} {2}{3} (zone {4}, {5} x{6}, {7} GPU(s)/node, {8}={9}{10})".format(
                ROLE,
                ms.get("name"),
                would,
                ms.get("action"),
                ms.get("zone"),
                ms.get("instance_type"),
                ms.get("replicas"),
                (ms.get("gpu") or {}).get("gpu_count") or "?",
                ACCELERATOR_LABEL,
                accelerator,
                ", taint nvidia.com/gpu:NoSchedule" if _is_true(taint) else "",
            )
        )
    for obj in autoscaling or []:
        out.append("{0}: {1} {2} {3}{4}".format(ROLE, obj.get("kind"), obj.get("name"), would, obj.get("action")))
    return out


def _by_name(items):
    return dict(((i.get("metadata") or {}).get("name"), i) for i in items or [])


def _machine_problem(where, machine, nodes):
    status = machine.get("status") or {}
    if status.get("phase") != "Running":
        error = ""
        if "errorReason" in status or "errorMessage" in status:
            error = ": {0} {1}".format(status.get("errorReason", ""), status.get("errorMessage", ""))
        return "{0} phase {1}{2}".format(where, status.get("phase") or "none (not yet reconciled)", error)
    node_name = (status.get("nodeRef") or {}).get("name")
    if node_name is None or node_name not in nodes:
        return "{0}: Node {1} not found".format(where, node_name or "(no nodeRef)")
    conditions = (nodes[node_name].get("status") or {}).get("conditions") or []
    ready = ([c for c in conditions if c.get("type") == "Ready"] + [{}])[0]
    if ready.get("status", "Unknown") != "True":
        return "{0}: Node {1} NotReady ({2}: {3})".format(
            where, node_name, ready.get("reason", "no Ready condition"), ready.get("message", "")
        )
    return None


def verify_problems(wanted, machinesets, machines, nodes, accelerator):
    """Why each GPU MachineSet of ``wanted`` (the role's result) is not ready: its GPU annotation, its template
    node labels, its Machine count, each Machine's phase and its Node's Ready condition."""
    sets, by_node = _by_name(machinesets), _by_name(nodes)
    out = []
    for want in wanted or []:
        name = want.get("name")
        ms = sets.get(name)
        if ms is None:
            out.append("MachineSet {0}: not found".format(name))
            continue
        ann = (ms.get("metadata") or {}).get("annotations") or {}
        template = ((((ms.get("spec") or {}).get("template") or {}).get("spec") or {}).get("metadata") or {}).get(
            "labels"
        ) or {}
        gpus = want.get("gpus_per_node")
        if gpus is not None and ann.get(GPU_ANNOTATION, "") != str(gpus):
            out.append(
                'MachineSet {0}: annotation {1} is "{2}", the instance type has {3} GPU(s): the cluster autoscaler '
                "cannot scale it from zero".format(name, GPU_ANNOTATION, ann.get(GPU_ANNOTATION, ""), gpus)
            )
        if template.get(ACCELERATOR_LABEL, "") != accelerator or GPU_ROLE_LABEL not in template:
            out.append(
                "MachineSet {0}: template node labels lack {1} or {2}={3}".format(
                    name, GPU_ROLE_LABEL, ACCELERATOR_LABEL, accelerator
                )
            )
        mine = [
            m
            for m in machines or []
            if ((m.get("metadata") or {}).get("labels") or {}).get(MACHINESET_LABEL) == name
            and not (m.get("metadata") or {}).get("deletionTimestamp")
        ]
        replicas = (ms.get("spec") or {}).get("replicas", 1)
        if len(mine) != int(replicas):
            out.append("MachineSet {0}: {1} Machine(s), spec.replicas {2}".format(name, len(mine), replicas))
        for machine in mine:
            where = "MachineSet {0}: Machine {1}".format(name, (machine.get("metadata") or {}).get("name"))
            problem = _machine_problem(where, machine, by_node)
            if problem:
                out.append(problem)
    return out
