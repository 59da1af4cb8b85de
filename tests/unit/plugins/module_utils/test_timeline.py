# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import timeline

STATES = ["preflight", "gpu_machineset", "entitlement", "nfd", "driver"]


def node(name, created, ready, label_at, gpu=True, machine=None, kernel="5.14.0-427.22.1.el9_4.x86_64"):
    labels = {"feature.node.kubernetes.io/pci-10de.present": "true"} if gpu else {}
    managed = [
        # kubelet-like status writer: no label ownership.
        {"manager": "kubelet", "operation": "Update", "time": ready, "fieldsV1": {"f:status": {}}},
    ]
    if label_at:
        managed.append(
            {
                "manager": "nfd-master",
                "operation": "Update",
                "time": label_at,
                "fieldsV1": {"f:metadata": {"f:labels": {"f:feature.node.kubernetes.io/pci-10de.present": {}}}},
            }
        )
    ann = {"machine.openshift.io/machine": "openshift-machine-api/" + machine} if machine else {}
    return {
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": ann,
            "creationTimestamp": created,
            "managedFields": managed,
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ready}],
            "nodeInfo": {"kernelVersion": kernel},
        },
    }


def pod(node_name, ready_at, ready="True"):
    return {
        "metadata": {"name": "nvidia-driver-" + node_name},
        "spec": {"nodeName": node_name},
        "status": {"conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": ready_at}]},
    }


def machine(name, created):
    return {"metadata": {"name": name, "creationTimestamp": created}}


def test_phases_of_a_gpu_node_from_machine_to_driver():
    n = node("gpu-a", "2026-11-23T10:00:30Z", "2026-11-23T10:01:00Z", "2026-11-23T10:01:20Z", machine="gpu-m1")
    rows = timeline.node_timeline(
        [n, node("cpu-1", "2026-11-23T09:00:00Z", "2026-11-23T09:00:05Z", None, gpu=False)],
        [machine("gpu-m1", "2026-11-23T10:00:00Z")],
        [pod("gpu-a", "2026-11-23T10:02:20Z")],
    )
    assert [r["node"] for r in rows] == ["gpu-a"]
    assert rows[0]["seconds"] == {
        "provision": 30.0,
        "boot": 30.0,
        "nfd": 20.0,
        "driver": 60.0,
        "toolkit": None,
        "plugin": None,
        "validate": None,
        "total": 140.0,
    }
    assert rows[0]["out_of_order"] is False
    assert rows[0]["kernel"].startswith("5.14.0")


def test_missing_steps_are_none_not_zero():
    n = node("gpu-a", "2026-11-23T10:00:30Z", "2026-11-23T10:01:00Z", None)
    row = timeline.node_timeline([n], [], [pod("gpu-a", "2026-11-23T10:02:00Z", ready="False")])[0]
    assert row["steps"]["machine_created"] is None and row["steps"]["nfd_labelled"] is None
    assert row["seconds"]["provision"] is None and row["seconds"]["driver"] is None and row["seconds"]["total"] is None


def test_a_reboot_after_labelling_is_flagged():
    # MachineConfig rollout: Ready moved after the labels were written.
    n = node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:05:00Z", "2026-11-23T10:01:00Z")
    row = timeline.node_timeline([n], [], [pod("gpu-a", "2026-11-23T10:06:00Z")])[0]
    assert row["seconds"]["nfd"] == -240.0 and row["out_of_order"] is True
    assert any("reboot" in line for line in timeline.table([], [row]))


def test_latest_label_write_wins():
    n = node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:10Z", "2026-11-23T10:00:20Z")
    n["metadata"]["managedFields"].append(
        {
            "manager": "nfd-master",
            "operation": "Update",
            "time": "2026-11-23T11:00:00Z",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:feature.node.kubernetes.io/pci-0302_10de.present": {}}}},
        }
    )
    assert timeline.label_time(n).isoformat() == "2026-11-23T11:00:00+00:00"


def test_state_marks_become_spans_in_run_order():
    marks = [
        {"state": "preflight", "event": "start", "at": "2026-11-23T10:00:00.250000+00:00"},
        {"state": "preflight", "event": "end", "at": "2026-11-23T10:00:02.750000+00:00", "result": "OpenShift 4.16"},
        {"state": "nfd", "event": "start", "at": "2026-11-23T10:00:03+00:00"},
    ]
    spans = timeline.state_timeline(marks)
    assert [s["state"] for s in spans] == ["preflight", "nfd"]
    assert spans[0]["seconds"] == 2.5 and spans[0]["result"] == "OpenShift 4.16"
    assert spans[1]["seconds"] is None


def test_table_lists_states_and_nodes():
    out = timeline.build(
        [{"state": "driver", "event": "start", "at": "2026-11-23T10:00:00Z"}],
        [node("gpu-a", "2026-11-23T10:00:30Z", "2026-11-23T10:01:00Z", "2026-11-23T10:01:20Z")],
    )
    text = "\n".join(out["table"])
    assert "driver" in text and "gpu-a" in text and "total" in text
    empty = timeline.build([], [])
    assert "(no GPU node yet)" in empty["table"]


@pytest.mark.parametrize(
    "first,last,expected",
    [
        (None, None, STATES),
        ("nfd", None, ["nfd", "driver"]),
        (None, "entitlement", ["preflight", "gpu_machineset", "entitlement"]),
        ("nfd", "nfd", ["nfd"]),
    ],
)
def test_state_range(first, last, expected):
    assert timeline.state_range(STATES, first, last) == expected


