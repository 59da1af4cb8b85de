# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter state_inputs: per state, a digest of what it is given (its variables and the collection's files)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

_state_inputs = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.state_inputs")


def state_inputs(states, variables):
    try:
        return _state_inputs.state_inputs(states, variables)
    except GpuopsError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"state_inputs": state_inputs}
