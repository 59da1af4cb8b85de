#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: node_taints
short_description: Add taints to many nodes in one task, and take back only the ones it added
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Reads every node with one list request and sends a patch only to the nodes that lack a taint of O(taints)
    (O(state=present)), so a second run sends no write at all. Patches go out in parallel (O(parallel)).
  - A node's C(spec.taints) is an atomic list, so a strategic-merge or server-side-apply write would replace the
    whole list and take ownership of taints that others own (C(node.kubernetes.io/unschedulable) of a cordon, the
    node lifecycle controller's). This module sends a JSON patch that only appends the missing taints, or removes
    its own by index, guarded by a C(test) of the node's resourceVersion; a node changed in between is read and
    planned again.
  - The taints it added are recorded in the node annotation C(gpuops.cluster/added-taints). O(state=absent)
    removes the taints of O(taints) that this annotation records, and the annotation; taints that were already
    there before (set by hand, or by a MachineSet template) are never removed.
  - A node that carries a taint with the same key and effect but another value is an error (changing the value
    would change a taint somebody else set).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: No patch is sent; the result shows the taints as they would be.
  diff_mode:
    support: full
    details: One before/after entry per changed node with its taints and the annotation.
  platform:
    platforms: all
options:
  taints:
    description: The taints to add (or take back).
    type: list
    elements: dict
    required: true
    suboptions:
      key:
        description: Taint key.
        type: str
        required: true
      value:
        description: Taint value (empty for none).
        type: str
        default: ""
      effect:
        description: Taint effect.
        type: str
        required: true
        choices: [NoSchedule, PreferNoSchedule, NoExecute]
  state:
    description:
      - V(present) adds the taints the nodes lack; V(absent) removes those this module added.
    type: str
    default: present
    choices: [present, absent]
  node_names:
    description:
      - Names of the nodes. Every name must exist. Required with O(state=present).
      - With O(state=absent) and no names, every node whose annotation records one of O(taints).
    type: list
    elements: str
  parallel:
    description: Number of patches in flight at once (capped by the kubernetes client connection pool size).
    type: int
    default: 16
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: kubernetes.core.k8s_taint
  - module: gpuops.cluster.nfd_labels
"""

EXAMPLES = r"""
- name: Taint every GPU node, in one task
  gpuops.cluster.node_taints:
    node_names: "{{ gpuops_nfd.gpu_nodes }}"
    taints:
      - key: nvidia.com/gpu
        effect: NoSchedule

- name: Take the taint back from every node it was added to
  gpuops.cluster.node_taints:
    state: absent
    taints:
      - key: nvidia.com/gpu
        effect: NoSchedule
"""

RETURN = r"""
changed_nodes:
  description: Names of the nodes that were (or in check mode would be) patched.
  returned: always
  type: list
  elements: str
nodes:
  description: Each selected node, what happened (C(added), C(removed), C(unchanged)) and its taints afterwards.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "gpu-0", "action": "added", "changed_taints": ["nvidia.com/gpu=:NoSchedule"],
            "taints": ["node.kubernetes.io/unschedulable=:NoSchedule", "nvidia.com/gpu=:NoSchedule"]}]
diff:
  description: One before/after entry per changed node.
  returned: in diff mode
  type: list
  elements: dict
duration:
  description: Seconds the task took.
  returned: always
  type: float
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.node_taints import argument_spec, run


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