def test_state_range_names_the_variable():
    with pytest.raises(ValueError, match="gpuops_from_state: 'nvidia' is not a state.*preflight, gpu_machineset"):
        timeline.state_range(STATES, "nvidia", None)
    with pytest.raises(ValueError, match="gpuops_until_state"):
        timeline.state_range(STATES, None, "toolkit")
    with pytest.raises(ValueError, match="comes after"):
        timeline.state_range(STATES, "driver", "nfd")


def stack_pod(node_name, component, ready_at):
    p = pod(node_name, ready_at)
    p["metadata"] = {"name": component + "-" + node_name, "labels": {"app.kubernetes.io/component": component}}
    return p


def test_stack_phases_up_to_validated():
    n = node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:40Z")
    n["status"]["allocatable"] = {"cpu": "4", "nvidia.com/gpu": "4"}
    pods = [
        stack_pod("gpu-a", "nvidia-driver", "2026-11-23T10:01:40Z"),
        stack_pod("gpu-a", "nvidia-container-toolkit", "2026-11-23T10:01:50Z"),
        stack_pod("gpu-a", "nvidia-device-plugin", "2026-11-23T10:02:00Z"),
        stack_pod("gpu-a", "dcgm-exporter", "2026-11-23T10:09:00Z"),  # not a step: ignored
    ]
    row = timeline.node_timeline([n], [], pods, {"gpu-a": "2026-11-23T10:02:30Z"})[0]
    sec = row["seconds"]
    assert (sec["driver"], sec["toolkit"], sec["plugin"], sec["validate"]) == (60.0, 10.0, 10.0, 30.0)
    assert sec["total"] == 150.0
    lines = timeline.table([], [row])
    assert "validate" in lines[2] and lines[3].split()[-1] == "150.0"


def test_plugin_ready_without_allocatable_gpus_is_not_a_step():
    # The plugin pod is Ready but the node advertises nothing (e.g. it registered no device).
    n = node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:40Z")
    n["status"]["allocatable"] = {"nvidia.com/gpu": "0"}
    pods = [
        stack_pod("gpu-a", "nvidia-driver", "2026-11-23T10:01:40Z"),
        stack_pod("gpu-a", "nvidia-container-toolkit", "2026-11-23T10:01:50Z"),
        stack_pod("gpu-a", "nvidia-device-plugin", "2026-11-23T10:02:00Z"),
    ]
    row = timeline.node_timeline([n], [], pods, {"gpu-a": "2026-11-23T10:02:30Z"})[0]
    assert row["steps"]["allocatable"] is None and row["seconds"]["plugin"] is None
    # total stops at the last step reached in order, not at a validation that followed no allocatable.
    assert row["seconds"]["total"] == 110.0


def test_nfd_label_rewritten_after_the_driver_is_unknown_not_a_reboot():
    # NFD's master wrote labels again (GFD's, through features.d) after the driver was Ready.
    n = node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:10Z", "2026-11-23T10:05:00Z")
    n["status"]["allocatable"] = {"nvidia.com/gpu": "1"}
    pods = [
        stack_pod("gpu-a", "nvidia-driver", "2026-11-23T10:02:00Z"),
        stack_pod("gpu-a", "nvidia-container-toolkit", "2026-11-23T10:02:10Z"),
        stack_pod("gpu-a", "nvidia-device-plugin", "2026-11-23T10:02:20Z"),
    ]
    row = timeline.node_timeline([n], [], pods, {"gpu-a": "2026-11-23T10:03:00Z"})[0]
    assert row["steps"]["nfd_labelled"] is None
    assert row["seconds"]["nfd"] is None and row["seconds"]["driver"] is None
    assert row["out_of_order"] is False and row["seconds"]["total"] == 180.0


def test_long_state_names_keep_the_columns():
    marks = [
        {"state": "gpu_feature_discovery", "event": "start", "at": "2026-11-23T10:00:00Z"},
        {"state": "gpu_feature_discovery", "event": "end", "at": "2026-11-23T10:00:08.5Z"},
        {"state": "nfd", "event": "start", "at": "2026-11-23T10:00:09Z"},
        {"state": "nfd", "event": "end", "at": "2026-11-23T10:00:10Z"},
    ]
    lines = timeline.build(marks, [])["table"]
    assert lines[1].rstrip().endswith("8.5") and lines[2].rstrip().endswith("1.0")
    assert len(lines[1].rstrip()) == len(lines[2].rstrip())


def test_module_reads_the_pods_of_every_timed_component_and_checks_the_marks():
    from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
    from ansible_collections.gpuops.cluster.plugins.module_utils.timeline_read import POD_SELECTOR, check_marks

    assert POD_SELECTOR == (
        "app.kubernetes.io/component in (nvidia-container-toolkit,nvidia-device-plugin,nvidia-driver)"
    )
    marks = [{"state": "nfd", "event": "start", "at": "2026-11-24T04:00:00.000000Z"}]
    assert check_marks(marks) == marks and check_marks(None) == []
    for bad in ({"state": "nfd", "event": "begin", "at": "x"}, {"state": "nfd", "event": "end"}, "nfd"):
        with pytest.raises(GpuopsError) as err:
            check_marks(marks + [bad])
        assert err.value.param == "marks" and str(err.value).startswith("marks: item 1 must be a dict")
