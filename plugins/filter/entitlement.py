# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the entitlement role: whether it applies, the pool, its input problems, the plan, the rollout check,
the object lines (logic in module_utils/entitlement.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

entitlement = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.entitlement")


def _dict(value, what):
    if not isinstance(value, dict):
        raise AnsibleFilterError("{0}: expects a dictionary, got {1}".format(what, type(value).__name__))
    return value


def entitlement_skip_reason(platform, state, enabled, build_mode, dtk_release):
    return entitlement.skip_reason(_dict(platform, "entitlement_skip_reason"), state, enabled, build_mode, dtk_release)


def entitlement_problems(values, skip=False, pem=None, pem_read=False, pool=None, pools=None, ignition_versions=()):
    return entitlement.problems(
        _dict(values, "entitlement_problems"), skip, pem, pem_read, pool, pools, list(ignition_versions or [])
    )


def entitlement_rollout_problems(pool, name, rendered=None, nodes=None, want=None):
    return entitlement.rollout_problems(
        name, _dict(pool or {}, "entitlement_rollout_problems"), rendered, nodes, want or {}
    )


def entitlement_pool(pools, wanted="auto"):
    if not isinstance(pools, list):
        raise AnsibleFilterError("entitlement_pool: expects the list of MachineConfigPools")
    return entitlement.choose_pool(pools, wanted)


def entitlement_plan(pool, state, given_max_unavailable="", pem=None, pem_file="", warn_days=30, check_mode=False):
    return entitlement.plan_line(
        _dict(pool, "entitlement_plan"), state, given_max_unavailable, pem, pem_file, warn_days, check_mode
    )


def entitlement_lines(objects, check_mode=False):
    return entitlement.object_lines(objects, check_mode)


class FilterModule(object):
    def filters(self):
        return {
            "entitlement_skip_reason": entitlement_skip_reason,
            "entitlement_problems": entitlement_problems,
            "entitlement_rollout_problems": entitlement_rollout_problems,
            "entitlement_pool": entitlement_pool,
            "entitlement_plan": entitlement_plan,
            "entitlement_lines": entitlement_lines,
        }
