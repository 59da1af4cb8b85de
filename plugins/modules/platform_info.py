#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: platform_info
short_description: Detect the platform, check the identity's access and count the nodes, in one module run
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Reads the API server's version and every API it serves (discovery, as M(kubernetes.core.k8s_cluster_info) reads
    it, the cache refreshed), and tells OpenShift (C(config.openshift.io) served) from plain Kubernetes.
  - Stops there, with RV(requirements_met) false, when the server is older than O(min_kubernetes_minor) or not
    OpenShift while O(require_openshift); the caller says why in its own words.
  - Then checks, as M(gpuops.cluster.access_review) does, that the identity holds what O(access_states) need (fails
    naming every missing permission), reads the OpenShift Infrastructure and ClusterVersion, what the NVIDIA GPU
    Operator leaves on a cluster (O(gpu_operator_check)), and every node's NFD facts (as M(gpuops.cluster.nfd_labels)
    gives them).
  - With O(state_ledger), then asks the state ledger which states must run, as M(gpuops.cluster.state_ledger) does.
  - One module run instead of five tasks (k8s_cluster_info, access_review, k8s_read, nfd_labels and state_ledger).
    Each module task starts a Python and imports the kubernetes client, about 0.6 s with ansible-core's default
    engine.
  - Reads only (self reviews store nothing).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads only, so it runs the same in check mode.
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  min_kubernetes_minor:
    description: The oldest Kubernetes minor version (1.N) the caller supports.
    type: int
    default: 0
  require_openshift:
    description: Whether the caller needs OpenShift.
    type: bool
    default: false
  check_access:
    description: Check the identity's access (as M(gpuops.cluster.access_review)); C(false) skips it.
    type: bool
    default: true
  access_states:
    description: The states and playbook steps whose rules to check, as M(gpuops.cluster.access_review)'s C(states). All when not set.
    type: list
    elements: str
    choices: [preflight, gpu_machineset, entitlement, nfd, driver, container_toolkit, device_plugin,
              gpu_feature_discovery, monitoring, scheduling, gpu_validation, gpu_operator, ledger, timeline, diagnose,
              upgrade_preflight, teardown]
  access_namespace:
    description: The namespace whose Roles count besides the cluster-wide grants (the GPU stack's namespace).
    type: str
    default: default
  machine_api_namespace:
    description: The namespace of the GPU MachineSets (OpenShift), where the collection's Role grants their writes.
    type: str
    default: openshift-machine-api
  gpu_operator_check:
    description: Read the ClusterPolicies and OLM Subscriptions, for RV(gpu_operator_found).
    type: bool
    default: false
  state_ledger:
    description:
      - The options of M(gpuops.cluster.state_ledger) in its C(check) mode (C(states), C(namespace), C(name),
        C(gpu_label), C(force)), without its connection options. After the reads above, the ledger is asked as
        state_ledger asks it, in this module run; RV(state_ledger) holds what state_ledger returns.
      - Checked by state_ledger's own rules before anything is read (a bad one fails the task naming
        C(state_ledger.<option>)); C(mode=record), C(mode=invalidate) and C(write) are refused (they stay tasks of
        their own). Not asked when RV(requirements_met) is false.
    type: dict
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: kubernetes.core.k8s_cluster_info
  - module: gpuops.cluster.access_review
  - module: gpuops.cluster.nfd_labels
  - module: gpuops.cluster.state_ledger
"""

EXAMPLES = r"""
- name: Detect the platform, check access for the driver state, and count the nodes
  gpuops.cluster.platform_info:
    min_kubernetes_minor: 24
    access_states: [driver]
    access_namespace: nvidia-gpu-driver
    gpu_operator_check: true
  register: cluster

- name: Say what was found
  ansible.builtin.debug:
    msg: >-
      {{ 'OpenShift ' ~ cluster.platform.openshift_version if cluster.openshift else 'Kubernetes' }},
      {{ cluster.platform.nodes }} nodes, {{ cluster.gpu_nodes | length }} labelled by NFD as GPU nodes
