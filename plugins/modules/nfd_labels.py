#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nfd_labels
short_description: Read NFD / GPU Feature Discovery node labels into facts and set or remove node labels in bulk
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Reads what Node Feature Discovery (NFD) and GPU Feature Discovery (GFD) put on the nodes. Which nodes have an
    NVIDIA GPU (NFD's C(feature.node.kubernetes.io/pci-10de.present), C(pci-0302_10de.present) or
    C(pci-0300_10de.present) C(=true), whichever form the NFD configuration produces; see O(gpu_label)), their
    kernel version (C(kernel-version.full)), OS release (C(system-os_release.*)), and the GFD details
    (C(nvidia.com/gpu.product), C(.count), C(.memory), C(.family), compute capability, CUDA driver and runtime
    versions, MIG strategy and devices, sharing strategy and replicas).
  - The GPU nodes are the same nodes M(gpuops.cluster.gpu_validate) and M(gpuops.cluster.driver_container_build)
    work on when their O(node_selector) is empty.
  - Groups the GPU nodes by kernel version and by OS build, which is what per-kernel driver builds need.
  - Optionally waits until the nodes reach a state, for example at least N nodes labelled by NFD (O(wait_for)).
  - Optionally sets or removes labels on a selected set of nodes (O(node_selector), O(label_selectors) and/or
    O(node_names)) in one task. The nodes are read with one list request. Only the nodes whose labels differ get a
    JSON merge patch, and the patches are sent in parallel (O(parallel)). So labelling 500 nodes is one task and a
    few seconds, and a second run sends no write at all.
  - Label keys and values are checked against the Kubernetes rules before anything is written.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.wait
  - gpuops.cluster.node_selection
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
    details: No patch is sent; the result and the facts show the labels as they would be.
  diff_mode:
    support: full
    details: One before/after entry per changed node, with the changed label keys.
  facts:
    support: full
  platform:
    platforms: all
options:
  labels:
    description:
      - Labels to set on the selected nodes (O(state=present)), or to remove (O(state=absent), values ignored).
      - With O(state=present) a V(null) value removes that label.
      - Booleans and numbers are written as Kubernetes strings (V(true) becomes C("true")).
      - Without O(labels) the module only reads (and waits).
      - Required with O(state=absent).
    type: dict
  state:
    description:
      - Whether O(labels) are set (V(present)) or removed (V(absent)).
    type: str
    default: present
    choices: [present, absent]
  node_selector:
    description:
      - Labels every node to read and label carries (label key to value; an empty value matches a label set to "").
      - Also accepted as a string C(key=value,key2=value2), so the equality selectors of older playbooks keep working.
        Existence (C(key)), C(!key) and set-based (C(key in (a,b))) selectors go in O(label_selectors).
      - Unlike the other modules, an empty O(node_selector) selects B(all) nodes here (the result tells which are
        GPU nodes, see RV(gpu_nodes)).
      - Changing labels needs O(node_selector), O(label_selectors), O(node_names) or O(gpu_nodes_only); a selection
        that matches no node is an error then.
    type: dict
    default: {}
  label_selectors:
    description:
      - Label selectors in kubectl syntax (C(node-role.kubernetes.io/worker), C(!gpuops.io/pool),
        C(kubernetes.io/arch in (amd64,arm64))) for what a dictionary cannot say. A node must match all of them
        and O(node_selector).
    type: list
    elements: str
  node_names:
    description:
      - Names of the nodes to read and label. With O(node_selector) or O(label_selectors), only nodes that also
        match count.
      - Every name must exist.
    type: list
    elements: str
  gpu_label:
    description:
      - Node label whose value C(true) marks a node with an NVIDIA GPU, instead of the three NFD forms.
      - When not set, a node is a GPU node when NFD labelled it C(feature.node.kubernetes.io/pci-10de.present),
        C(pci-0302_10de.present) or C(pci-0300_10de.present) C(=true), the definition every gpuops.cluster module
        uses. Set it only for a label of your own.
    type: str
  gpu_nodes_only:
    description:
      - Read only the GPU nodes (among those O(node_selector), O(label_selectors) and O(node_names) select), with
        one list request per form of the GPU label, each with a server-side label selector C(<label>=true), instead
        of one request for every node. On 1,000 nodes with 100 GPU nodes, 100 nodes are read and returned.
      - RV(nodes) and RV(summary) then cover the GPU nodes only, and O(wait_for) counts among them.
      - With O(labels), the GPU nodes are the selection to label (no O(node_selector) needed).
      - The server matches the value C(true) exactly, as NFD writes it.
    type: bool
    default: false
  wait_for:
    description:
      - Before reading (and labelling), wait until the selected nodes reach this state.
      - Skipped in check mode, as kubernetes.core skips waits there.
      - The first looks are 0.5 s apart, the interval doubling up to O(wait_sleep), so the wait ends soon after NFD
        labelled the nodes.
    type: dict
    suboptions:
      gpu_nodes:
        description: At least this many selected nodes are GPU nodes (see O(gpu_label)).
        type: int
      gfd_nodes:
        description: At least this many GPU nodes carry the GFD label C(nvidia.com/gpu.product).
        type: int
  wait_timeout:
    description:
      - Seconds to wait for O(wait_for); 300 when not set. Must be at least O(wait_sleep).
    type: int
  parallel:
    description:
      - Number of label patches in flight at once (capped by the kubernetes client connection pool size).
    type: int
    default: 16
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: gpuops.cluster.gpu_validate
  - module: gpuops.cluster.driver_container_build
  - module: gpuops.cluster.machineset_clone
