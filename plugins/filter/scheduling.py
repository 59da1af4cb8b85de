# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the scheduling role's decisions (module_utils/scheduling.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

scheduling = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.scheduling")


def _guard(name, func, *args):
    if not isinstance(args[0], dict):
        raise AnsibleFilterError("{0}: expects the role's variables as a dictionary".format(name))
    try:
        return func(*args)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise AnsibleFilterError("{0}: {1}".format(name, exc))


def scheduling_input_problems(variables):
    return _guard("scheduling_input_problems", scheduling.input_problems, variables)


def scheduling_plan(variables, gpu_nodes, reads, owner):
    machinesets = reads.get("MachineSet", [])
    namespaces = [n["metadata"]["name"] for n in reads.get("Namespace", [])]
    plan = _guard(
        "scheduling_plan",
        scheduling.plan,
        variables,
        list(gpu_nodes),
        namespaces,
        reads.get("PriorityClass", []),
        reads.get("Node", []),
        owner,
    )
    plan["namespaces"] = namespaces
    plan["machinesets"] = [m["metadata"]["name"] for m in machinesets]
    plan["untainted_machinesets"] = scheduling.untainted_machinesets(
        machinesets,
        variables["scheduling_taint_key"],
        variables["scheduling_taint_value"],
        variables["scheduling_taint_effect"],
    )
    return plan


def scheduling_probes(variables):
    return _guard("scheduling_probes", scheduling.probes, variables)


def scheduling_probe_failures(variables, probes, results):
    return _guard("scheduling_probe_failures", scheduling.probe_failures, variables, list(probes), list(results))


def scheduling_summary(variables, plan, added, taken, objects, check_mode):
    return _guard(
        "scheduling_summary",
        scheduling.summary,
        variables,
        plan,
        list(added),
        list(taken),
        list(objects),
        bool(check_mode),
    )


class FilterModule(object):
    def filters(self):
        return {
            "scheduling_input_problems": scheduling_input_problems,
            "scheduling_plan": scheduling_plan,
            "scheduling_probes": scheduling_probes,
            "scheduling_probe_failures": scheduling_probe_failures,
            "scheduling_summary": scheduling_summary,
        }
