#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: upgrade_preflight
short_description: Before an OpenShift upgrade, know per GPU pool whether the GPUs come back (go / no-go)
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - For each target release (O(targets), else every available update the ClusterVersion lists) it finds the RHCOS
    build and kernel the release puts on the nodes (the collection's release table, or O(releases)) and judges, per
    MachineConfigPool of the GPU nodes, what decides whether the GPUs come back after the upgrade.
  - C(image) - the driver image for the target kernel, tagged C(<driver_version>-<kernel>-<os tag>) in the
    ImageStream O(name) of O(namespace), as the driver state builds it. With O(build), a missing image is built now
    (driver_container_build's own code and inputs, on the target release's Driver Toolkit image from
    O(driver_toolkit_images) or the C(openshift/driver-toolkit) tag of its RHCOS build), so that the driver state
    finds it ready after the upgrade and builds nothing.
  - C(driver) - the driver branch drives the pool's GPUs (NVIDIA - R470 the last branch for Kepler, R580 the last for
    Maxwell, Pascal and Volta; Blackwell from R570).
  - C(update) - the target is an available (or conditional) update of the cluster's channel; C(release) - not a
    release NVIDIA asks not to use with GPUs; C(gates) - no Upgradeable=False condition (ClusterVersion,
    ClusterOperators) for a minor upgrade; C(apis) - no API the target's Kubernetes removes is still used
    (APIRequestCount, as C(oc get apirequestcounts)); C(operands) - the roles' operand versions (GPU Operator
    v26.7.0) are certified for the target (a warning otherwise).
  - A check that fails makes the row C(NO-GO); a warning leaves it C(GO).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.wait
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads and judges; a missing image is reported as one that O(build) would build.
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  targets:
    description: OpenShift releases to judge (x.y.z). Default, the ClusterVersion's available updates.
    type: list
    elements: str
  releases:
    description: RHCOS build and kernel of releases the collection's table lacks (they win over the table).
    type: list
    elements: dict
    suboptions:
      version:
        description: OpenShift release, e.g. C(4.17.12).
        type: str
        required: true
      rhcos_build:
        description: Its RHCOS build (os-release C(OSTREE_VERSION)), e.g. C(417.94.202412180008-0).
        type: str
        required: true
      kernel:
        description: Its kernel as C(uname -r) prints it.
        type: str
        required: true
      rhel:
        description: Its RHEL minor, e.g. C(9.4).
        type: str
        required: true
  driver_toolkit_images:
    description:
      - Per target release, its Driver Toolkit image (C(oc adm release info <release image> --image-for=driver-toolkit));
        needed to build before the upgrade, when C(openshift/driver-toolkit) has no tag of the target's RHCOS build yet.
    type: dict
    default: {}
  build:
    description: Build the missing driver images now (waits up to O(wait_timeout), default 1800 seconds).
    type: bool
    default: false
  driver_version:
    description: The driver version the driver state builds (C(driver_version)).
    type: str
    required: true
  strategy:
    description:
      - How the driver state gets its images - C(driver-toolkit) (OpenShift 4.9.9 and later), C(entitlement) (before);
        with C(precompiled) or C(runtime-compiled) nothing is built here and the image check is a warning.
    type: str
    default: driver-toolkit
    choices: [driver-toolkit, entitlement, precompiled, runtime-compiled]
  kernel_module_type:
    description: As the driver state's C(driver_kernel_module_type); C(auto) follows the GPU nodes' GPUs.
    type: str
    default: auto
    choices: [auto, open, proprietary]
  namespace:
    description: The driver state's namespace (its ImageStream and builds).
    type: str
    default: nvidia-gpu-driver
  name:
    description: The driver state's ImageStream and BuildConfig prefix (C(driver_build_name)).
    type: str
    default: nvidia-gpu-driver
  registry:
    description: Registry of NVIDIA's driver images (C(driver_image_registry)).
    type: str
    default: nvcr.io/nvidia
  precompiled_image:
    description: Image name of NVIDIA's driver images (C(driver_image_name)).
    type: str
    default: driver
  entitlement_secret:
    description: With O(strategy=entitlement), the entitlement Secret of the builds.
    type: str
    default: etc-pki-entitlement
  gpu_label:
    description: One label that marks GPU nodes, instead of NFD's NVIDIA PCI labels.
    type: str
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
seealso:
  - module: gpuops.cluster.driver_container_build
"""

EXAMPLES = r"""
- name: Judge every available update, and build the driver images they need
  gpuops.cluster.upgrade_preflight:
    driver_version: 595.91.07
    build: true
    driver_toolkit_images:
      4.17.0: quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
  register: preflight

- name: Show it
  ansible.builtin.debug:
    msg: "{{ preflight.table }}"
"""

RETURN = r"""
current:
  description: The cluster's OpenShift version.
  returned: always
  type: str
  sample: 4.16.0
targets:
  description: The releases judged.
  returned: always
  type: list
  elements: str
verdicts:
  description: Per target, C(GO) when every pool's row is C(GO), else C(NO-GO).
  returned: always
  type: dict
  sample: {"4.17.0": "GO"}
go:
  description: Whether every target is C(GO).
  returned: always
  type: bool
rows:
  description: Per target and pool - nodes, target kernel and RHCOS build, the image, the checks (name, ok/warn/fail,
    words) and the verdict.
  returned: always
  type: list
  elements: dict
table:
  description: RV(rows) as text lines, for a person.
  returned: always
  type: list
  elements: str
built:
  description: Builds started by this run.
  returned: always
  type: list
  elements: str
module_type:
  description: The kernel module type the images are built with, and why.
  returned: always
  type: dict
seconds:
  description: Wall time.
  returned: always
  type: float
progress:
  description: Timestamped lines of what it did.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.upgrade_preflight.runner import argument_spec, run


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