"""

EXAMPLES = r"""
- name: Wait for NFD to label 3 GPU nodes, then read kernel versions
  gpuops.cluster.nfd_labels:
    wait_for:
      gpu_nodes: 3
    wait_timeout: 600
  register: nfd

- name: One driver build per kernel version
  ansible.builtin.debug:
    msg: "{{ item.key }} on {{ item.value | join(', ') }}"
  loop: "{{ nfd.kernel_versions | dict2items }}"

- name: Read the GPU nodes only (on a large cluster, 3 small lists instead of every node)
  gpuops.cluster.nfd_labels:
    gpu_nodes_only: true
  register: gpu

- name: Give every GPU node a role label, in one task
  gpuops.cluster.nfd_labels:
    node_selector:
      feature.node.kubernetes.io/pci-10de.present: "true"
    labels:
      node-role.kubernetes.io/gpu: ""
      nvidia.com/gpu.deploy.driver: "true"

- name: Label the workers that have no pool yet
  gpuops.cluster.nfd_labels:
    label_selectors:
      - node-role.kubernetes.io/worker
      - "!gpuops.io/pool"
    labels:
      gpuops.io/pool: default

- name: Remove a label from two nodes
  gpuops.cluster.nfd_labels:
    node_names: [ip-10-0-138-78.us-east-2.compute.internal, ip-10-0-139-12.us-east-2.compute.internal]
    state: absent
    labels:
      gpuops.io/pool:
