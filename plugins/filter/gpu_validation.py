# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter gpu_validation_problems: the gpu_validation inputs no input rule covers, and what the cluster lacks
(module_utils/gpu_validation.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

_gpu_validation = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validation")


def gpu_validation_problems(values, all_checks, gpu_nodes=None, expected_gpu_nodes=0, namespace_exists=True):
    if not isinstance(values, dict):
        raise AnsibleFilterError("gpu_validation_problems: expects the role's variables as a dictionary")
    out = _gpu_validation.gpu_validation_problems(values, list(all_checks or []))
    if gpu_nodes is not None:
        out += _gpu_validation.gpu_node_problems(
            list(gpu_nodes), expected_gpu_nodes, values.get("gpu_validation_namespace"), bool(namespace_exists)
        )
    return out


class FilterModule(object):
    def filters(self):
        return {"gpu_validation_problems": gpu_validation_problems}
