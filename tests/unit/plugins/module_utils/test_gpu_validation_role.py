# -*- coding: utf-8 -*-
"""gpu_validation (module_utils of the role's filter): the inputs no input rule covers, and what the cluster lacks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validation import (
    gpu_node_problems,
    gpu_validation_problems,
)

CHECKS = ["allocatable", "driver", "vectoradd", "nvidia_smi", "metrics", "burnin"]
GOOD = {
    "gpu_validation_checks": ["allocatable", "vectoradd"],
    "gpu_validation_driver_selector": "",
    "gpu_validation_device_plugin_selector": "app=nvidia-device-plugin-daemonset",
    "gpu_validation_metrics_selector": "app in (a, b),tier!=x",
    "gpu_validation_reports_dir": "reports",
    "gpu_validation_report_name": "gpu-validation",
    "gpu_validation_vectoradd_image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubi8",
    "gpu_validation_nvidia_smi_image": "nvcr.io/nvidia/cuda:12.5.0-base-ubi8",
    "gpu_validation_burnin_image": "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04",
    "gpu_validation_burnin_level": 2,
    "gpu_validation_burnin_duration": 60,
    "gpu_validation_timeout": 300,
    "gpu_validation_driver_version": "",
    "gpu_validation_run_as_user": "auto",
    "gpu_validation_namespace": "nvidia-gpu-driver",
}


def test_good_inputs_have_no_problem():
    assert gpu_validation_problems(GOOD, CHECKS) == []
    assert (
        gpu_validation_problems(dict(GOOD, gpu_validation_run_as_user=1000, gpu_validation_driver_version=595), CHECKS)
        == []
    )
    assert gpu_validation_problems(dict(GOOD, gpu_validation_driver_version="595.91.07"), CHECKS) == []


@pytest.mark.parametrize(
    "name,value,expected",
    [
        ("gpu_validation_checks", [], "gpu_validation: gpu_validation_checks must be a non-empty list of allocatable,"),
        ("gpu_validation_checks", "vectoradd", "gpu_validation: gpu_validation_checks must be a non-empty list"),
        ("gpu_validation_driver_selector", ",app=x", 'gpu_validation: gpu_validation_driver_selector must be ""'),
        ("gpu_validation_device_plugin_selector", "", "gpu_validation: gpu_validation_device_plugin_selector must be"),
        ("gpu_validation_metrics_selector", "app=x,,b", "gpu_validation: gpu_validation_metrics_selector must be"),
        ("gpu_validation_reports_dir", "", "gpu_validation: gpu_validation_reports_dir (gpuops_reports_dir) must be"),
        ("gpu_validation_report_name", "a/b", "gpu_validation: gpu_validation_report_name must be a file base name"),
        ("gpu_validation_vectoradd_image", "nvcr.io/x:v 1", "gpu_validation: gpu_validation_vectoradd_image must be"),
        ("gpu_validation_nvidia_smi_image", None, "gpu_validation: gpu_validation_nvidia_smi_image must be"),
        ("gpu_validation_driver_version", "latest", "gpu_validation: gpu_validation_driver_version must be empty or"),
        ("gpu_validation_run_as_user", 0, "gpu_validation: gpu_validation_run_as_user must be auto or a non-root UID"),
        ("gpu_validation_run_as_user", True, "gpu_validation: gpu_validation_run_as_user must be auto"),
        ("gpu_validation_burnin_image", "dcgm latest", "gpu_validation: gpu_validation_burnin_image must be"),
    ],
)
def test_each_bad_input_is_named(name, value, expected):
    (msg,) = gpu_validation_problems(dict(GOOD, **{name: value}), CHECKS)
    assert msg.startswith(expected), msg


def test_a_burn_in_must_fit_in_the_timeout():
    burn = dict(GOOD, gpu_validation_checks=["allocatable", "burnin"])
    assert gpu_validation_problems(burn, CHECKS) == []  # level 2: about 180 s, and a minute to spare
    (msg,) = gpu_validation_problems(dict(burn, gpu_validation_burnin_level=3), CHECKS)
    assert msg == (
        "gpu_validation: gpu_validation_timeout 300 is too short for a level 3 burn-in with "
        "gpu_validation_burnin_duration 60: give at least 1140."
    )
    assert gpu_validation_problems(dict(burn, gpu_validation_burnin_level=3, gpu_validation_timeout=1140), CHECKS) == []
    # Without the burnin check the level does not matter.
    assert gpu_validation_problems(dict(GOOD, gpu_validation_burnin_level=4), CHECKS) == []


def test_the_cluster_needs_gpu_nodes_and_the_namespace():
    assert gpu_node_problems(["gpu-0"], 0, "ns", True) == []
    assert gpu_node_problems(["gpu-0", "gpu-1"], "2", "ns", True) == []
    (msg,) = gpu_node_problems(["gpu-0", "gpu-1"], 3, "ns", True)
    assert msg == (
        "gpu_validation: 2 GPU node(s) (gpu-0, gpu-1) carry an NFD NVIDIA PCI label, expected 3. Run the "
        "gpu_machineset, nfd and driver states first."
    )
    (msg,) = gpu_node_problems([], 0, "ns", True)
    assert msg.startswith("gpu_validation: 0 GPU node(s) (none) carry an NFD NVIDIA PCI label. Run")
    (msg,) = gpu_node_problems(["gpu-0"], "not a number", "no-gpu-stack", False)
    assert msg.startswith("gpu_validation: gpu_validation_namespace no-gpu-stack does not exist, so the GPU stack")