"""

RETURN = r"""
nodes:
  description: Per selected node, what the NFD / GFD labels say (after the label changes).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Node name.
      type: str
    gpu:
      description: Whether the node is a GPU node (an NFD NVIDIA PCI label, or O(gpu_label), is C(true)).
      type: bool
    ready:
      description: Whether the Ready condition is True.
      type: bool
    instance_type:
      description: Value of C(node.kubernetes.io/instance-type).
      type: str
    zone:
      description: Value of C(topology.kubernetes.io/zone).
      type: str
    kernel_version:
      description: C(feature.node.kubernetes.io/kernel-version.full).
      type: str
      sample: 4.18.0-193.29.1.el8_2.x86_64
    kernel:
      description: All C(kernel-version.*) labels (full, major, minor, revision).
      type: dict
    os_release:
      description: All C(system-os_release.*) labels by key (ID, VERSION_ID, OSTREE_VERSION, ...).
      type: dict
      sample: {"ID": "rhcos", "VERSION_ID": "4.6"}
    gfd:
      description: GPU Feature Discovery labels; empty when GFD has not labelled the node.
      type: dict
      sample: {"present": true, "product": "Tesla-T4", "count": 1, "memory": 15109, "family": "turing",
               "compute_capability": "7.5", "cuda_driver": "450.80.02", "cuda_runtime": "11.0",
               "machine": "g4dn.xlarge"}
      contains:
        mig_capable:
          description: C(nvidia.com/mig.capable); only when GFD publishes it.
          type: bool
        mig_strategy:
          description: C(nvidia.com/mig.strategy) (C(single), C(mixed) or C(none)); only when present.
          type: str
        mig_devices:
          description: MIG devices per profile from C(nvidia.com/mig-<profile>.count); only when present.
          type: dict
          sample: {"1g.10gb": 4, "3g.40gb": 1}
        replicas:
          description: C(nvidia.com/gpu.replicas) (time-slicing or MPS replicas); only when present.
          type: int
        sharing_strategy:
          description: C(nvidia.com/gpu.sharing-strategy) (C(time-slicing), C(mps) or C(none)); only when present.
          type: str
    allocatable_gpus:
      description: C(status.allocatable["nvidia.com/gpu"]) as a number, null when absent.
      type: int
    container_runtime:
      description: C(status.nodeInfo.containerRuntimeVersion), the runtime the kubelet uses; null when absent.
      type: str
      sample: cri-o://1.29.5
    changed:
      description: Whether this node's labels were (or would be) changed.
      type: bool
gpu_nodes:
  description: Names of the selected GPU nodes (an NFD NVIDIA PCI label, or O(gpu_label), is C(true)).
  returned: always
  type: list
  elements: str
kernel_versions:
  description: GPU node names grouped by kernel version (C(unknown) when the label is missing).
  returned: always
  type: dict
  sample: {"4.18.0-193.29.1.el8_2.x86_64": ["node-a", "node-b"]}
os_versions:
  description: GPU node names grouped by OS build (C(OSTREE_VERSION), else C(ID-VERSION_ID)).
  returned: always
  type: dict
  sample: {"46.82.202011061621-0": ["node-a"]}
summary:
  description: Counts (nodes, gpu_nodes, gfd_nodes, kernel_versions) and GPU products with their node counts.
  returned: always
  type: dict
  sample: {"nodes": 6, "gpu_nodes": 2, "gfd_nodes": 2, "kernel_versions": 1, "products": {"Tesla-T4": 2}}
changed_nodes:
  description: Names of the nodes whose labels were (or in check mode would be) changed.
  returned: always
  type: list
  elements: str
diff:
  description: One entry per changed node with the changed label keys before and after (empty when nothing changes).
  returned: in diff mode when labels are given
  type: list
  elements: dict
  sample: [{"before_header": "Node node-a", "after_header": "Node node-a",
            "before": {"metadata": {"name": "node-a", "labels": {}}},
            "after": {"metadata": {"name": "node-a", "labels": {"gpuops.io/pool": "a"}}}}]
progress:
  description: Timeline of the wait.
  returned: when O(wait_for) is given
  type: list
  elements: str
  sample: ["t+0s 0/3 nodes labelled feature.node.kubernetes.io/pci-10de.present (or pci-0302_10de.present,
           pci-0300_10de.present)=true (6 nodes seen)"]
duration:
  description: Seconds the task took.
  returned: always
  type: float
ansible_facts:
  description: The same data as host facts.
  returned: always
  type: dict
  contains:
    gpuops_nfd:
      description: gpu_nodes, kernel_versions, os_versions, summary and nodes, as returned above.
      type: dict
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd.params import argument_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd.runner import run


def main():
    module = new_module(
        argument_spec(),
        supports_check_mode=True,
        required_if=[("state", "absent", ["labels"])],
    )
    run_module(module, run)


if __name__ == "__main__":
    main()
