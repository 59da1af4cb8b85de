# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: kernels, OS releases and the names derived from them (pure).

Reads the kernel / os-release labels Node Feature Discovery puts on the GPU
nodes, groups the nodes by kernel, and computes the image tag
``<driver>-<kernel>-<os tag>``, the BuildConfig name and the inputs hash.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.module_type import node_gpu_product
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.params import (
    KERNEL_LABEL,
    validate_kernel_version,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import NFD_PREFIX, node_labels
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import TAG_RE

OS_RELEASE_PREFIX = NFD_PREFIX + "system-os_release."
OS_ID_LABEL = OS_RELEASE_PREFIX + "ID"
OS_VERSION_ID_LABEL = OS_RELEASE_PREFIX + "VERSION_ID"
OSTREE_LABEL = OS_RELEASE_PREFIX + "OSTREE_VERSION"
# os-release fields kept per kernel group: (group key, os-release field).
GROUP_FIELDS = (
    ("ostree_versions", "OSTREE_VERSION"),
    ("rhel_versions", "RHEL_VERSION"),
)


def os_tag(os_id, version_id):
    """The driver image OS suffix: ID + VERSION_ID of os-release.

    rhcos + 4.16 -> rhcos4.16 (OpenShift <= 4.18), rhel + 9.6 -> rhel9.6 (4.19+,
    where VERSION_ID became the RHEL version), ubuntu + 22.04 -> ubuntu22.04.
    """
    if not os_id or not version_id:
        return None
    return "{0}{1}".format(to_text(os_id).lower(), to_text(version_id))


def _version_key(value):
    return [int(p) if p.isdigit() else p for p in re.split(r"[.-]", to_text(value))]


def node_os_release(node):
    """{field: value} of the NFD system-os_release.* labels of one node."""
    labels = node_labels(node)
    return dict((k[len(OS_RELEASE_PREFIX) :], v) for k, v in labels.items() if k.startswith(OS_RELEASE_PREFIX))


def _new_group():
    group = dict((key, set()) for key, dummy in GROUP_FIELDS)
    group.update(nodes=[], os_tags=set(), gpu_products=[])
    return group


def _summarize_group(kernel, group):
    tags = sorted(t for t in group["os_tags"] if t)
    if len(group["os_tags"]) > 1:
        raise GpuopsError(
            "nodes running kernel {0} report different OS releases ({1}); set os_tag to choose the image "
            "suffix.".format(kernel, ", ".join(sorted(to_text(t) for t in group["os_tags"]))),
            param="os_tag",
        )
    ostrees = sorted(group["ostree_versions"], key=_version_key)
    rhel = sorted(group["rhel_versions"], key=_version_key)
    return {
        "nodes": sorted(group["nodes"]),
        "os_tag": tags[0] if tags else None,
        "ostree_versions": ostrees,
        # Several RHCOS builds can ship the same kernel; the newest one's
        # driver toolkit is used (its kernel is the same by definition).
        "ostree_version": ostrees[-1] if ostrees else None,
        "rhel_version": rhel[-1] if rhel else None,
        # One entry per node (None: GPU unknown), for the kernel module type.
        "gpu_products": group["gpu_products"],
    }


def group_kernels(nodes, os_tag_override=None):
    """{kernel: {nodes, os_tag, ostree_version, ostree_versions, rhel_version}}.

    ``nodes`` are API node dicts (already selected as GPU nodes). Raises
    GpuopsError naming the nodes whose labels are missing or inconsistent.
    """
    groups = {}
    unlabelled = []
    for node in nodes:
        name = node["metadata"]["name"]
        kernel = node_labels(node).get(KERNEL_LABEL)
        if not kernel:
            unlabelled.append(name)
            continue
        kernel = validate_kernel_version(kernel, param="node_selector")
        rel = node_os_release(node)
        group = groups.setdefault(kernel, _new_group())
        group["nodes"].append(name)
        group["gpu_products"].append(node_gpu_product(node))
        group["os_tags"].add(os_tag_override or os_tag(rel.get("ID"), rel.get("VERSION_ID")))
        for key, field in GROUP_FIELDS:
            if rel.get(field):
                group[key].add(rel[field])
    if unlabelled:
        raise GpuopsError(
            "GPU node(s) {0} carry no {1} label: Node Feature Discovery has not labelled them yet "
            "(wait for NFD, see nfd_labels) or give kernel_versions explicitly.".format(
                ", ".join(sorted(unlabelled)), KERNEL_LABEL
            ),
            param="node_selector",
        )
    return dict((kernel, _summarize_group(kernel, group)) for kernel, group in sorted(groups.items()))


def kernels_from_params(kernel_versions, os_release, os_tag_override=None):
    """The same shape as group_kernels() for kernels given as a parameter."""
    tag = os_tag_override or os_tag(os_release.get("ID"), os_release.get("VERSION_ID"))
    ostree = os_release.get("OSTREE_VERSION")
    return dict(
        (
            kernel,
            {
                "nodes": [],
                "os_tag": tag,
                "ostree_versions": [ostree] if ostree else [],
                "ostree_version": ostree,
                "rhel_version": os_release.get("RHEL_VERSION"),
                "gpu_products": [],
            },
        )
        for kernel in kernel_versions
    )


def check_kernel_infos(kernels, strategy, cfg):
    """Every kernel has what its strategy needs (before any write)."""
    given = bool(cfg.kernel_versions)
    for kernel, info in kernels.items():
        where = "nodes {0}".format(", ".join(info["nodes"])) if info["nodes"] else "kernel {0}".format(kernel)
        if not info.get("os_tag"):
            raise GpuopsError(
                "cannot name the image for {0}: no os-release ID/VERSION_ID ({1}, {2}). Set os_tag "
                "(e.g. rhcos4.16 or rhel9.6){3}.".format(
                    where, OS_ID_LABEL, OS_VERSION_ID_LABEL, " or os_release" if given else ""
                ),
                param="os_release" if given else "os_tag",
            )
        if strategy == "driver-toolkit" and not cfg.base_image and not info.get("ostree_version"):
            raise GpuopsError(
                "the Driver Toolkit image is chosen by the RHCOS build, but {0} carry no {1} label "
                "(older NFD){2}. Give base_image (the driver-toolkit image of that release), or "
                "strategy: entitlement.".format(
                    where, OSTREE_LABEL, "; with kernel_versions give os_release.OSTREE_VERSION" if given else ""
                ),
                param="os_release" if given else "base_image",
            )


def rhel_major(kernel, rhel_version=None):
    """8 or 9 (UBI base for entitlement builds): from RHEL_VERSION or the kernel's elN."""
    if rhel_version:
        return to_text(rhel_version).split(".")[0]
    match = re.search(r"\.el([0-9]+)", kernel)
    return match.group(1) if match else None


def image_tag(driver_version, kernel, os_tag_value):
    """<driver>-<kernel>-<os tag>, the NVIDIA precompiled tag scheme.

    Build outputs use it too: one tag per (driver version, kernel, OS release).
    """
    tag = "{0}-{1}-{2}".format(driver_version, kernel, os_tag_value)
    if not TAG_RE.match(tag):
        raise GpuopsError(
            "the image tag {0!r} would not be a valid tag (too long?)".format(tag), param="kernel_versions"
        )
    return tag


def precompiled_image(registry, image, driver_version, kernel, os_tag_value):
    """e.g. nvcr.io/nvidia/driver:550-5.15.0-69-generic-ubuntu22.04."""
    return "{0}/{1}:{2}".format(registry, image, image_tag(driver_version, kernel, os_tag_value))


def short_hash(text, length=8):
    return hashlib.sha256(to_text(text).encode("utf-8")).hexdigest()[:length]


def buildconfig_name(name, kernel):
    """One BuildConfig per kernel: <name>-<kernel as a DNS name>, at most 52 characters.

    52 leaves room for the build number suffix and keeps the name usable as the
    value of the openshift.io/build-config.name label (63 characters).
    """
    slug = re.sub(r"[^a-z0-9.-]+", "-", kernel.lower()).strip("-.")
    full = "{0}-{1}".format(name, slug)
    if len(full) <= 52:
        return full
    keep = 52 - len(name) - 10
    return "{0}-{1}-{2}".format(name, slug[:keep].rstrip("-."), short_hash(kernel))


def inputs_hash(inputs):
    """A stable hash of everything that goes into an image build (sorted JSON, sha256)."""
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
