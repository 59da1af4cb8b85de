#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: driver_rollout
short_description: Roll a new NVIDIA driver onto the GPU nodes, node by node, without killing GPU jobs
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - For driver DaemonSets with the C(OnDelete) update strategy (the driver role's default), whose running pods a
    template change (a new driver version, image or build) does not replace. A driver pod runs an outdated template
    when its C(controller-revision-hash) label is not the hash of its DaemonSet's newest ControllerRevision (as
    NVIDIA's upgrade controller in k8s-operator-libs reads it).
  - Takes the GPU nodes with an outdated driver in waves - first, together, those already out of service (left by an
    earlier run, or cordoned before), then a canary wave of O(canary) nodes, then at most O(max_unavailable) nodes at
    a time, less the GPU nodes that stay out of service. For each node of a wave, in this
    order - cordon it (label C(gpuops.cluster/driver-upgrade=drain)); evict its GPU pods (pods that request an
    C(nvidia.com/gpu*) or C(nvidia.com/mig-*) resource) through the Eviction API, so PodDisruptionBudgets decide,
    for at most O(drain_timeout) seconds, then stop, or delete them when O(delete_after_timeout); label it
    C(reload), which takes the operands (toolkit, device plugin, GFD, DCGM exporter) off the node because their
    node affinity excludes it, and wait until no GPU client is left (a new driver cannot unload modules in use);
    delete the driver pod (unless it already runs the current template and is loading), so that its DaemonSet
    creates one of the current template; wait for it to be ready;
    label it C(validate), so the operands come back, and wait for every DaemonSet of O(namespace) that wants the
    node to be ready there and for the node to advertise GPUs (the GPU clients are the DaemonSets of O(namespace),
    the collection's operands in any namespace, and any DaemonSet whose pods request an NVIDIA resource); run M(gpuops.cluster.gpu_validate)'s
    O(validate_checks) on the node (pinned by C(nodeName), the node being cordoned); uncordon it (unless it was
    cordoned before) and remove the label.
  - A node that fails stays cordoned, labelled C(failed), the cause in its annotation
    C(gpuops.cluster/driver-upgrade.failure); the rollout stops after that wave and the nodes not reached keep
    their driver and their workloads. An API error in the middle of a wave marks the wave's unfinished nodes failed
    the same way. The next run takes the labelled nodes first and keeps their progress (a node whose new driver is
    ready goes straight to validation).
    A run with no outdated driver pod and no labelled node writes nothing.
  - Refuses before any write when an operand DaemonSet on the nodes would not leave a node labelled
    C(gpuops.cluster/driver-upgrade=reload), or when O(max_unavailable) is already used up.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.wait
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads the cluster and returns the waves it would take (RV(waves)) and the rows of RV(table); writes nothing.
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  namespace:
    description: Namespace of the driver DaemonSets and of the operands that must leave a node during its reload.
    type: str
    required: true
  driver_selector:
    description: Label selector of the driver DaemonSets and their pods in O(namespace).
    type: str
    default: app.kubernetes.io/component=nvidia-driver
  node_names:
    description: Roll only these GPU nodes (default every node a driver DaemonSet selects).
    type: list
    elements: str
  max_unavailable:
    description:
      - GPU nodes out of service at once - a number (C(1)) or a percentage of the GPU nodes (C(25%), rounded up).
      - GPU nodes that are NotReady or cordoned and not part of the rollout count against it, as in the GPU Operator.
    type: raw
    default: 1
  canary:
    description: Nodes rolled first, alone, before any other (C(0) for none).
    type: int
    default: 1
  drain_timeout:
    description:
      - Seconds the GPU pods of a wave's nodes may take to leave (evictions refused by a PodDisruptionBudget are
        retried), and then the operands (the GPU Operator's C(podDeletion.timeoutSeconds) default).
    type: int
    default: 300
  delete_after_timeout:
    description:
      - When GPU pods are still there after O(drain_timeout), delete them (ignoring their PodDisruptionBudgets)
        instead of stopping the rollout on that node.
    type: bool
    default: false
  wait_timeout:
    description:
      - Seconds a wave's new driver pods have to become ready, and then again its operands (default 1260, the
        driver role's).
    type: int
  validate:
    description: Run M(gpuops.cluster.gpu_validate) on each node before it is uncordoned.
    type: bool
    default: true
  validate_checks:
    description: The checks of that validation.
    type: list
    elements: str
    choices: [allocatable, driver, vectoradd, nvidia_smi, metrics, burnin]
    default: [allocatable, driver, vectoradd]
  validate_options:
    description:
      - More M(gpuops.cluster.gpu_validate) options for the validation, for example C(vectoradd_image),
        C(runtime_class_name), C(tolerations), C(run_as_user) or C(wait_timeout); checked by gpu_validate's own rules
        before any write. The node, the driver pods and the pinning are the rollout's.
    type: dict
    default: {}
  verify_checks:
    description:
      - M(gpuops.cluster.gpu_validate) checks run on every GPU node of O(node_names) once the rollout is done, also
        when it had nothing to roll, with the options of the validation (O(validate_options)), the pods placed by
        node affinity. RV(verify) holds gpu_validate's result, so that a role reads it instead of starting
        gpu_validate in a task of its own. Not in check mode.
      - Empty, no such check.
    type: list
    elements: str
    choices: [allocatable, driver, vectoradd, nvidia_smi, metrics, burnin]
    default: []
  assume_outdated:
    description:
      - Take every driver pod as outdated. For check mode after a template change that check mode did not write
        (the DaemonSet has no new ControllerRevision yet), so that the waves it would take are shown.
    type: bool
    default: false
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: gpuops.cluster.gpu_validate
  - module: gpuops.cluster.k8s_ensure
"""

EXAMPLES = r"""
- name: Roll the new driver, one GPU node at a time, a canary first
  gpuops.cluster.driver_rollout:
    namespace: nvidia-gpu-driver
    max_unavailable: 1
    canary: 1
    validate_options:
      vectoradd_image: registry.example.com/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubi8
      runtime_class_name: nvidia
  register: rollout

- name: Show it
  ansible.builtin.debug:
    msg: "{{ rollout.table }}"
"""

RETURN = r"""
nodes:
  description: One row per GPU node with a driver DaemonSet - C(current), C(upgraded), C(failed), C(not reached),
    C(unreachable) or, in check mode, C(would upgrade); the driver image before and after, the wave's seconds.
  returned: always
  type: list
  elements: dict
  sample: [{"node": "gpu-1", "result": "upgraded", "image_before": "nvcr.io/nvidia/driver:570.195.03-ubuntu22.04",
            "image_after": "nvcr.io/nvidia/driver:580.95.05-ubuntu22.04", "seconds": 41.3, "note": null, "stage": null}]
waves:
  description: The node names of each wave, in order (the first is the canary).
  returned: when a node needs its driver replaced
  type: list
  elements: list
  sample: [["gpu-1"], ["gpu-2"], ["gpu-3"]]
failed_nodes:
  description: Nodes whose rollout failed (cordoned, labelled C(failed)).
  returned: always
  type: list
  elements: str
not_reached:
  description: Nodes left with their old driver because an earlier wave failed.
  returned: always
  type: list
  elements: str
table:
  description: RV(nodes) as text lines, for a person.
  returned: always
  type: list
  elements: str
seconds:
  description: Wall time of the module.
  returned: always
  type: float
writes:
  description: API writes made (node patches, evictions, pod deletions).
  returned: when not in check mode and a node was rolled
  type: int
verify:
  description:
    - With O(verify_checks), what M(gpuops.cluster.gpu_validate) returns for those checks on every GPU node after
      the rollout (C(passed), C(nodes), C(failures), C(summary), ...). It does not fail the module; read C(passed).
  returned: when O(verify_checks) is set, outside check mode, and the rollout did not stop
  type: dict
  sample: {"passed": true, "failures": [], "nodes": [{"node": "gpu-1", "passed": true}]}
progress:
  description: Timestamped lines of what the rollout waited for.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout.params import argument_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_rollout.runner import run


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
