# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: the objects it writes (pure).

The ImageStream (one per image name), the BuildConfig per kernel (Docker
strategy on the Driver Toolkit or entitled UBI, or the user's Dockerfile / Git
source) and the Build that ``oc start-build`` would create. Everything carries
the collection's managed-by label.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.kernels import (
    buildconfig_name,
    image_tag,
    inputs_hash,
    rhel_major,
    short_hash,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import label_selector

PREFIX = "gpuops.cluster/"
KERNEL_KEY = PREFIX + "kernel-version"
DRIVER_KEY = PREFIX + "driver-version"
OS_TAG_KEY = PREFIX + "os-tag"
MODULE_TYPE_KEY = PREFIX + "kernel-module-type"
HASH_KEY = PREFIX + "inputs-hash"
IMAGE_NAME_KEY = PREFIX + "image-name"
BC_NAME_KEY = "openshift.io/build-config.name"
BUILD_NUMBER_KEY = "openshift.io/build.number"
START_POLICY_KEY = "openshift.io/build.start-policy"
BUILD_SPEC_FIELDS = (
    "serviceAccount",
    "source",
    "strategy",
    "output",
    "resources",
    "postCommit",
    "nodeSelector",
    "completionDeadlineSeconds",
)

# Defaults; dockerfile / git_uri override them.
#
# The image is NVIDIA's driver image for the node's OS (``<registry>/driver:<version>-<rhcos4.N|rhel9.N>``, the one
# the GPU Operator runs: nvidia-driver script, userspace libraries, nvidia-smi, persistenced, firmware, the .run
# installer) with the kernel modules for ONE kernel precompiled into /lib/modules/<kernel>. The driver pod then runs
# ``nvidia-driver load``, which installs the userspace from the image and modprobes the modules without compiling:
# the same two steps as the GPU Operator's OpenShift flow (NVIDIA/gpu-driver-container rhel9/ocp_dtk_entrypoint:
# ``dtk-build-driver`` in the Driver Toolkit sidecar, then ``nv-ctr-run-with-dtk`` copies the modules to
# /lib/modules/$(uname -r) and execs ``nvidia-driver load``), but the compile runs once per kernel in a Build instead
# of in every driver pod. Nothing is downloaded: the .run comes from the driver image (a mirror works), the kernel
# headers from the Driver Toolkit. ``--kernel-module-type`` is passed (the build node may have no GPU, see
# module_type.py) and ``--skip-module-load`` keeps the installer from test-loading modules inside the build, as the
# driver container does for R550+ (rhel9/nvidia-driver ``_install_driver``). OpenShift replaces the last FROM with
# the BuildConfig's strategy ``from`` (the driver image).
_MODULES_STAGE_TAIL = """\
ARG DRIVER_VERSION
ARG KERNEL_VERSION
ARG KERNEL_MODULE_TYPE
ARG TARGET_ARCH=x86_64
USER root
COPY --from=driver /drivers/NVIDIA-Linux-${TARGET_ARCH}-${DRIVER_VERSION}.run /tmp/nvidia.run
RUN sh /tmp/nvidia.run -x --target /tmp/nvidia && cd /tmp/nvidia \\
 && ./nvidia-installer --silent --kernel-module-only --no-drm --no-backup --no-nouveau-check --skip-module-load \\
      --kernel-module-type="${KERNEL_MODULE_TYPE}" --kernel-name="${KERNEL_VERSION}" \\
      --kernel-source-path="/usr/src/kernels/${KERNEL_VERSION}" \\
 && depmod "${KERNEL_VERSION}"
# The modules modprobe loads for nvidia, nvidia-uvm and nvidia-modeset, with their dependencies and the module
# index (what dtk-build-driver copies to the shared directory).
RUN mkdir -p /opt/modules \\
 && modprobe -S "${KERNEL_VERSION}" -a --show-depends i2c_core ipmi_msghandler ipmi_devintf nvidia nvidia-uvm \\
      nvidia-modeset | awk '$1 == "insmod" {print $2}' | while read -r mod; do \\
        rel="${mod#/lib/modules/${KERNEL_VERSION}/}"; mkdir -p "/opt/modules/$(dirname "$rel")"; \\
        cp "$mod" "/opt/modules/$rel"; done \\
 && cp /lib/modules/"${KERNEL_VERSION}"/modules.* /opt/modules/ \\
 && test -e "/opt/modules/kernel/drivers/video/nvidia.ko" -o -e "/opt/modules/kernel/drivers/video/nvidia.ko.xz"

FROM ${DRIVER_IMAGE}
ARG DRIVER_VERSION
ARG KERNEL_VERSION
ARG KERNEL_MODULE_TYPE
COPY --from=modules /opt/modules/ /lib/modules/${KERNEL_VERSION}/
LABEL io.openshift.build.gpuops.driver-version="${DRIVER_VERSION}" \\
      io.openshift.build.gpuops.kernel-version="${KERNEL_VERSION}" \\
      io.openshift.build.gpuops.kernel-module-type="${KERNEL_MODULE_TYPE}"
"""

