# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter failure_signatures: the known failures log lines show (module_utils/diagnose), with cause, fix and source."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

match = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.match")


def failure_signatures(lines, where=None):
    if isinstance(lines, str):
        lines = [lines]
    if not isinstance(lines, list):
        raise AnsibleFilterError("failure_signatures: expects log lines (a string or a list of strings or dicts)")
    try:
        return match.match_lines(lines, where)
    except GpuopsError as exc:
        raise AnsibleFilterError("failure_signatures: {0}".format(exc))


class FilterModule(object):
    def filters(self):
        return {"failure_signatures": failure_signatures}
