#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: driver_container_build
short_description: Ensure one NVIDIA driver container image per kernel version of the GPU nodes
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Finds the kernel versions the GPU nodes run, from the Node Feature Discovery labels
    C(feature.node.kubernetes.io/kernel-version.full) and C(feature.node.kubernetes.io/system-os_release.*)
    of nodes marked C(feature.node.kubernetes.io/pci-10de.present=true) (or C(pci-0302_10de) / C(pci-0300_10de)),
    or takes them from O(kernel_versions).
  - On OpenShift it ensures, per kernel, the Special Resource Operator pattern - an ImageStream
    (one per O(name)) and a BuildConfig building the driver against that exact kernel, with one image tag
    per (driver version, kernel, OS release) C(<driver_version>-<kernel>-<os tag>).
  - A build is started (a Build object created the way C(oc start-build) does, named C(<buildconfig>-<n>),
    labelled and annotated C(openshift.io/build-config.name)) only when the image tag is missing or the
    inputs it was built from changed. The inputs (driver version, kernel, OS tag, base image, Dockerfile or
    Git source, build arguments) are hashed into the annotation C(gpuops.cluster/inputs-hash) of the
    BuildConfig and of every Build.
  - The module waits for all builds together and returns a map kernel -> image reference. A failed build
    fails the module with the build's C(status.reason), C(status.message) and the tail of its log
    (C(status.logSnippet), which OpenShift fills on failure; when empty, the last 20 lines of the build pod
    named by the annotation C(openshift.io/build.pod-name)).
  - Managed BuildConfigs for kernels that no selected node runs any more are reported in RV(stale) and
    deleted (with their Builds and image tags) only with O(prune_stale=true).
  - The image a build makes is NVIDIA's driver image for the nodes' OS
    (C(<registry>/<precompiled_image>:<driver_version>-<os tag>), e.g. C(nvcr.io/nvidia/driver:595.91.07-rhel9.6))
    with the kernel modules of one kernel precompiled into C(/lib/modules/<kernel>), compiled in a first build
    stage on the Driver Toolkit (or entitled UBI) with the installer from that same image. The driver pod runs
    C(nvidia-driver load), which installs the userspace and loads the modules without compiling. This is the
    GPU Operator's OpenShift flow (driver container + Driver Toolkit sidecar, NVIDIA/gpu-driver-container
    C(rhel9/ocp_dtk_entrypoint)) with the compile done once per kernel instead of on every driver pod start,
    so a node that joins later loads prebuilt modules. Nothing is downloaded during the build.
  - The kernel module type (open or proprietary) follows the GPUs of the nodes the image is for
    (O(kernel_module_type)), not the node the build runs on.
  - With O(strategy=runtime-compiled) (the default on plain Kubernetes) nothing is built; the reference of
    NVIDIA's driver image C(<registry>/<precompiled_image>:<driver_version>-<os tag>) is returned; its
    C(nvidia-driver init) compiles the modules on the node at start (any kernel of a supported OS).
  - With O(strategy=precompiled) nothing is built either; the image references of the upstream precompiled
    driver images C(<registry>/<precompiled_image>:<driver_version>-<kernel>-<os tag>) are returned.
  - Check mode sends no mutating request at all (not even server-side dry runs); it reports what would be
    created, updated, built and pruned. A second run with the same inputs makes no mutating request.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.wait
  - gpuops.cluster.node_selection