DTK_DOCKERFILE = """\
# Built by gpuops.cluster.driver_container_build: NVIDIA's driver image with the kernel modules for one kernel,
# compiled on the cluster's Driver Toolkit image of that kernel's RHCOS build.
ARG DRIVER_IMAGE
ARG DTK_IMAGE
FROM ${DRIVER_IMAGE} AS driver
FROM ${DTK_IMAGE} AS modules
ARG KERNEL_VERSION
# The toolkit must ship exactly the node kernel (Bug 1977972: KERNEL_VERSION has the arch suffix).
RUN grep -q "\\"KERNEL_VERSION\\": \\"${KERNEL_VERSION}\\"" /etc/driver-toolkit-release.json \\
 || { echo "driver toolkit kernel does not match ${KERNEL_VERSION}" >&2; exit 1; }
""" + _MODULES_STAGE_TAIL

ENTITLEMENT_DOCKERFILE = """\
# Built by gpuops.cluster.driver_container_build: NVIDIA's driver image with the kernel modules for one kernel,
# compiled on UBI with the kernel packages from the entitled RHEL repositories (secret mounted at
# ./etc-pki-entitlement; OpenShift < 4.9 without a Driver Toolkit image).
ARG DRIVER_IMAGE
ARG BUILDER_IMAGE
FROM ${DRIVER_IMAGE} AS driver
FROM ${BUILDER_IMAGE} AS modules
ARG KERNEL_VERSION
USER root
COPY ./etc-pki-entitlement /etc/pki/entitlement
# kernel (modules of the node kernel: modprobe's dependencies), kernel-devel / -headers (the build).
RUN rm -f /etc/rhsm-host \\
 && dnf -y install "kernel-${KERNEL_VERSION}" "kernel-devel-${KERNEL_VERSION}" "kernel-headers-${KERNEL_VERSION}" \\
      elfutils-libelf-devel gcc make kmod \\
 && rm -rf /etc/pki/entitlement
""" + _MODULES_STAGE_TAIL


def common_labels(name):
    return {
        MANAGED_BY_LABEL: MANAGED_BY,
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": "driver-build",
        IMAGE_NAME_KEY: name,
    }


def render_imagestream(cfg):
    return {
        "apiVersion": "image.openshift.io/v1",
        "kind": "ImageStream",
        "metadata": {"name": cfg.name, "namespace": cfg.namespace, "labels": common_labels(cfg.name)},
        # Pods may reference "<name>:<tag>" directly (imagestream lookup).
        "spec": {"lookupPolicy": {"local": True}},
    }


def driver_image(cfg, info):
    """NVIDIA's driver image for the nodes' OS: <registry>/<image>:<driver version>-<os tag> (GO resolveDriverTag)."""
    return "{0}/{1}:{2}-{3}".format(cfg.registry, cfg.precompiled_image, cfg.driver_version, info["os_tag"])


def builder_image(cfg, kernel, info, strategy):
    """The image the modules are compiled in: the kernel's Driver Toolkit, or entitled UBI (base_image overrides)."""
    if cfg.base_image:
        return cfg.base_image
    if strategy == "driver-toolkit":
        # The pull spec the ImageStream tag points at (what KMM passes as DTK_AUTO), read by plan.
        return info.get("dtk_image") or "{0}/{1}:{2}".format(
            cfg.driver_toolkit_namespace, cfg.driver_toolkit_imagestream, info["ostree_version"]
        )
    major = rhel_major(kernel, info.get("rhel_version")) or "8"
    return "registry.access.redhat.com/ubi{0}/ubi:latest".format(major)


def build_base(cfg, info):
    """The BuildConfig's strategy ``from``: replaces the Dockerfile's last FROM, i.e. the driver image."""
    return {"kind": "DockerImage", "name": driver_image(cfg, info)}


def build_inputs(cfg, kernel, info, strategy):
    """Everything that determines the image; hashed into HASH_KEY."""
    source = {
        "dockerfile": cfg.dockerfile or (DTK_DOCKERFILE if strategy == "driver-toolkit" else ENTITLEMENT_DOCKERFILE)
    }
    if cfg.git_uri:
        source = {"git_uri": cfg.git_uri, "git_ref": cfg.git_ref, "context_dir": cfg.context_dir}
    inputs = {
        "driver_version": cfg.driver_version,
        "kernel": kernel,
        "os_tag": info["os_tag"],
        "strategy": strategy,
        "from": build_base(cfg, info),
        "source": source,
        "build_args": build_args(cfg, kernel, info, strategy),
    }
    if strategy == "entitlement":
        inputs["entitlement_secret"] = cfg.entitlement_secret
    return inputs


