#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_diagnose
short_description: Why GPU nodes have no working GPUs - the likely cause per node, and an archive for a support case
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Reads the GPU nodes (their conditions, labels, taints and GPU resources), the operand DaemonSets the collection
    made (driver, container toolkit, device plugin, GPU feature discovery, DCGM exporter) and NFD's, their pods,
    each pod's log and previous log, the events of their namespaces and of the GPU nodes, Builds and BuildConfigs
    (OpenShift), the ledger and the validation record, and the run's reports in O(reports_dir).
  - For each GPU node it names what is wrong (node not ready, an operand pod missing or not ready, a taint a
    DaemonSet does not tolerate, no allocatable GPUs, failed validation checks) and matches the evidence against
    the collection's failure signatures (each from a public upstream report, as the
    C(gpuops.cluster.failure_signatures) filter does); a node whose evidence matches none says
    C(no known signature) and shows the lines it saw.
  - Writes everything it read to O(archive), a gzip'd tar (mode 0600), with secrets redacted (PEM blocks, bearer
    tokens and JWTs, registry auths, password-like values and the literal values of secret-like environment
    variables). Secrets themselves are never read.
  - Reads only.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads the cluster the same way; the archive is not written.
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  archive:
    description:
      - Path of the archive to write (C(.tar.gz)); its folder is made when missing. Not set, nothing is written.
    type: path
  reports_dir:
    description:
      - Folder of the run's reports (C(timeline.json), C(gpu-validation.json), C(gpu-validation.md)); those found
        go into the archive, and the validation report's failures count as symptoms of their nodes.
    type: path
  logs:
    description:
      - V(all) reads the log of every operand container on a GPU node; V(not_ready) only those of pods that are
        not ready. Previous logs are read for every container that restarted.
    type: str
    choices: [all, not_ready]
    default: all
  log_lines:
    description: How many last lines of each log to read.
    type: int
    default: 200
  namespaces:
    description:
      - Namespaces whose every DaemonSet is read too (with its pods and events), besides the operands the collection
        made (found by its labels in any namespace) - by default NFD's on either platform; absent ones are skipped.
      - A DaemonSet's component (whose log signatures apply) comes from its name (C(driver), C(toolkit),
        C(device-plugin), C(feature-discovery), C(dcgm), C(nfd)); the logs of one of no known component are matched
        against every signature.
    type: list
    elements: str
    default: [openshift-nfd, node-feature-discovery]
  ledger_name:
    description: Name of the ledger ConfigMap (see M(gpuops.cluster.state_ledger)).
    type: str
    default: gpuops-state-ledger
  ledger_namespace:
    description: Namespace of the ledger ConfigMap.
    type: str
    default: kube-system
  record_name:
    description: Name of the validation record ConfigMap (see M(gpuops.cluster.gpu_validate)).
    type: str
    default: gpu-validation-record
  record_namespace:
    description: Namespace of the validation record ConfigMap; not set, it is not read.
    type: str
  gpu_label:
    description:
      - The node label that marks GPU nodes, when not one of NFD's NVIDIA PCI labels (the same option as
        M(gpuops.cluster.nfd_labels)).
    type: str
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: gpuops.cluster.operand_pods
  - module: gpuops.cluster.gpu_validate
"""

EXAMPLES = r"""
- name: Diagnose the GPU nodes and write the archive for a support case
  gpuops.cluster.gpu_diagnose:
    archive: reports/diagnose.tar.gz
    reports_dir: reports
    record_namespace: nvidia-gpu-driver
  register: diagnosis

- name: Show the table
  ansible.builtin.debug:
    msg: "{{ diagnosis.table }}"
"""

RETURN = r"""
nodes:
  description:
    - One entry per GPU node, problems first - C(node), C(status) (V(problem), V(warning) when only a known
      failure line was seen, or V(ok)), C(symptoms) (what is wrong, in words), C(findings) (each matched signature
      with C(signature), C(cause), C(fix), C(source) and C(evidence), the line it matched) and, for a node with
      symptoms and no finding, C(evidence) (the last lines seen).
  returned: always
  type: list
  elements: dict
  sample: [{"node": "gpu-1", "status": "problem", "symptoms": ["driver pod nvidia-driver-x: CrashLoopBackOff (restarts 3)"],
            "findings": [{"signature": "driver_modules_not_built_for_kernel", "cause": "...", "fix": "...",
                          "source": "https://github.com/NVIDIA/nvidia-docker/issues/481",
                          "evidence": "modprobe: FATAL: Module nvidia not found in directory /lib/modules/5.14.0-570.el9"}],
            "evidence": []}]
table:
  description: The nodes as text lines - per node with a problem, what is wrong, the likely cause, the fix, the evidence.
  returned: always
  type: list
  elements: str
archive:
  description: The archive written, or null (no O(archive), or check mode).
  returned: always
  type: str
problems:
  description: How many GPU nodes have a problem.
  returned: always
  type: int
unexplained:
  description: The GPU nodes with symptoms whose evidence matches no known signature.
  returned: always
  type: list
  elements: str
collected:
  description: How many nodes, DaemonSets, pods, logs and events were read, and which report files were found.
  returned: always
  type: dict
seconds:
  description: Wall time of the reads and the analysis.
  returned: always
  type: float
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.args import module_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.collect import run


def argument_spec():
    return module_spec(
        archive=dict(type="path"),
        reports_dir=dict(type="path"),
        logs=dict(type="str", choices=["all", "not_ready"], default="all"),
        log_lines=dict(type="int", default=200),
        namespaces=dict(type="list", elements="str", default=["openshift-nfd", "node-feature-discovery"]),
        ledger_name=dict(type="str", default="gpuops-state-ledger"),
        ledger_namespace=dict(type="str", default="kube-system"),
        record_name=dict(type="str", default="gpu-validation-record"),
        record_namespace=dict(type="str"),
        gpu_label=dict(type="str"),
    )


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
