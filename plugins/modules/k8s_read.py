#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: k8s_read
short_description: Several k8s_info reads in one task
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Runs each read of O(reads) as M(kubernetes.core.k8s_info) does (kubernetes.core's own lookup; a missing object
    is an empty list, an API the server does not serve is RV(answers[].api_found) false), in one module run.
  - A looped k8s_info starts one module process per item (about 0.6 s each before the first request); the reads
    themselves take milliseconds.
  - RV(answers) has one entry per read, in the order of O(reads), each shaped as an item of a looped k8s_info
    register (C(item), C(resources), C(api_found)); RV(found) holds the resources by each read's O(reads[].key).
  - The list is not called C(results), as a looped register's is, because Ansible shows a result's C(results)
    even when C(no_log) hides the rest of it; with C(no_log), nothing of what was read is shown.
  - Reads only.
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
  reads:
    description: What to read, in order.
    type: list
    elements: dict
    required: true
    suboptions:
      key:
        description: The name of this read in RV(found); by default O(reads[].kind). Two reads of one kind need keys.
        type: str
      api_version:
        description: The group/version, as for k8s_info.
        type: str
        default: v1
      kind:
        description: The kind, as for k8s_info.
        type: str
        required: true
      name:
        description: One object by name; all objects of the kind when not set.
        type: str
      namespace:
        description: The namespace of a namespaced kind; all namespaces when not set.
        type: str
      label_selectors:
        description: Label selectors, as for k8s_info.
        type: list
        elements: str
      field_selectors:
        description: Field selectors, as for k8s_info.
        type: list
        elements: str
      skip:
        description: Do not read; the result has C(skipped) true and no resources (keeps the indexes of RV(answers)).
        type: bool
        default: false
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: kubernetes.core.k8s_info
"""

EXAMPLES = r"""
- name: Read the OpenShift Infrastructure and ClusterVersion in one task
  gpuops.cluster.k8s_read:
    reads:
      - {api_version: config.openshift.io/v1, kind: Infrastructure, name: cluster}
      - {api_version: config.openshift.io/v1, kind: ClusterVersion, name: version}
  register: ocp

- name: Say the platform
  ansible.builtin.debug:
    msg: "{{ (ocp.found.Infrastructure | first).status.platform }}"
"""

RETURN = r"""
answers:
  description: One entry per read, in the order of O(reads), each as an item of a looped k8s_info register.
  returned: always
  type: list
  elements: dict
  contains:
    item:
      description: The read, with its O(reads[].key).
      type: dict
    resources:
      description: The objects found, empty when none.
      type: list
      elements: dict
    api_found:
      description: Whether the server serves the kind (null for a skipped read).
      type: bool
    skipped:
      description: True for a read with O(reads[].skip).
      type: bool
      returned: when the read was skipped
  sample: [{"item": {"key": "Namespace", "kind": "Namespace", "name": "nvidia-gpu"}, "api_found": true, "resources": []}]
found:
  description: The resources of each read by its O(reads[].key).
  returned: always
  type: dict
  sample: {"Namespace": [], "Node": [{"metadata": {"name": "gpu-1"}}]}
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s_read import argument_spec, run


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
