# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the gpu_operator role: OLM, the ClusterPolicy, the Helm values and the other stack
(module_utils/gpu_operator.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

gpu_operator = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.gpu_operator")
olm = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.olm")


def _mapping(value, name):
    if not isinstance(value, dict):
        raise AnsibleFilterError("{0}: expects a dictionary, got {1}".format(name, type(value).__name__))
    return value


def gpu_operator_olm_inputs(found, channel, settings):
    return olm.olm_inputs(_mapping(found, "gpu_operator_olm_inputs"), channel, settings)


def gpu_operator_olm_outcome(read, settings, channel, check_mode=False):
    return olm.olm_outcome(_mapping(read, "gpu_operator_olm_outcome"), settings, channel, check_mode)


def gpu_operator_cluster_policy(choices):
    return gpu_operator.cluster_policy(_mapping(choices, "gpu_operator_cluster_policy"))


def gpu_operator_sharing_configs(choices):
    return gpu_operator.sharing_configs(_mapping(choices, "gpu_operator_sharing_configs"))


def gpu_operator_install_plan(subscriptions, plans, pinned=""):
    return gpu_operator.install_plan(subscriptions, plans, pinned)


def gpu_operator_policy_outcome(policies, name, wait_timeout, check_mode=False):
    return gpu_operator.policy_outcome(policies, name, wait_timeout, check_mode)


def gpu_operator_manual_stack(daemonsets):
    return gpu_operator.manual_stack_problems(daemonsets)


def gpu_operator_absent_objects(found, names):
    return gpu_operator.absent_objects(_mapping(found, "gpu_operator_absent_objects"), _mapping(names, "names"))


def gpu_operator_plan(choices, found, settings):
    return gpu_operator.plan(
        _mapping(choices, "gpu_operator_plan"), _mapping(found, "found"), _mapping(settings, "settings")
    )


def gpu_operator_overrides_problems(overrides):
    return gpu_operator.overrides_problems(overrides)


class FilterModule(object):
    def filters(self):
        return {
            "gpu_operator_olm_inputs": gpu_operator_olm_inputs,
            "gpu_operator_olm_outcome": gpu_operator_olm_outcome,
            "gpu_operator_cluster_policy": gpu_operator_cluster_policy,
            "gpu_operator_sharing_configs": gpu_operator_sharing_configs,
            "gpu_operator_install_plan": gpu_operator_install_plan,
            "gpu_operator_policy_outcome": gpu_operator_policy_outcome,
            "gpu_operator_manual_stack": gpu_operator_manual_stack,
            "gpu_operator_absent_objects": gpu_operator_absent_objects,
            "gpu_operator_overrides_problems": gpu_operator_overrides_problems,
            "gpu_operator_plan": gpu_operator_plan,
        }
