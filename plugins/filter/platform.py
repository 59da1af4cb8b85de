# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter api_kinds: the served resources from k8s_cluster_info's discovery (module_utils/platform.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.module_utils.platform import api_kinds as _api_kinds


def api_kinds(apis):
    if not isinstance(apis, dict):
        raise AnsibleFilterError("api_kinds: expects the apis dictionary of kubernetes.core.k8s_cluster_info")
    return _api_kinds(apis)


class FilterModule(object):
    def filters(self):
        return {"api_kinds": api_kinds}
