# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the gpu_machineset role: whether it applies, the plan (with the input problems), the result for later
states, the summary lines and the verify problems (logic in module_utils/gpu_machineset.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

gpu_machineset = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.gpu_machineset")


def _dict(value, what):
    if not isinstance(value, dict):
        raise AnsibleFilterError("{0}: expects a dictionary, got {1}".format(what, type(value).__name__))
    return value


def gpu_machineset_skip_reason(platform, clouds):
    return gpu_machineset.skip_reason(_dict(platform, "gpu_machineset_skip_reason"), clouds)


def gpu_machineset_plan(result, values, param_vars=None, cluster_autoscaler=None, owner_label="gpuops.cluster/owner"):
    return gpu_machineset.plan(
        _dict(result, "gpu_machineset_plan"),
        _dict(values, "gpu_machineset_plan"),
        param_vars,
        cluster_autoscaler,
        (owner_label, "gpu_machineset"),
    )


def gpu_machineset_result(machinesets, machines):
    return gpu_machineset.result(machinesets, machines)


def gpu_machineset_lines(machinesets, autoscaling, accelerator, taint=False, check_mode=False):
    return gpu_machineset.lines(machinesets, autoscaling, accelerator, taint, check_mode)


def gpu_machineset_verify_problems(wanted, machinesets, machines, nodes, accelerator):
    return gpu_machineset.verify_problems(wanted, machinesets, machines, nodes, accelerator)


class FilterModule(object):
    def filters(self):
        return {
            "gpu_machineset_skip_reason": gpu_machineset_skip_reason,
            "gpu_machineset_plan": gpu_machineset_plan,
            "gpu_machineset_result": gpu_machineset_result,
            "gpu_machineset_lines": gpu_machineset_lines,
            "gpu_machineset_verify_problems": gpu_machineset_verify_problems,
        }
