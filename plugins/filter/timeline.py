# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for site.yml: the states to run, and the time-to-GPU-ready timeline (logic in module_utils/timeline)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

timeline = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.timeline")


def gpu_timeline(marks, nodes=None, machines=None, pods=None, validated=None, driver_pods=None):
    # driver_pods: the name of the pods argument before the toolkit/plugin steps existed.
    return timeline.build(marks or [], nodes or [], machines or [], (pods or []) + (driver_pods or []), validated or {})


def state_range(states, from_state=None, until_state=None):
    try:
        return timeline.state_range(states, from_state or None, until_state or None)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"gpu_timeline": gpu_timeline, "state_range": state_range}
