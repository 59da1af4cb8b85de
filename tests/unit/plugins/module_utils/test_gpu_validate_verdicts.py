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


# --- MIG single: the exporter must show every physical GPU that holds the MIG devices ---


def test_mig_single_needs_the_physical_gpus_that_hold_its_mig_devices():
    """14 x 1g.5gb (gpu.slices.gi 1): a GPU holds at most 7, so at least 2 physical GPUs must report metrics."""
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.resources import physical_gpus

    node = mig_single_node()
    assert physical_gpus(node) == 2
    one = check_metrics(exposition(1, mig=("1g.5gb", 7)), physical_gpus(node))
    assert one["status"] == "fail" and one["gpus"] == 1, one
    assert check_metrics(exposition(2, mig=("1g.5gb", 7)), physical_gpus(node))["status"] == "pass"


@pytest.mark.parametrize(
    "count,slices,product,want",
    [
        ("56", "1", None, 8),  # p4d.24xlarge: 8 x A100 all-1g.5gb
        ("6", "2", None, 2),  # 2g.10gb: 3 per GPU
        ("4", "3", None, 2),  # 3g.20gb: 2 per GPU
        ("8", "7", None, 8),  # 7g.40gb: the whole GPU
        ("14", None, "A100-SXM4-40GB-MIG-1g.5gb", 2),  # no slices label: the product's profile
        ("14", None, "A100-SXM4-40GB", None),  # neither: unknown (at least one)
    ],
)
def test_mig_single_physical_gpus_from_gfd_labels(count, slices, product, want):
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.resources import physical_gpus

    labels = {"mig__strategy": "single", "gpu__count": count}
    if slices:
        labels["gpu__slices__gi"] = slices
    if product:
        labels["gpu__product"] = product
    assert physical_gpus(gfd_node(**labels)) == want


# --- driver pods: the collection's and every GPU Operator release's ---


def test_default_driver_selector_finds_both_labelings(monkeypatch):
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import runner
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.params import validate_params
    from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.gpu_validate_fixtures import params

    pods = {
        "app.kubernetes.io/component=nvidia-driver": [
            {"metadata": {"name": "nvidia-driver-daemonset-abc", "uid": "1"}},  # GPU Operator >= v23.9: both labels
            {"metadata": {"name": "gpuops-driver-x", "uid": "2"}},
        ],
        "app=nvidia-driver-daemonset": [
            {"metadata": {"name": "nvidia-driver-daemonset-abc", "uid": "1"}},
            {"metadata": {"name": "nvidia-driver-daemonset-old", "uid": "3"}},  # GPU Operator < v23.9: app only
        ],
    }
    asked = []

    def fake_list(client, api, namespace, selector, param=None):
        asked.append(selector)
        return pods.get(selector, [])

    monkeypatch.setattr(runner, "list_items", fake_list)
    cfg = validate_params(params(checks=["driver"], driver_selector=None))
    assert cfg["driver_selectors"] == ["app.kubernetes.io/component=nvidia-driver", "app=nvidia-driver-daemonset"]
    found = runner._pods(cfg, None, None, "driver", "ns", "driver_selector")
    assert [p["metadata"]["name"] for p in found] == [
        "nvidia-driver-daemonset-abc",
        "gpuops-driver-x",
        "nvidia-driver-daemonset-old",
    ]
    asked[:] = []
    cfg = validate_params(params(checks=["driver"], driver_selector="app=my-driver"))
    assert cfg["driver_selectors"] == ["app=my-driver"]
    runner._pods(cfg, None, None, "driver", "ns", "driver_selector")
    assert asked == ["app=my-driver"]
