# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import module_type as mt


def node(labels, provider_id=None):
    spec = {"providerID": provider_id} if provider_id else {}
    return {"metadata": {"name": "n", "labels": labels}, "spec": spec}


def test_gpu_product_from_gfd_label_then_instance_type():
    assert mt.node_gpu_product(node({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})) == "NVIDIA-H100-80GB-HBM3"
    aws = node({"node.kubernetes.io/instance-type": "g4dn.xlarge"}, "aws:///us-east-2a/i-1")
    assert mt.node_gpu_product(aws) == "Tesla-T4"
    assert mt.node_gpu_product(node({"node.kubernetes.io/instance-type": "p3.2xlarge"})) == "Tesla-V100-SXM2-16GB"
    assert mt.node_gpu_product(node({})) is None


@pytest.mark.parametrize(
    "products, driver, expected",
    [
        (["Tesla-T4", "NVIDIA-A10G"], "595.91.07", "open"),  # all Turing+: the installer's default
        (["Tesla-V100-SXM2-16GB"], "595.91.07", "proprietary"),  # Volta: no open support
        (["Tesla-T4", "Tesla-V100-SXM2-16GB"], "595.91.07", "proprietary"),
        (["NVIDIA-B200"], "595.91.07", "open"),  # Blackwell needs open
        ([None], "595.91.07", "open"),  # unknown GPU: branch >= 560
        ([None], "550.90.07", "proprietary"),  # unknown GPU: branch < 560
        (["Tesla-T4", None], "550.90.07", "proprietary"),  # one unknown node: the branch decides
        ([], "550.90.07", "proprietary"),
    ],
)
def test_auto_follows_the_gpus_like_nvidia_installer(products, driver, expected):
    assert mt.decide("auto", products, driver, "nodes a")[0] == expected


def test_asked_type_kept_unless_a_gpu_cannot_run_it():
    assert mt.decide("proprietary", ["Tesla-T4"], "595.91.07", "nodes a") == ("proprietary", "asked")
    with pytest.raises(GpuopsError) as err:
        mt.decide("proprietary", ["NVIDIA-B200"], "595.91.07", "nodes gpu-1")
    assert err.value.param == "kernel_module_type" and "gpu-1" in str(err.value) and "open" in str(err.value)
    with pytest.raises(GpuopsError) as err:
        mt.decide("open", ["Tesla-V100-SXM2-16GB"], "595.91.07", "nodes gpu-2")
    assert "proprietary" in str(err.value)
    with pytest.raises(GpuopsError) as err:
        mt.decide("auto", ["NVIDIA-B200", "Tesla-V100-SXM2-16GB"], "595.91.07", "nodes a, b")
    assert "one driver image cannot serve both" in str(err.value)
