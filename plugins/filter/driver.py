# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the driver role over module_utils/driver_role.py: the build mode, the checks the input rules cannot
make, the lines it shows, the message per node whose driver is not ready, and the driver_result fact."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

driver_role = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.driver_role")


def _mapping(value, what):
    if not isinstance(value, dict):
        raise AnsibleFilterError("{0}: expects a dictionary, got {1}".format(what, type(value).__name__))
    return value


def _list(value, what):
    if not isinstance(value, (list, tuple)):
        raise AnsibleFilterError("{0}: expects a list, got {1}".format(what, type(value).__name__))
    return value


def driver_mode(build_mode, platform, dtk_min_openshift):
    return driver_role.resolve_mode(build_mode, _mapping(platform, "driver_mode"), dtk_min_openshift)


def driver_problems(nodes, checks):
    return driver_role.problems(_list(nodes, "driver_problems"), _mapping(checks, "driver_problems"))


def driver_build_lines(build, prune_stale):
    return driver_role.build_lines(_mapping(build, "driver_build_lines"), prune_stale)


def driver_rollout_lines(ensure, existing):
    return driver_role.rollout_lines(_mapping(ensure, "driver_rollout_lines"), _list(existing, "driver_rollout_lines"))


def driver_node_failures(validation, gpu_nodes, nodes_now):
    return driver_role.node_failures(_mapping(validation, "driver_node_failures"), gpu_nodes, nodes_now)


def driver_result(build, ensure, daemonsets, existing, namespace, validated_nodes=None):
    return driver_role.result(
        _mapping(build, "driver_result"),
        ensure,
        _list(daemonsets, "driver_result"),
        existing,
        namespace,
        validated_nodes,
    )


class FilterModule(object):
    def filters(self):
        return {
            "driver_mode": driver_mode,
            "driver_problems": driver_problems,
            "driver_build_lines": driver_build_lines,
            "driver_rollout_lines": driver_rollout_lines,
            "driver_node_failures": driver_node_failures,
            "driver_result": driver_result,
        }
