# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter of the rbac role: the installer's ServiceAccount, ClusterRoles, Role and bindings (module_utils/access.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

access = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.access")


def installer_rbac(platform, namespace, service_account, machine_api_namespace="openshift-machine-api", token=True):
    try:
        return access.manifests(platform, namespace, service_account, machine_api_namespace, bool(token))
    except GpuopsError as exc:
        raise AnsibleFilterError("installer_rbac: {0}".format(exc))


class FilterModule(object):
    def filters(self):
        return {"installer_rbac": installer_rbac}
