# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter operand_pod_states: per node, the DaemonSet pod running there and its state in words."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

operand_pods = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods")


def operand_pod_states(pods, node_names):
    if not isinstance(pods, list) or not isinstance(node_names, list):
        raise AnsibleFilterError("operand_pod_states: expects a list of pods and a list of node names")
    return operand_pods.operand_pod_states(pods, node_names)


class FilterModule(object):
    def filters(self):
        return {"operand_pod_states": operand_pod_states}
