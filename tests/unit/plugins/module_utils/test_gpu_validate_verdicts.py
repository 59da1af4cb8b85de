# -*- coding: utf-8 -*-
"""Verdicts on what real GPU nodes, the real exporter and recent drivers produce."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.checks import (
    check_allocatable,
    judge_output,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.metrics import check_metrics
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.gpu_validate_upstream import (
    SMI_R535,
    SMI_R550,
    SMI_R580,
    SMI_R610,
    exposition,
    gfd_node,
    mig_mixed_node,
    mig_single_node,
    time_sliced_node,
)

# --- allocatable under MIG and time-slicing ---------------------------------------------


def test_mig_single_counts_mig_devices_as_nvidia_com_gpu():
    res = check_allocatable(mig_single_node())
    assert res["status"] == "pass", res
    assert "nvidia.com/gpu 14" in res["message"]


def test_mig_mixed_judges_full_gpus_and_each_profile():
    res = check_allocatable(mig_mixed_node())
    assert res["status"] == "pass", res
    for part in ("nvidia.com/gpu 2", "nvidia.com/mig-1g.5gb 7", "nvidia.com/mig-3g.20gb 2"):
        assert part in res["message"]


def test_mig_mixed_names_the_missing_profile():
    node = mig_mixed_node()
    node["status"]["allocatable"]["nvidia.com/mig-3g.20gb"] = "0"
    res = check_allocatable(node)
    assert res["status"] == "fail"
    assert "nvidia.com/mig-3g.20gb 0, expected 2 (nvidia.com/mig-3g.20gb.count)" in res["message"]


def test_mig_mixed_all_split_has_no_full_gpu():
    node = mig_mixed_node()
    node["status"]["allocatable"]["nvidia.com/gpu"] = "0"
    assert check_allocatable(node)["status"] == "pass"
    node["status"]["allocatable"]["nvidia.com/gpu"] = "5"  # more full GPUs than the node has
    res = check_allocatable(node)
    assert res["status"] == "fail" and "nvidia.com/gpu 5, expected at most 4" in res["message"]


def test_time_slicing_renamed_reads_gpu_shared():
    res = check_allocatable(time_sliced_node(rename=True, gpus=2, replicas=4))
    assert res["status"] == "pass", res
    assert res["message"].startswith("allocatable nvidia.com/gpu.shared 8")
    broken = time_sliced_node(rename=True, gpus=2, replicas=4)
    broken["status"]["allocatable"]["nvidia.com/gpu.shared"] = "0"
    res = check_allocatable(broken)
    assert res["status"] == "fail"
    assert "nvidia.com/gpu.shared 0, expected 8 (nvidia.com/gpu.count x nvidia.com/gpu.replicas)" in res["message"]


def test_time_slicing_not_renamed_still_reads_gpu():
    res = check_allocatable(time_sliced_node(rename=False, gpus=1, replicas=4))
    assert res["status"] == "pass" and "nvidia.com/gpu 4" in res["message"]


# --- metrics: one series set per physical GPU, never credited to a node it does not name ---


def test_mig_instances_are_one_physical_gpu():
    text = exposition(2, mig=("1g.5gb", 7))
    res = check_metrics(text, 2, node_name=None)
    assert res["status"] == "pass" and res["gpus"] == 2


@pytest.mark.parametrize("label", ["Hostname", "hostname"])
def test_service_credits_only_series_naming_the_node(label):
    text = exposition(1, host_label=label, host="gpu-b")
    res = check_metrics(text, 1, node_name="gpu-a")
    assert res["status"] != "pass", res
    assert check_metrics(text, 1, node_name="gpu-b")["status"] == "pass"


def test_service_without_host_label_fails_with_the_way_out():
    text = exposition(1, host_label=None)
    res = check_metrics(text, 1, node_name="gpu-a")
    assert res["status"] == "fail", res
    assert "metrics_via: pod" in res["message"] and "--no-hostname" in res["message"]


def test_service_host_label_may_be_the_short_name():
    text = exposition(1, host_label="hostname", host="ip-10-0-138-78")
    res = check_metrics(text, 1, node_name="ip-10-0-138-78.us-east-2.compute.internal")
    assert res["status"] == "pass"


# --- nvidia-smi of every driver branch -----------------------------------------------------


@pytest.mark.parametrize(
    "text,version,gpu",
    [
        (SMI_R535, "535.183.06", "Tesla T4"),
        (SMI_R550, "550.90.07", "Tesla T4"),
        (SMI_R580, "580.82.07", "NVIDIA L40S"),
        (SMI_R610, "610.43.02", "NVIDIA H200"),
    ],
)
def test_nvidia_smi_headers_of_each_branch(text, version, gpu):
    ok, detail = judge_output("nvidia_smi", text, version.split(".")[0])
    assert ok, detail
    assert detail == "driver {0}, {1}".format(version, gpu)


def test_nvidia_smi_r610_wrong_branch_is_named():
    ok, detail = judge_output("nvidia_smi", SMI_R610, "580")
    assert not ok and detail == "nvidia-smi reports driver 610.43.02, expected 580"


def test_plain_node_keeps_its_message():
    res = check_allocatable(gfd_node(allocatable={"nvidia.com/gpu": "1"}, gpu__count="1"))
    assert res["status"] == "pass" and res["message"] == "allocatable nvidia.com/gpu 1"
