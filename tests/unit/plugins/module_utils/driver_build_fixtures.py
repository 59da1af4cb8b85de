# -*- coding: utf-8 -*-
"""Shared inputs of the driver_build unit tests: parameters, nodes, kernel infos, builds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params as params_
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import render

K416 = "5.14.0-427.22.1.el9_4.x86_64"
K414 = "5.14.0-284.73.1.el9_2.x86_64"
K419 = "5.14.0-570.35.1.el9_6.x86_64"

BASE_PARAMS = {
    "driver_version": "550.90.07",
    "strategy": "driver-toolkit",
    "namespace": "nvidia-gpu-operator",
    "name": "nvidia-gpu-driver",
    "kernel_versions": None,
    "os_release": None,
    "os_tag": None,
    "node_selector": {},
    "base_image": None,
    "driver_toolkit_namespace": "openshift",
    "driver_toolkit_imagestream": "driver-toolkit",
    "entitlement_secret": "etc-pki-entitlement",
    "dockerfile": None,
    "git_uri": None,
    "git_ref": None,
    "context_dir": None,
    "build_args": {},
    "registry": "nvcr.io/nvidia",
    "precompiled_image": "driver",
    "prune_stale": False,
    "wait": True,
    "wait_timeout": 1800,
    "wait_sleep": 5,
}


def params(**kw):
    p = copy.deepcopy(BASE_PARAMS)
    p.update(kw)
    return p


def node(
    name,
    kernel=K416,
    os_id="rhcos",
    version_id="4.16",
    ostree="416.94.202406172220-0",
    rhel="9.4",
    gpu=True,
    extra=None,
):
    labels = {}
    if gpu:
        labels["feature.node.kubernetes.io/pci-10de.present"] = "true"
    if kernel:
        labels[params_.KERNEL_LABEL] = kernel
    for key, value in (("ID", os_id), ("VERSION_ID", version_id), ("OSTREE_VERSION", ostree), ("RHEL_VERSION", rhel)):
        if value:
            labels["feature.node.kubernetes.io/system-os_release." + key] = value
    labels.update(extra or {})
    return {"metadata": {"name": name, "labels": labels}, "status": {}}


def info416(**kw):
    info = {
        "nodes": ["gpu-a"],
        "os_tag": "rhcos4.16",
        "ostree_version": "416.94.202406172220-0",
        "ostree_versions": [],
        "rhel_version": "9.4",
    }
    info.update(kw)
    return info


def mk_build(n, phase, h="H", tag="T", bc="bc"):
    return {
        "metadata": {
            "name": "{0}-{1}".format(bc, n),
            "labels": {render.BC_NAME_KEY: bc},
            "annotations": {render.BUILD_NUMBER_KEY: str(n), render.HASH_KEY: h},
        },
        "spec": {"output": {"to": {"kind": "ImageStreamTag", "name": "is:" + tag}}},
        "status": {"phase": phase},
    }


IS = {
    "metadata": {"name": "nvidia-gpu-driver"},
    "status": {
        "dockerImageRepository": "image-registry.openshift-image-registry.svc:5000/nvidia-gpu-operator/nvidia-gpu-driver",
        "tags": [
            {
                "tag": "550.90.07-{0}-rhcos4.16".format(K416),
                "items": [
                    {
                        "dockerImageReference": "image-registry.openshift-image-registry.svc:5000/nvidia-gpu-operator/nvidia-gpu-driver@sha256:"
                        + "a" * 64
                    }
                ],
            },
            {
                "tag": "550.90.07-{0}-rhcos4.14".format(K414),
                "items": [{"dockerImageReference": "x@sha256:" + "b" * 64}],
            },
            {"tag": "empty", "items": []},
        ],
    },
}
