# -*- coding: utf-8 -*-
"""The simulator's GFD, device plugin and nvidia-smi as real clusters show them: sharing, MIG, driver branches."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from simopenshift import catalog, gpustack, mig

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.checks import (
    check_allocatable,
    judge_output,
)


def hardware(instance_type):
    node = {"metadata": {"labels": {"node.kubernetes.io/instance-type": instance_type}}}
    return node, catalog.NodeHardware.for_node(node)


def test_renamed_time_slicing_keeps_the_product():
    node, hw = hardware("g4dn.xlarge")
    renamed = gpustack.gfd_labels(node, hw, "550.90.07", replicas=4, strategy="time-slicing", rename=True)
    assert renamed["nvidia.com/gpu.product"] == "Tesla-T4"
    assert renamed["nvidia.com/gpu.replicas"] == "4"
    assert renamed["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    kept = gpustack.gfd_labels(node, hw, "550.90.07", replicas=4, strategy="time-slicing", rename=False)
    assert kept["nvidia.com/gpu.product"] == "Tesla-T4-SHARED"


@pytest.mark.parametrize(
    "driver,label,width",
    [("535.183.06", "Driver Version:", 89), ("550.90.07", "Driver Version:", 91), ("580.82.07", "Driver Version:", 91)]
    + [("610.43.02", "KMD Version:", 91)],
)
def test_nvidia_smi_layout_follows_the_driver_branch(driver, label, width):
    table = gpustack.nvidia_smi("NVIDIA-A100-SXM4-40GB", 2, 40536, driver, "12.4", now=0)
    lines = [line for line in table.splitlines()[1:] if line]
    assert {len(line) for line in lines} == {width}
    assert "{0} {1}".format(label, driver) in table
    assert ("Driver Version" in table) == (label == "Driver Version:")
    assert "MIG M." in table and table.count("NVIDIA A100-SXM4-40GB") == 2
    ok, detail = judge_output("nvidia_smi", table, driver.split(".")[0])
    assert ok and detail == "driver {0}, NVIDIA A100-SXM4-40GB".format(driver)


def test_old_branches_keep_the_seed_layout():
    table = gpustack.nvidia_smi("Tesla-T4", 1, 15360, "470.82.01", "11.4", now=0)
    assert {len(line) for line in table.splitlines()[1:]} == {79}


def test_mig_geometry_of_an_a100_40gb():
    assert mig.geometry("all-1g.5gb", 40536) == {"1g.5gb": 7}
    assert mig.geometry("all-3g.20gb", 40536) == {"3g.20gb": 2}
    assert mig.geometry("all-balanced", 40536) == {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
    assert mig.geometry("all-disabled", 40536) is None
    with pytest.raises(ValueError):
        mig.geometry("all-1g.10gb", 40536)  # an 80GB profile


def mig_node(strategy, config):
    node, hw = hardware("p4d.24xlarge")
    node["metadata"]["labels"][mig.MIG_CONFIG_LABEL] = config
    layout, state = mig.mig_state(node["metadata"]["labels"], hw.model, hw.gpu_count, hw.gpu_memory_mib, strategy)
    return node, hw, layout, state


def as_node(node, hw, layout):
    """The Node as the device plugin and GFD leave it."""
    labels = gpustack.gfd_labels(node, hw, "550.90.07")
    labels = layout.gfd_labels(labels)
    resources = layout.resources()
    return {"metadata": {"name": "gpu-a", "labels": labels}, "status": {"allocatable": resources}}


def test_mig_single_advertises_mig_devices_as_gpus():
    node, hw, layout, state = mig_node("single", "all-1g.5gb")
    assert state == "success"
    assert layout.resources() == {"nvidia.com/gpu": 56}
    labels = layout.gfd_labels(gpustack.gfd_labels(node, hw, "550.90.07"))
    assert labels["nvidia.com/mig.strategy"] == "single"
    assert labels["nvidia.com/gpu.count"] == "56"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"
    assert check_allocatable(as_node(node, hw, layout))["status"] == "pass"


def test_mig_mixed_advertises_one_resource_per_profile():
    node, hw, layout, state = mig_node("mixed", "all-balanced")
    assert layout.resources() == {"nvidia.com/mig-1g.5gb": 16, "nvidia.com/mig-2g.10gb": 8, "nvidia.com/mig-3g.20gb": 8}
    labels = layout.gfd_labels(gpustack.gfd_labels(node, hw, "550.90.07"))
    assert labels["nvidia.com/gpu.count"] == "8"  # physical GPUs under mixed
    assert labels["nvidia.com/mig-3g.20gb.count"] == "8"
    res = check_allocatable(as_node(node, hw, layout))
    assert res["status"] == "pass" and "nvidia.com/mig-2g.10gb 8" in res["message"]


def test_mig_needs_a_mig_capable_gpu_and_one_profile_for_single():
    node, hw = hardware("g4dn.xlarge")
    assert mig.mig_state({mig.MIG_CONFIG_LABEL: "all-1g.5gb"}, hw.model, 1, hw.gpu_memory_mib, "single") == (
        None,
        "failed",
    )
    assert mig_node("single", "all-balanced")[2:] == (None, "failed")
    assert mig_node("none", "all-1g.5gb")[2:] == (None, "success")


def plugin_pod(containers, init=None):
    spec = {"containers": containers}
    if init:
        spec["initContainers"] = init
    return {"metadata": {"labels": {}}, "spec": spec}


def test_config_manager_is_recognised_by_name_or_command():
    plain = plugin_pod([{"name": "nvidia-device-plugin", "command": ["nvidia-device-plugin"]}])
    assert not gpustack.has_config_manager(plain)
    # The init container (oneshot) alone does not follow later label changes.
    init_only = plugin_pod(
        plain["spec"]["containers"], init=[{"name": "config-manager-init", "command": ["config-manager"]}]
    )
    assert not gpustack.has_config_manager(init_only)
    assert gpustack.has_config_manager(plugin_pod(plain["spec"]["containers"] + [{"name": "config-manager"}]))
    assert gpustack.has_config_manager(plugin_pod([{"name": "cm", "command": ["/usr/bin/config-manager"]}]))


def test_default_config_is_read_from_any_container():
    pod = plugin_pod(
        [{"name": "plugin"}], init=[{"name": "init", "env": [{"name": "DEFAULT_CONFIG", "value": "four"}]}]
    )
    assert gpustack.pod_env(pod, "DEFAULT_CONFIG") == "four"
    assert gpustack.pod_env(pod, "MIG_STRATEGY") is None


def test_sharing_config_follows_the_node_label_then_the_default():
    data = {
        "two": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n",
        "four": "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n"
        "    - name: nvidia.com/gpu\n      replicas: 4\n",
    }
    assert gpustack.sharing_config(data, {}, "two") == (2, False, "time-slicing")
    assert gpustack.sharing_config(data, {gpustack.CONFIG_LABEL: "four"}, "two") == (4, True, "time-slicing")