options:
  driver_version:
    description:
      - NVIDIA driver version to build, e.g. C(550.90.07).
      - With O(strategy=precompiled) a branch such as C(550) is also accepted (NVIDIA publishes its Ubuntu
        precompiled images per branch; self-built OpenShift precompiled images use the full version).
    type: str
    required: true
  strategy:
    description:
      - C(driver-toolkit) builds on the cluster's Driver Toolkit image for the node's RHCOS build (ImageStream
        O(driver_toolkit_imagestream) in O(driver_toolkit_namespace), tag = node label
        C(system-os_release.OSTREE_VERSION)); no entitlement is needed (OpenShift 4.9.9 and later).
      - C(entitlement) builds on UBI with the cluster-wide entitlement mounted from O(entitlement_secret)
        (older clusters without a Driver Toolkit).
      - C(precompiled) builds nothing and returns precompiled image references.
      - C(runtime-compiled) builds nothing and returns NVIDIA's driver image of the nodes' OS, which compiles
        the modules on the node when the driver pod starts.
      - C(auto) is C(driver-toolkit) when the cluster serves the OpenShift build and image APIs, else
        C(runtime-compiled).
    type: str
    choices: [auto, driver-toolkit, entitlement, precompiled, runtime-compiled]
    default: auto
  kernel_module_type:
    description:
      - Kernel modules the build compiles, C(open) or C(proprietary) (passed to C(nvidia-installer
        --kernel-module-type)).
      - C(auto) follows the GPUs of the nodes of each kernel, the way nvidia-installer recommends, open when
        a GPU needs them (Blackwell) or every GPU supports them (Turing and later), proprietary when a GPU
        does not support them (Volta and older); when a node's GPU is unknown, the driver branch decides
        (open from R560). The GPU is read from the GFD label C(nvidia.com/gpu.product), else from the cloud
        instance type.
      - A type that a node's GPU cannot run is refused before any write.
    type: str
    choices: [auto, open, proprietary]
    default: auto
  namespace:
    description: Namespace of the ImageStream, BuildConfigs and Builds. It must exist.
    type: str
    default: nvidia-gpu-operator
  name:
    description:
      - Name of the ImageStream, and prefix of the BuildConfig names (C(<name>-<kernel>), shortened with a hash
        when longer than 52 characters).
    type: str
    default: nvidia-gpu-driver
  kernel_versions:
    description:
      - Kernel versions (as C(uname -r) prints them, e.g. C(5.14.0-427.22.1.el9_4.x86_64)) to build for,
        instead of reading them from the nodes. Stale detection then compares against this list.
    type: list
    elements: str
  os_release:
    description:
      - With O(kernel_versions) (required then), the os-release fields of those kernels' nodes (the nodes are
        not read).
    type: dict
    suboptions:
      ID:
        description: os-release C(ID) (e.g. C(rhcos), C(rhel), C(ubuntu)); with O(os_release.VERSION_ID) it names
          the image tag suffix (e.g. C(rhcos4.16)).
        type: str
      VERSION_ID:
        description: os-release C(VERSION_ID) (e.g. C(4.16)).
        type: str
      OSTREE_VERSION:
        description: The RHCOS build (e.g. C(416.94.202406172220-0)); picks the Driver Toolkit tag.
        type: str
      RHEL_VERSION:
        description: The RHEL release of RHCOS (e.g. C(9.4)); picks the UBI major for entitlement builds.
        type: str
      OPENSHIFT_VERSION:
        description: The OpenShift release of RHCOS (e.g. C(4.16)); informational.
        type: str
  os_tag:
    description:
      - Override of the OS part of the image tag (default C(<ID><VERSION_ID>) of os-release, e.g. C(rhcos4.16),
        C(rhel9.6) on OpenShift 4.19+, C(ubuntu22.04)).
    type: str
  base_image:
    description:
      - Builder image to use instead of the Driver Toolkit tag or UBI (C(DockerImage) reference). Its kernel
        headers must match the kernel.
    type: str
  driver_toolkit_namespace:
    description: Namespace of the Driver Toolkit ImageStream.
    type: str
    default: openshift
  driver_toolkit_imagestream:
    description: Name of the Driver Toolkit ImageStream (one tag per RHCOS build; C(latest) is ignored).
    type: str
    default: driver-toolkit
  entitlement_secret:
    description:
      - With O(strategy=entitlement), the Secret in O(namespace) holding the entitlement certificate and key
        (mounted into the build as C(etc-pki-entitlement)). It must exist.
      - Empty (V("")) mounts no secret; the build relies on the cluster-wide entitlement (the C(entitlement) role's
        MachineConfigs), which CRI-O mounts into the build container on nodes that run it.
    type: str
    default: etc-pki-entitlement
  dockerfile:
    description:
      - Inline Dockerfile of the driver image. The default compiles the driver's kernel modules with the
        NVIDIA installer against C(KERNEL_VERSION). Its C(FROM) is replaced by the builder image.
      - Build arguments C(DRIVER_VERSION), C(KERNEL_VERSION), C(RHEL_VERSION) and C(OS_TAG) are always given.
    type: str
  git_uri:
    description:
      - Build from this Git repository instead of an inline Dockerfile (e.g. NVIDIA/gpu-driver-container).
      - Mutually exclusive with O(dockerfile).
    type: str
  git_ref:
    description: Branch, tag or commit of O(git_uri) (which it requires).
    type: str
  context_dir:
    description: Directory of O(git_uri) holding the Dockerfile (e.g. C(rhel9/precompiled)); requires O(git_uri).
    type: str
  build_args:
    description: Additional Docker build arguments (name -> value). C(DRIVER_VERSION) and C(KERNEL_VERSION) are reserved.
    type: dict
    default: {}
  registry:
    description: With O(strategy=precompiled), the registry and repository path of the precompiled images.
    type: str
    default: nvcr.io/nvidia
  precompiled_image:
    description: With O(strategy=precompiled), the image name under O(registry).
    type: str
    default: driver
  prune_stale:
    description:
      - Delete the BuildConfigs, Builds and ImageStream tags of kernels that no selected node runs any more
        (RV(stale)). Without it they are only reported.
    type: bool
    default: false
  wait:
    description:
      - Wait for the builds to finish, at most O(wait_timeout) seconds for all builds together (default 1800,
        at least 60; a driver build compiles kernel modules).
      - A build that does not finish is explained from its build pod's Warning events (e.g. C(FailedMount) of
        a missing O(entitlement_secret)).
      - Without waiting, RV(images) holds the references the builds will write.
    type: bool
    default: true
