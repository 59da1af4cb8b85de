# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter device_plugin_plan: the device plugin role's decisions (module_utils/device_plugin.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

device_plugin = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.device_plugin")


def device_plugin_plan(variables, gpu_nodes, labelled, openshift, config_label):
    if not isinstance(variables, dict):
        raise AnsibleFilterError("device_plugin_plan: expects the role's variables as a dictionary")
    try:
        return device_plugin.plan(variables, list(gpu_nodes or []), list(labelled or []), bool(openshift), config_label)
    except (KeyError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError("device_plugin_plan: {0}".format(exc))


class FilterModule(object):
    def filters(self):
        return {"device_plugin_plan": device_plugin_plan}
