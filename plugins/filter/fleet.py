# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter of site.yml over several clusters: how each ended, as a table (module_utils/fleet.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

fleet = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.fleet")


def fleet_summary(results):
    try:
        return fleet.summary(list(results or []))
    except GpuopsError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"fleet_summary": fleet_summary}