requirements:
  - kubernetes >= 24.2.0
  - PyYAML >= 3.11
attributes:
  check_mode:
    support: full
    description: No request that writes is sent; the result tells what would change.
  diff_mode:
    support: full
    description: One entry per ImageStream / BuildConfig created or changed, per build started and per stale kernel pruned.
notes:
  - Needs list/get on nodes and namespaces; get/list/create/patch (server-side apply, field manager
    C(gpuops.cluster)) on imagestreams and buildconfigs and create/list on builds in O(namespace); get on
    the Driver Toolkit ImageStream; delete on buildconfigs, builds and imagestreamtags for O(prune_stale).
  - BuildConfigs carry no triggers, so creating or updating one never starts a build by itself.
seealso:
  - module: gpuops.cluster.gpu_validate
  - module: gpuops.cluster.nfd_labels
"""

EXAMPLES = r"""
- name: Build the driver for every kernel the GPU nodes run (Driver Toolkit, OpenShift 4.9+)
  gpuops.cluster.driver_container_build:
    driver_version: 550.90.07
  register: driver_images

- name: Show the image per kernel
  ansible.builtin.debug:
    msg: "{{ driver_images.images }}"

- name: Older cluster without Driver Toolkit, entitled UBI builds, remove images of old kernels
  gpuops.cluster.driver_container_build:
    driver_version: 470.57.02
    strategy: entitlement
    entitlement_secret: etc-pki-entitlement
    prune_stale: true
    wait_timeout: 3600

- name: Plain Kubernetes with Ubuntu nodes, NVIDIA precompiled images (no build)
  gpuops.cluster.driver_container_build:
    driver_version: "550"
    strategy: precompiled

- name: Prepare the image for a kernel before nodes run it (upgrade ahead of time)
  gpuops.cluster.driver_container_build:
    driver_version: 550.90.07
    kernel_versions:
      - 5.14.0-427.22.1.el9_4.x86_64
    os_release:
      ID: rhcos
      VERSION_ID: "4.16"
      OSTREE_VERSION: 416.94.202406172220-0
      RHEL_VERSION: "9.4"
"""

RETURN = r"""
strategy:
  description: The strategy used (C(auto) resolved).
  returned: always
  type: str
  sample: driver-toolkit
platform:
  description: C(openshift) when the build and image APIs are served, else C(kubernetes).
  returned: always
  type: str
  sample: openshift