def build_args(cfg, kernel, info, strategy="driver-toolkit"):
    builder_arg = "DTK_IMAGE" if strategy == "driver-toolkit" else "BUILDER_IMAGE"
    args = [
        {"name": "DRIVER_IMAGE", "value": driver_image(cfg, info)},
        {"name": builder_arg, "value": builder_image(cfg, kernel, info, strategy)},
        {"name": "DRIVER_VERSION", "value": cfg.driver_version},
        {"name": "KERNEL_VERSION", "value": kernel},
        {"name": "KERNEL_MODULE_TYPE", "value": info.get("module_type") or "proprietary"},
    ]
    if info.get("rhel_version"):
        args.append({"name": "RHEL_VERSION", "value": info["rhel_version"]})
    if info.get("os_tag"):
        args.append({"name": "OS_TAG", "value": info["os_tag"]})
    for key in sorted(cfg.build_args):
        args.append({"name": key, "value": cfg.build_args[key]})
    return args


def render_buildconfig(cfg, kernel, info, strategy):
    """BuildConfig building the driver image for one kernel (Docker strategy).

    No triggers: builds are started by the module only when the image is missing
    or its inputs changed, so creating/updating the BuildConfig never starts one.
    """
    inputs = build_inputs(cfg, kernel, info, strategy)
    digest = inputs_hash(inputs)
    tag = image_tag(cfg.driver_version, kernel, info["os_tag"])
    labels = common_labels(cfg.name)
    labels[KERNEL_KEY] = kernel if len(kernel) <= 63 else short_hash(kernel, 16)
    if "source" in inputs and "git_uri" in inputs["source"]:
        source = {"type": "Git", "git": {"uri": cfg.git_uri}}
        if cfg.git_ref:
            source["git"]["ref"] = cfg.git_ref
        if cfg.context_dir:
            source["contextDir"] = cfg.context_dir
    else:
        source = {"type": "Dockerfile", "dockerfile": inputs["source"]["dockerfile"]}
    if strategy == "entitlement" and cfg.entitlement_secret:
        source["secrets"] = [{"secret": {"name": cfg.entitlement_secret}, "destinationDir": "etc-pki-entitlement"}]
    return {
        "apiVersion": "build.openshift.io/v1",
        "kind": "BuildConfig",
        "metadata": {
            "name": buildconfig_name(cfg.name, kernel),
            "namespace": cfg.namespace,
            "labels": labels,
            "annotations": {
                KERNEL_KEY: kernel,
                DRIVER_KEY: cfg.driver_version,
                OS_TAG_KEY: info["os_tag"],
                MODULE_TYPE_KEY: info.get("module_type") or "proprietary",
                HASH_KEY: digest,
            },
        },
        "spec": {
            "runPolicy": "Serial",
            "successfulBuildsHistoryLimit": 3,
            "failedBuildsHistoryLimit": 3,
            "triggers": [],
            "source": source,
            "strategy": {
                "type": "Docker",
                "dockerStrategy": {"from": inputs["from"], "buildArgs": inputs["build_args"], "noCache": True},
            },
            "output": {"to": {"kind": "ImageStreamTag", "name": "{0}:{1}".format(cfg.name, tag)}},
        },
    }


def render_build(buildconfig, number, uid=None):
    """A Build as ``oc start-build`` (buildconfigs/instantiate) would create it.

    The spec is the BuildConfig's; name <bc>-<n>; the labels/annotations
    openshift.io/build-config.name, openshift.io/build.number and
    openshift.io/build.start-policy; owned by the BuildConfig so deleting it
    removes its builds.
    """
    meta = buildconfig["metadata"]
    bc_name = meta["name"]
    labels = dict(meta.get("labels") or {})
    labels.update(
        {"buildconfig": bc_name, BC_NAME_KEY: bc_name, START_POLICY_KEY: buildconfig["spec"].get("runPolicy", "Serial")}
    )
    annotations = dict((k, v) for k, v in (meta.get("annotations") or {}).items() if k.startswith(PREFIX))
    annotations.update({BC_NAME_KEY: bc_name, BUILD_NUMBER_KEY: str(number)})
    spec = dict((k, copy.deepcopy(v)) for k, v in buildconfig["spec"].items() if k in BUILD_SPEC_FIELDS)
    spec["triggeredBy"] = [
        {"message": "Started by gpuops.cluster.driver_container_build (image missing or inputs changed)"}
    ]
    build = {
        "apiVersion": "build.openshift.io/v1",
        "kind": "Build",
        "metadata": {
            "name": "{0}-{1}".format(bc_name, number),
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": annotations,
        },
        "spec": spec,
    }
    if uid:
        build["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "build.openshift.io/v1",
                "kind": "BuildConfig",
                "name": bc_name,
                "uid": uid,
                "controller": True,
            }
        ]
    return build


def managed_selector(name):
    """The label selector of everything this module manages for one image name."""
    return label_selector({MANAGED_BY_LABEL: MANAGED_BY, IMAGE_NAME_KEY: name})
