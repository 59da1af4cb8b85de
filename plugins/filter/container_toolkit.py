# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the container_toolkit role, over module_utils/container_toolkit.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

_ctk = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.container_toolkit")


def _list(value, what):
    if not isinstance(value, list):
        raise AnsibleFilterError("{0}: expects a list, got {1}".format(what, type(value).__name__))
    return value


def container_toolkit_host_files(names, values):
    names, values = _list(names, "container_toolkit_host_files"), list(values)
    if len(names) != len(values):
        raise AnsibleFilterError("container_toolkit_host_files: give one value per name, in the names' order")
    return _ctk.host_file_problems(names, values)


def container_toolkit_plan(nodes, runtime, openshift, namespace, namespace_read, check_mode, gpu_labels):
    return _ctk.plan(
        _list(nodes, "container_toolkit_plan"), runtime, openshift, namespace, namespace_read, check_mode, gpu_labels
    )


def container_toolkit_not_ready(not_ready, node_runtimes, runtime, daemonset):
    return _ctk.not_ready_lines(_list(not_ready, "container_toolkit_not_ready"), node_runtimes, runtime, daemonset)


class FilterModule(object):
    def filters(self):
        return {
            "container_toolkit_host_files": container_toolkit_host_files,
            "container_toolkit_plan": container_toolkit_plan,
            "container_toolkit_not_ready": container_toolkit_not_ready,
        }