images:
  description: Kernel version -> image reference (tag reference) the driver DaemonSet for that kernel should use.
  returned: always
  type: dict
  sample:
    5.14.0-427.22.1.el9_4.x86_64: >-
      image-registry.openshift-image-registry.svc:5000/nvidia-gpu-operator/nvidia-gpu-driver:550.90.07-5.14.0-427.22.1.el9_4.x86_64-rhcos4.16
kernels:
  description: Per kernel version, what was found and done.
  returned: always
  type: dict
  contains:
    nodes:
      description: GPU nodes running this kernel (empty for O(kernel_versions)).
      type: list
      elements: str
    os_tag:
      description: OS part of the tag.
      type: str
    ostree_version:
      description: RHCOS build whose Driver Toolkit tag is used (the newest if several share the kernel).
      type: str
    ostree_versions:
      description: All RHCOS builds seen with this kernel.
      type: list
      elements: str
    rhel_version:
      description: RHEL minor of the nodes.
      type: str
    tag:
      description: Image tag.
      type: str
    image:
      description: Image reference (tag).
      type: str
    image_digest:
      description: Digest reference of the tag in the ImageStream, when the image exists.
      type: str
    ready:
      description: The image tag exists in the ImageStream.
      type: bool
    buildconfig:
      description: BuildConfig name.
      type: str
    build:
      description: Build started or waited for (or the one that produced the current image).
      type: str
    build_phase:
      description: Phase of that build.
      type: str
    inputs_hash:
      description: Hash of the build inputs.
      type: str
    action:
      description: >-
        C(current), C(built), C(building) (O(wait=false)), C(would-build) (check mode), C(precompiled) or
        C(runtime-compiled).
      type: str
    module_type:
      description: Kernel module type of the image, C(open) or C(proprietary) (see O(kernel_module_type)).
      type: str
    module_type_reason:
      description: Why that type (asked, or the GPUs of the nodes, or the driver branch).
      type: str
    gpu_products:
      description: The GPU of each node of this kernel (GFD product or cloud instance type; null when unknown).
      type: list
      elements: str
    dtk_image:
      description: Pull spec of the Driver Toolkit image the modules were compiled on (C(driver-toolkit) only).
      type: str
    reason:
      description: Why the build was (or was not) needed.
      type: str
  sample:
    5.14.0-427.22.1.el9_4.x86_64:
      nodes: [ip-10-0-138-78]
      os_tag: rhcos4.16
      tag: 550.90.07-5.14.0-427.22.1.el9_4.x86_64-rhcos4.16
      action: built
      reason: image tag 550.90.07-5.14.0-427.22.1.el9_4.x86_64-rhcos4.16 missing
stale:
  description: Managed BuildConfigs (and their image tags) for kernels no selected node runs any more.
  returned: always
  type: list
  elements: dict
  sample:
    - kernel: 5.14.0-284.73.1.el9_2.x86_64
      buildconfig: nvidia-gpu-driver-5.14.0-284.73.1.el9-2.x86-64
      tags: [550.90.07-5.14.0-284.73.1.el9_2.x86_64-rhcos4.14]
pruned:
  description: Stale entries deleted (or that would be, in check mode) with O(prune_stale=true).
  returned: always
  type: list
  elements: dict
builds:
  description: Builds started or waited for, with their final phase (C(reason) / C(message) when they failed).
  returned: always
  type: list
  elements: dict
  sample:
    - name: nvidia-gpu-driver-5.14.0-427.22.1.el9-4.x86-64-1
      kernel: 5.14.0-427.22.1.el9_4.x86_64
      phase: Complete
progress:
  description: Timeline of the wait (deduplicated), for example C(t+12s builds - 1 Running, 1 Complete).
  returned: always
  type: list
  elements: str
diff:
  description: With C(--diff), one before/after entry per object created, changed, built or pruned.
  returned: when diff mode is on
  type: list
  elements: dict
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.params import (
    MUTUALLY_EXCLUSIVE,
    REQUIRED_BY,
    argument_spec,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.runner import run


def main():
    module = new_module(
        argument_spec(),
        supports_check_mode=True,
        mutually_exclusive=MUTUALLY_EXCLUSIVE,
        required_by=REQUIRED_BY,
    )
    run_module(module, run)


if __name__ == "__main__":
    main()