"""

RETURN = r"""
host:
  description: The API server's URL.
  returned: always
  type: str
  sample: https://api.ocp.example.com:6443
version:
  description: The server's Kubernetes version, as C(/version) returns it.
  returned: always
  type: dict
  sample: {"major": "1", "minor": "32", "gitVersion": "v1.32.5"}
openshift:
  description: Whether the server serves C(config.openshift.io).
  returned: always
  type: bool
requirements_met:
  description: Whether the server meets O(min_kubernetes_minor) and O(require_openshift); when false nothing else is read.
  returned: always
  type: bool
access:
  description: M(gpuops.cluster.access_review)'s result (C(identity), C(missing), C(rules)); null when not checked.
  returned: always
  type: dict
platform:
  description: What later states need to know of the cluster; null when RV(requirements_met) is false.
  returned: always
  type: dict
  contains:
    openshift:
      description: As RV(openshift).
      type: bool
    kubernetes_version:
      description: The server's gitVersion.
      type: str
    openshift_version:
      description: The ClusterVersion's desired version.
      type: str
      returned: on OpenShift
    cloud:
      description: The Infrastructure's platform (C(AWS), ...), C(none) elsewhere.
      type: str
    region:
      description: The AWS region of the Infrastructure, empty elsewhere.
      type: str
    infrastructure_name:
      description: The Infrastructure's name (the prefix of the cluster's cloud objects), empty elsewhere.
      type: str
    api_kinds:
      description: Every resource the server serves as C(group/version/Kind) (C(v1/Node) for the core group), sorted.
      type: list
      elements: str
    nodes:
      description: How many nodes the cluster has.
      type: int
    gpu_nodes:
      description: How many nodes advertise C(nvidia.com/gpu) (allocatable set, even at 0).
      type: int
    gpu_namespace:
      description:
        - The namespace O(access_namespace) (the GPU stack's) and whether it exists; C(exists) is null when it could
          not be read.
      type: dict
  sample: {"openshift": true, "kubernetes_version": "v1.32.5", "openshift_version": "4.19.3", "cloud": "AWS",
           "region": "us-east-1", "infrastructure_name": "ocp-x7k2p", "api_kinds": ["v1/Node"], "nodes": 6, "gpu_nodes": 2,
           "gpu_namespace": {"name": "nvidia-gpu-driver", "exists": true}}
gpu_nodes:
  description: The facts of every node NFD labelled as carrying an NVIDIA PCI device, as M(gpuops.cluster.nfd_labels)'s C(nodes).
  returned: always
  type: list
  elements: dict
gpu_operator_found:
  description: What says the GPU Operator manages the cluster (C(ClusterPolicy NAME), C(Subscription NS/gpu-operator-certified)).
  returned: always
  type: list
  elements: str
  sample: ["ClusterPolicy gpu-cluster-policy"]
state_ledger:
  description: With O(state_ledger), what M(gpuops.cluster.state_ledger) returns for those options (C(run), C(skip),
    C(reasons), C(recorded)); null without it.
  returned: always
  type: dict
  sample: {"run": ["device_plugin"], "skip": ["gpu_machineset", "nfd"], "recorded": true,
           "reasons": {"device_plugin": "ConfigMap nvidia-gpu/nvidia-device-plugin-config was changed"}}
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.access import STATES
from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.platform import run


def argument_spec():
    return module_spec(
        min_kubernetes_minor=dict(type="int", default=0),
        require_openshift=dict(type="bool", default=False),
        check_access=dict(type="bool", default=True),
        access_states=dict(type="list", elements="str", choices=list(STATES)),
        access_namespace=dict(type="str", default="default"),
        machine_api_namespace=dict(type="str", default="openshift-machine-api"),
        gpu_operator_check=dict(type="bool", default=False),
        state_ledger=dict(type="dict"),
    )


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
