#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_timeline
short_description: Time-to-GPU-ready per GPU node and wall time per state, read from the cluster in one task
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Reads the GPU nodes (one list request per form of NFD's NVIDIA PCI label, the same definition as
    M(gpuops.cluster.nfd_labels)), their Machines (OpenShift, O(machines)) and the pods of the GPU stack (label
    C(app.kubernetes.io/component) in C(nvidia-driver), C(nvidia-container-toolkit), C(nvidia-device-plugin)),
    and builds the timeline C(playbooks/site.yml) prints and writes under C(reports/).
  - Per GPU node, when the Machine was created, the Node created and Ready, the NFD GPU label written, the driver,
    container toolkit and device plugin pods Ready (the device plugin's counted only while the node advertises
    GPUs in C(status.allocatable)), and when C(gpu_validation) last validated the node (O(validated)); and the
    seconds of each phase between them.
  - The NFD GPU label's time is that of the managedFields entry that owns it (C(nfd-master) on a real cluster).
    nfd-master also writes GFD's labels under that entry, which moves its time past the driver's Ready; then the
    Ready of the node's nfd-worker pod (labels C(app=nfd-worker), or C(app.kubernetes.io/name=node-feature-discovery)
    with C(role=worker)) stands in, read only for the GPU nodes that need it. Each row's C(sources) says which.
  - Per state of the run, its start, end and wall time, from the marks the playbook records (O(marks)).
  - Reads only from the cluster; with O(report_json) it writes the timeline as JSON to that file. The
    C(gpuops.cluster.gpu_timeline) filter builds the same timeline from objects you read yourself.
  - With O(state_ledger), then records the run in the state ledger as M(gpuops.cluster.state_ledger) C(mode=record)
    does (its C(write) writes the ledger ConfigMap, only when it changed), in this module run (C(site.yml)'s last
    two steps in one module start).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads only, so it runs the same in check mode; O(report_json) is not written then, nor the ledger
      (O(state_ledger)'s C(write); C(changed) says whether it would be).
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  marks:
    description:
      - The marks of the run, each a dict with C(state), C(event) (C(start) or C(end)), C(at) (ISO 8601) and an
        optional C(result); or the states the ledger skipped, as one dict with C(event=skipped), C(states) (their
        names, in run order) and C(at) (each such state starts and ends there).
    type: list
    elements: dict
    default: []
  validated:
    description: Per node name, the time (RFC 3339) C(gpu_validation) last validated it.
    type: dict
    default: {}
  machines:
    description:
      - Read the Machines of O(machine_namespace) (OpenShift machine API) for the provisioning time.
      - On a cluster without the machine API the Machines are skipped.
    type: bool
    default: true
  machine_namespace:
    description: Namespace of the Machines.
    type: str
    default: openshift-machine-api
  report_json:
    description:
      - Write the timeline as JSON to this file (a report of the run, rewritten each time; the task stays unchanged).
      - A missing folder is made; the nearest existing one must be writable.
    type: path
  state_ledger:
    description:
      - The options of M(gpuops.cluster.state_ledger) in its C(record) mode (C(mode=record), C(states), C(write),
        C(namespace), C(name), C(gpu_label)), without its connection options. After the timeline, the ledger's
        record is made as state_ledger makes it, in this module run; RV(state_ledger) holds what state_ledger returns,
        and a written ledger makes this task changed.
      - Checked by state_ledger's own rules before anything is read (a bad one fails the task naming
        C(state_ledger.<option>)); C(mode=check) and C(mode=invalidate) are refused (they stay tasks of their own).
    type: dict
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: gpuops.cluster.nfd_labels
  - module: gpuops.cluster.gpu_validate
  - module: gpuops.cluster.state_ledger
"""

EXAMPLES = r"""
- name: Timeline of the GPU nodes
  gpuops.cluster.gpu_timeline:
    marks: "{{ gpuops_marks }}"
    validated: "{{ gpu_validation_result.validated_at | default({}) }}"
    machines: "{{ preflight_platform.openshift }}"
  register: timeline

- name: Print it
  ansible.builtin.debug:
    msg: "{{ timeline.timeline.table }}"
"""

RETURN = r"""
timeline:
  description: The timeline.
  returned: always
  type: dict
  contains:
    states:
      description: Per state of the run, C(state), C(start), C(end), C(seconds) and C(result).
      type: list
      elements: dict
    nodes:
      description:
        - Per GPU node, C(node), C(kernel), C(steps) (time of each step, null when unknown), C(sources) (where
          C(nfd_labelled) came from, C(managedFields (nfd-master)) or C(nfd-worker Ready), null when unknown),
          C(seconds) per phase (provision, boot, nfd, driver, toolkit, plugin, validate) and C(out_of_order) (Ready
          moved after the NFD labels, so the node rebooted).
      type: list
      elements: dict
    table:
      description: The printable lines.
      type: list
      elements: str
read:
  description: How many GPU nodes, Machines, GPU stack pods and nfd-worker pods (on the GPU nodes that needed them) were read.
  returned: always
  type: dict
  sample: {"gpu_nodes": 2, "machines": 8, "pods": 6, "nfd_workers": 2}
report:
  description: The path the timeline was written to (O(report_json)), else null (also in check mode).
  returned: always
  type: str
state_ledger:
  description: With O(state_ledger), what M(gpuops.cluster.state_ledger) returns for those options (C(data), and
    C(objects) when it wrote or compared the ConfigMap); null without it.
  returned: always
  type: dict
duration:
  description: Seconds the task took.
  returned: always
  type: float
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.timeline_read import run


def argument_spec():
    return module_spec(
        marks=dict(type="list", elements="dict", default=[]),
        validated=dict(type="dict", default={}),
        machines=dict(type="bool", default=True),
        machine_namespace=dict(type="str", default="openshift-machine-api"),
        report_json=dict(type="path"),
        state_ledger=dict(type="dict"),
    )


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
