#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: access_review
short_description: Check that the identity may do what the chosen states need, before any of them writes
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Compares the collection's own RBAC rules (one per need; the ones the C(gpuops.cluster.rbac) role grants) for
    O(states) on O(platform) with what the identity running the play holds, read with one SelfSubjectRulesReview
    per namespace (cluster-wide grants included).
  - Fails, before any state writes, with every missing permission (verb, resource, namespace), the states that
    need it and why, and how to grant it (C(playbooks/rbac.yml)).
  - Where the API server cannot list every rule of the identity (an authorizer besides RBAC, such as a webhook),
    warns instead of failing.
  - Self reviews store nothing; the module changes nothing.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reviews only, so it runs the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  platform:
    description: The cluster's platform (OpenShift needs more rules, for MachineSets, builds, OLM and SCCs).
    type: str
    required: true
    choices: [openshift, kubernetes]
  states:
    description:
      - The states and playbook steps whose rules to check. All when not set.
      - C(ledger), C(timeline), C(diagnose), C(upgrade_preflight) and C(teardown) are the playbook steps besides
        the states of C(site.yml).
      - C(gpu_operator) has no rules of the collection's - the GPU Operator brings its own, much wider,
        ClusterRole; run that mode as a cluster admin.
    type: list
    elements: str
    choices: [preflight, gpu_machineset, entitlement, nfd, driver, container_toolkit, device_plugin,
              gpu_feature_discovery, monitoring, scheduling, gpu_validation, gpu_operator, ledger, timeline, diagnose,
              upgrade_preflight, teardown]
  namespace:
    description: The namespace whose Roles count besides the cluster-wide grants (the GPU stack's namespace).
    type: str
    default: default
  machine_api_namespace:
    description: The namespace of the GPU MachineSets (OpenShift), where the collection's Role grants their writes.
    type: str
    default: openshift-machine-api
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: kubernetes.core.k8s_info
  - name: Kubernetes RBAC, privilege escalation prevention
    description: Why the collection holds what it grants its operands.
    link: https://kubernetes.io/docs/reference/access-authn-authz/rbac/#privilege-escalation-prevention-and-bootstrapping
"""

EXAMPLES = r"""
- name: Check the permissions of the whole of site.yml on OpenShift
  gpuops.cluster.access_review:
    platform: openshift
    namespace: nvidia-gpu-driver

- name: Only what validation needs
  gpuops.cluster.access_review:
    platform: kubernetes
    states: [preflight, gpu_validation]
"""

RETURN = r"""
identity:
  description: The user name the API server sees (SelfSubjectReview; null where the server does not serve it).
  returned: always
  type: str
  sample: system:serviceaccount:gpuops-system:gpuops-installer
missing:
  description: What the identity lacks, one entry per rule of the collection (empty when nothing is missing).
  returned: always
  type: list
  elements: dict
  contains:
    permissions:
      description: The missing permissions in words (verbs, resource, namespace or cluster-wide).
      type: str
    states:
      description: The states that need the rule.
      type: list
      elements: str
    why:
      description: What the rule is for.
      type: str
    when:
      description: The path that needs the rule, for a rule only some runs need; null otherwise.
      type: str
  sample: [{"permissions": "create, patch daemonsets.apps (cluster-wide)", "states": ["driver"], "why": "the operand DaemonSets", "when": null}]
rules:
  description: How many of the collection's rules were checked.
  returned: always
  type: int
  sample: 38
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.access import PLATFORMS, STATES, run
from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module


def argument_spec():
    return module_spec(
        platform=dict(type="str", required=True, choices=list(PLATFORMS)),
        states=dict(type="list", elements="str", choices=list(STATES)),
        namespace=dict(type="str", default="default"),
        machine_api_namespace=dict(type="str", default="openshift-machine-api"),
    )


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
