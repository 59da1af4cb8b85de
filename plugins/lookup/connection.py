# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster connection of the current host, for the roles' and playbooks' module_defaults."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: connection
short_description: The kubernetes.core connection options of the current host's cluster
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Returns the kubernetes.core connection options (C(kubeconfig), C(context), C(host), C(api_key), C(ca_cert),
    C(validate_certs)) set for the current host by the variables C(gpuops_kubeconfig), C(gpuops_context),
    C(gpuops_api_host), C(gpuops_api_key), C(gpuops_ca_cert) and C(gpuops_validate_certs).
  - An unset or empty variable is left out, so that the K8S_AUTH_* environment (what AWX's bearer-token credential
    injects) stays in charge of it.
  - Every role and playbook of the collection sets its modules' connection with it, once, in C(module_defaults); with
    one inventory host per cluster, each host reaches its own cluster.
options: {}
notes:
  - C(gpuops_api_key) is a secret; keep it in a vault or an AWX credential. The modules never print it (no_log).
"""

EXAMPLES = r"""
- name: Every module of the collection talks to this host's cluster
  module_defaults:
    group/gpuops.cluster.gpuops: "{{ lookup('gpuops.cluster.connection') }}"
  ansible.builtin.include_role:
    name: gpuops.cluster.gpu_validation
"""

RETURN = r"""
_raw:
  description: One dictionary of the connection options that are set (possibly empty).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

# Variable -> kubernetes.core option (plugins/doc_fragments/k8s_auth_options of kubernetes.core).
OPTIONS = (
    ("gpuops_kubeconfig", "kubeconfig"),
    ("gpuops_context", "context"),
    ("gpuops_api_host", "host"),
    ("gpuops_api_key", "api_key"),
    ("gpuops_ca_cert", "ca_cert"),
    ("gpuops_validate_certs", "validate_certs"),
)


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if terms:
            raise AnsibleLookupError(
                "gpuops.cluster.connection takes no terms; it reads the gpuops_* connection variables"
            )
        variables = variables or {}
        out = {}
        for var, option in OPTIONS:
            if var not in variables:
                continue
            value = self._templar.template(variables[var])
            if value is None or value == "":
                continue
            out[option] = value
        return [out]
