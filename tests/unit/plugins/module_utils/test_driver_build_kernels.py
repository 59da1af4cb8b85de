# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import kernels
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params as params_
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import DNS1123_LABEL_RE
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.driver_build_fixtures import (
    K416,
    K419,
    info416,
    node,
    params,
)

# --- os tags and grouping ----------------------------------------------------


@pytest.mark.parametrize(
    "os_id,version,expected",
    [
        ("rhcos", "4.16", "rhcos4.16"),
        ("rhel", "9.6", "rhel9.6"),
        ("ubuntu", "22.04", "ubuntu22.04"),
        ("RHCOS", "4.6", "rhcos4.6"),
        (None, "4.16", None),
        ("rhcos", None, None),
    ],
)
def test_os_tag(os_id, version, expected):
    assert kernels.os_tag(os_id, version) == expected


def test_group_kernels_groups_nodes_and_picks_newest_ostree():
    nodes = [
        node("gpu-b", K416, ostree="416.94.202406172220-0"),
        node("gpu-a", K416, ostree="416.94.202407030122-0"),
        node("gpu-c", K419, os_id="rhel", version_id="9.6", ostree="9.6.20250925-0", rhel="9.6"),
    ]
    groups = kernels.group_kernels(nodes)
    assert sorted(groups) == [K416, K419]
    assert groups[K416]["nodes"] == ["gpu-a", "gpu-b"]
    assert groups[K416]["os_tag"] == "rhcos4.16"
    assert groups[K416]["ostree_version"] == "416.94.202407030122-0"
    assert groups[K416]["ostree_versions"] == ["416.94.202406172220-0", "416.94.202407030122-0"]
    assert groups[K419]["os_tag"] == "rhel9.6" and groups[K419]["rhel_version"] == "9.6"


def test_group_kernels_ostree_ordering_is_numeric():
    nodes = [node("a", ostree="416.94.202406172220-10"), node("b", ostree="416.94.202406172220-9")]
    assert kernels.group_kernels(nodes)[K416]["ostree_version"] == "416.94.202406172220-10"


def test_group_kernels_unlabelled_node_is_named():
    with pytest.raises(GpuopsError) as err:
        kernels.group_kernels([node("gpu-a"), node("gpu-new", kernel=None)])
    assert "gpu-new" in str(err.value) and params_.KERNEL_LABEL in str(err.value)


def test_group_kernels_conflicting_os_release():
    nodes = [node("a", K416), node("b", K416, os_id="rhel", version_id="9.4")]
    with pytest.raises(GpuopsError) as err:
        kernels.group_kernels(nodes)
    assert err.value.param == "os_tag"
    assert kernels.group_kernels(nodes, os_tag_override="rhcos4.16")[K416]["os_tag"] == "rhcos4.16"


def test_kernels_from_params():
    k = kernels.kernels_from_params(
        [K416], {"ID": "rhcos", "VERSION_ID": "4.16", "OSTREE_VERSION": "416.94.202406172220-0"}
    )
    assert (
        k[K416]["os_tag"] == "rhcos4.16"
        and k[K416]["ostree_version"] == "416.94.202406172220-0"
        and k[K416]["nodes"] == []
    )


@pytest.mark.parametrize(
    "kernel,rhel,expected",
    [(K416, None, "9"), ("4.18.0-193.29.1.el8_2.x86_64", None, "8"), (K416, "8.6", "8"), ("6.1.0", None, None)],
)
def test_rhel_major(kernel, rhel, expected):
    assert kernels.rhel_major(kernel, rhel) == expected


# --- tags, names, hashes -----------------------------------------------------


def test_image_tag_and_precompiled_reference():
    assert kernels.image_tag("550.90.07", K416, "rhcos4.16") == "550.90.07-5.14.0-427.22.1.el9_4.x86_64-rhcos4.16"
    assert (
        kernels.precompiled_image("nvcr.io/nvidia", "driver", "525", "5.15.0-69-generic", "ubuntu22.04")
        == "nvcr.io/nvidia/driver:525-5.15.0-69-generic-ubuntu22.04"
    )
    # the OpenShift self-built precompiled example of openshift-releases.md section 3
    assert (
        kernels.precompiled_image(
            "quay.io/acme", "nvidia-gpu-driver", "550.54.14", "5.14.0-284.54.1.el9_2.aarch64_64k", "rhcos4.15"
        )
        == "quay.io/acme/nvidia-gpu-driver:550.54.14-5.14.0-284.54.1.el9_2.aarch64_64k-rhcos4.15"
    )


def test_buildconfig_name_is_dns_and_bounded():
    name = kernels.buildconfig_name("nvidia-gpu-driver", K416)
    assert name == "nvidia-gpu-driver-5.14.0-427.22.1.el9-4.x86-64"
    long_kernel = "5.14.0-427.22.1.el9_4.x86_64_64k.with.a.very.long.local.suffix"
    long_name = kernels.buildconfig_name("nvidia-gpu-driver", long_kernel)
    assert len(long_name) <= 52 and DNS1123_LABEL_RE.match(long_name.replace(".", "-"))
    assert long_name != kernels.buildconfig_name("nvidia-gpu-driver", long_kernel + "x")


def test_inputs_hash_is_stable_and_sensitive():
    a = {"kernel": K416, "driver_version": "550.90.07", "build_args": [{"name": "X", "value": "1"}]}
    assert kernels.inputs_hash(a) == kernels.inputs_hash(dict(reversed(list(a.items()))))
    changed = dict(a, driver_version="550.90.08")
    assert kernels.inputs_hash(a) != kernels.inputs_hash(changed)
    assert len(kernels.inputs_hash(a)) == 20


def test_check_kernel_infos_requires_ostree_for_dtk():
    cfg = params_.validate_params(params())
    with pytest.raises(GpuopsError) as err:
        kernels.check_kernel_infos({K416: info416(ostree_version=None)}, "driver-toolkit", cfg)
    assert err.value.param == "base_image" and "gpu-a" in str(err.value)
    with pytest.raises(GpuopsError) as err:
        kernels.check_kernel_infos({K416: info416(os_tag=None)}, "precompiled", cfg)
    assert err.value.param == "os_tag"
    kernels.check_kernel_infos({K416: info416(ostree_version=None)}, "entitlement", cfg)
