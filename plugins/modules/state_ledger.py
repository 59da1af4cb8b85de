#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: state_ledger
short_description: Which states of the GPU enablement changed since their last good run
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Compares, for each state of O(states), what the state depends on now with what a ConfigMap ledger recorded
    after the last run in which that state converged and validated, and says which states must run.
  - A state may be skipped when its inputs digest (its variables and the collection's files, computed by the
    caller) is as recorded, the GPU nodes are as recorded (names, kernels, OS and runtime, the NFD, NVIDIA and
    node-role labels, taints, GPU resources), every object it made (found by the collection's
    managed-by and owner labels) is still there and unchanged except for its status, and its workloads are ready.
  - The first state that must run, and every state after it, are returned in RV(run), each with its reason.
  - With O(mode=record) the module returns the ledger's new data in RV(data) (the entries of O(states) made from
    the cluster as it is now, the other entries kept); O(write) writes it in the same module run, as
    M(gpuops.cluster.k8s_ensure) would, so that an unchanged ledger is not written again.
  - With O(mode=invalidate), after a failed run, RV(data) holds no state's entry, only a note of the state and task
    that failed and when. What broke may be something no entry shows, so the next check runs every state and
    gives that note as the reason. RV(data) is null when there is no ledger (nothing to drop).
  - Reads only, unless O(write).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads run the same in check mode; O(write) writes nothing and reports (C(changed)) what it would change.
  diff_mode:
    support: full
    details: With O(write), the ledger ConfigMap's diff, as M(gpuops.cluster.k8s_ensure) gives it.
  platform:
    platforms: all
options:
  mode:
    description:
      - V(check) says which states must run; V(record) returns the ledger data after the states ran;
        V(invalidate) returns it after a failed run (see the description).
    type: str
    choices: [check, record, invalidate]
    default: check
  states:
    description:
      - The states in run order, each a dictionary with C(name) and C(inputs) (a non-empty digest of what the
        state is given, its variables and the collection version).
      - Not needed with O(mode=invalidate). An empty list checks nothing (a run of C(preflight) alone).
    type: list
    elements: dict
    default: []
  namespace:
    description: Namespace of the ledger ConfigMap.
    type: str
    default: kube-system
  name:
    description: Name of the ledger ConfigMap.
    type: str
    default: gpuops-state-ledger
  gpu_label:
    description:
      - The node label that marks GPU nodes, when not one of NFD's NVIDIA PCI labels (the same option as
        M(gpuops.cluster.nfd_labels)).
    type: str
  force:
    description: Run every state of O(states), whatever the ledger says (O(mode=check)).
    type: bool
    default: false
  failed_state:
    description: The state in which the run failed (O(mode=invalidate), where it is required).
    type: str
  failed_task:
    description: The name of the task that failed (O(mode=invalidate)); kept in the note. No message is kept, since
      a failed task's message may quote a secret.
    type: str
  write:
    description:
      - With O(mode=record) or O(mode=invalidate), also write RV(data) to the ledger ConfigMap, as
        M(gpuops.cluster.k8s_ensure) would (owner C(state_ledger); nothing sent when it is as written), in this
        module run instead of a task of its own.
      - Not in check mode (nothing is written; C(changed) says whether it would be).
    type: bool
    default: false
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: gpuops.cluster.k8s_ensure
  - module: gpuops.cluster.gpu_validate
"""

EXAMPLES = r"""
- name: Which states changed since the last good run
  gpuops.cluster.state_ledger:
    states:
      - name: driver
        inputs: "{{ driver_inputs_digest }}"
      - name: device_plugin
        inputs: "{{ device_plugin_inputs_digest }}"
  register: ledger

- name: Say why each state runs
  ansible.builtin.debug:
    msg: "{{ ledger.reasons }}"

- name: After a failure in the driver state, drop every record (write the data returned with k8s_ensure)
  gpuops.cluster.state_ledger:
    mode: invalidate
    failed_state: driver
    failed_task: Wait for the driver pods
  register: dropped
"""

RETURN = r"""
run:
  description: The states that must run, in order (O(mode=check)).
  returned: always
  type: list
  elements: str
  sample: ["device_plugin", "gpu_feature_discovery"]
skip:
  description: The states that may be skipped (O(mode=check)).
  returned: always
  type: list
  elements: str
reasons:
  description: Why each state of RV(run) runs, one line each.
  returned: always
  type: dict
  sample: {"device_plugin": "ConfigMap nvidia-gpu/nvidia-device-plugin-config was changed",
           "gpu_feature_discovery": "runs after device_plugin, which runs"}
recorded:
  description: Whether the ledger ConfigMap exists.
  returned: always
  type: bool
data:
  description:
    - The ledger ConfigMap's data after this run (O(mode=record)), one compact JSON value per state.
    - After a failed run (O(mode=invalidate)), only the note C(last-failure) (state, task, time); null when there
      is no ledger.
  returned: when O(mode=record) or O(mode=invalidate)
  type: dict
  sample: {"last-failure": '{"at":"2026-11-28T22:01:02Z","state":"gpu_validation","task":"Run the validation"}'}
objects:
  description: The ledger ConfigMap as M(gpuops.cluster.k8s_ensure) reports it (kind, name, namespace, action).
  returned: when O(write) wrote or compared it
  type: list
  elements: dict
  sample: [{"apiVersion": "v1", "kind": "ConfigMap", "name": "gpuops-state-ledger", "namespace": "kube-system",
            "action": "unchanged"}]
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.ledger import argument_spec, run


def main():
    module = new_module(
        argument_spec(), supports_check_mode=True, required_if=[("mode", "invalidate", ["failed_state"])]
    )
    run_module(module, run)


if __name__ == "__main__":
    main()
