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


def test_states_the_ledger_skipped_take_their_place_in_run_order_with_no_time_of_their_own():
    at = "2026-11-23T10:00:03+00:00"
    marks = [
        {"state": "preflight", "event": "start", "at": "2026-11-23T10:00:00+00:00"},
        {"state": "preflight", "event": "end", "at": "2026-11-23T10:00:02+00:00"},
        {"event": "skipped", "states": ["gpu_machineset", "nfd"], "at": at},
        {"state": "driver", "event": "start", "at": "2026-11-23T10:00:04+00:00"},
        {"state": "driver", "event": "end", "at": "2026-11-23T10:00:09+00:00"},
    ]
    spans = timeline.state_timeline(marks)
    assert [s["state"] for s in spans] == ["preflight", "gpu_machineset", "nfd", "driver"]
    assert [s["seconds"] for s in spans] == [2.0, 0.0, 0.0, 5.0]
    assert [s.get("result") for s in spans] == [None, timeline.SKIPPED_RESULT, timeline.SKIPPED_RESULT, None]
    assert spans[1]["start"] == spans[1]["end"] == at
    text = "\n".join(timeline.table(spans, []))
    assert "nfd" in text and timeline.SKIPPED_RESULT in text


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


def test_the_gpu_operators_pods_by_their_app_labels():
    n = node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:40Z")
    n["status"]["allocatable"] = {"cpu": "4", "nvidia.com/gpu": "4"}

    def operand(app, ready_at, component=None):
        p = pod("gpu-a", ready_at)
        labels = dict({"app": app}, **({"app.kubernetes.io/component": component} if component else {}))
        p["metadata"] = {"name": app + "-x", "labels": labels}
        return p

    pods = [
        operand("nvidia-gpu-driver-ubuntu22.04-8656946b56", "2026-11-23T10:01:40Z", component="nvidia-driver"),
        operand("nvidia-container-toolkit-daemonset", "2026-11-23T10:01:50Z"),
        operand("nvidia-device-plugin-daemonset", "2026-11-23T10:02:00Z"),
    ]
    sec = timeline.node_timeline([n], [], pods, {"gpu-a": "2026-11-23T10:02:30Z"})[0]["seconds"]
    assert (sec["driver"], sec["toolkit"], sec["plugin"], sec["validate"]) == (60.0, 10.0, 10.0, 30.0)
    from ansible_collections.gpuops.cluster.plugins.module_utils.timeline_read import OPERATOR_POD_SELECTOR

    assert OPERATOR_POD_SELECTOR == "app in (nvidia-container-toolkit-daemonset,nvidia-device-plugin-daemonset)"


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
    marks = [
        {"state": "nfd", "event": "start", "at": "2026-11-24T04:00:00.000000Z"},
        {"event": "skipped", "states": ["driver"], "at": "2026-11-24T04:00:01.000000Z"},
    ]
    assert check_marks(marks) == marks and check_marks(None) == []
    for bad in (
        {"state": "nfd", "event": "begin", "at": "x"},
        {"state": "nfd", "event": "end"},
        "nfd",
        {"event": "skipped", "states": [], "at": "x"},
        {"event": "skipped", "states": "driver", "at": "x"},
        {"event": "skipped", "states": ["driver", ""], "at": "x"},
        {"event": "skipped", "states": ["driver"]},
    ):
        with pytest.raises(GpuopsError) as err:
            check_marks(marks + [bad])
        assert err.value.param == "marks" and str(err.value).startswith("marks: item 2 must be a dict")


# ---- the NFD GPU label's time, from objects shaped as a real cluster returns them --------------------------------
PCI = "feature.node.kubernetes.io/pci-10de.present"


def real_node(name, created, ready, nfd_at, nfd_labels=(PCI,), gfd_at=None):
    """A Node as the API returns it: kubelet's, the node link controller's and nfd-master's managedFields entries.

    nfd-master patches without a field manager, so its entry is named after its User-Agent ("nfd-master"); with
    ``gfd_at`` it has also written GFD's labels (features.d), which moves its entry's time to then.
    """
    owned = dict(("f:" + k, {}) for k in nfd_labels)
    labels = dict((k, "true") for k in nfd_labels)
    if gfd_at:
        owned.update({"f:nvidia.com/gpu.product": {}, "f:nvidia.com/gpu.count": {}})
        labels.update({"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.count": "1"})
    labels.update({"kubernetes.io/hostname": name, "node-role.kubernetes.io/worker": ""})
    managed = [
        {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:kubernetes.io/hostname": {}}}, "f:spec": {"f:podCIDR": {}}},
            "manager": "kubelet",
            "operation": "Update",
            "time": created,
        },
        {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:conditions": {'k:{"type":"Ready"}': {".": {}, "f:lastTransitionTime": {}}}}},
            "manager": "kubelet",
            "operation": "Update",
            "subresource": "status",
            "time": "2026-11-23T10:30:00Z",  # every heartbeat moves it
        },
        {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:node-role.kubernetes.io/worker": {}}}},
            "manager": "nodelink-controller",
            "operation": "Update",
            "time": created,
        },
        {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {
                    "f:annotations": {"f:nfd.node.kubernetes.io/feature-labels": {}},
                    "f:labels": owned,
                }
            },
            "manager": "nfd-master",
            "operation": "Update",
            "time": gfd_at or nfd_at,
        },
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "creationTimestamp": created, "managedFields": managed},
        "status": {
            "allocatable": {"cpu": "4", "nvidia.com/gpu": "1"},
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ready}],
            "nodeInfo": {"kernelVersion": "5.14.0-427.22.1.el9_4.x86_64"},
        },
    }


def nfd_worker(node_name, ready_at, helm=False):
    labels = {"app.kubernetes.io/name": "node-feature-discovery", "role": "worker"} if helm else {"app": "nfd-worker"}
    return {
        "metadata": {"name": "nfd-worker-" + node_name[-5:], "namespace": "openshift-nfd", "labels": labels},
        "spec": {"nodeName": node_name},
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}]},
    }


def gpu_stack(node_name, driver_at, toolkit_at, plugin_at):
    return [
        stack_pod(node_name, "nvidia-driver", driver_at),
        stack_pod(node_name, "nvidia-container-toolkit", toolkit_at),
        stack_pod(node_name, "nvidia-device-plugin", plugin_at),
    ]


def test_nfd_label_time_is_the_time_of_nfd_masters_entry():
    n = real_node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z")
    assert timeline.label_entry(n) == (timeline.parse_time("2026-11-23T10:00:50Z"), "nfd-master")
    row = timeline.node_timeline([n], [], gpu_stack("gpu-a", *STACK_AT))[0]
    assert row["steps"]["nfd_labelled"] == "2026-11-23T10:00:50+00:00"
    assert row["sources"] == {"nfd_labelled": "managedFields (nfd-master)"}
    assert (row["seconds"]["nfd"], row["seconds"]["driver"]) == (20.0, 70.0)
    assert not any("nfd-worker" in line for line in timeline.table([], [row]))


STACK_AT = ("2026-11-23T10:02:00Z", "2026-11-23T10:02:10Z", "2026-11-23T10:02:20Z")


@pytest.mark.parametrize("form", ["pci-0302_10de.present", "pci-0300_10de.present"])
def test_every_form_of_the_gpu_label_is_read(form):
    n = real_node(
        "gpu-a",
        "2026-11-23T10:00:00Z",
        "2026-11-23T10:00:30Z",
        "2026-11-23T10:00:45Z",
        ("feature.node.kubernetes.io/" + form,),
    )
    assert timeline.label_entry(n) == (timeline.parse_time("2026-11-23T10:00:45Z"), "nfd-master")


def test_an_entry_without_the_gpu_label_is_not_the_labelling():
    # Only nodelink-controller's and kubelet's entries own labels, none the NFD GPU label: unknown.
    n = real_node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:45Z")
    n["metadata"]["managedFields"] = n["metadata"]["managedFields"][:3]
    assert timeline.label_entry(n) == (None, None)
    row = timeline.node_timeline([n], [], gpu_stack("gpu-a", *STACK_AT))[0]
    assert row["steps"]["nfd_labelled"] is None and row["sources"] == {"nfd_labelled": None}


def test_gfd_labels_written_by_nfd_master_later_leave_the_nfd_workers_ready():
    # What a converge leaves: nfd-master wrote GFD's labels after the toolkit, so its entry says 10:03:00.
    n = real_node(
        "gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z", gfd_at="2026-11-23T10:03:00Z"
    )
    pods = gpu_stack("gpu-a", *STACK_AT) + [
        nfd_worker("gpu-a", "2026-11-23T10:00:52Z"),
        nfd_worker("cpu-1", "2026-11-23T09:00:00Z"),  # another node's worker: not this node's time
    ]
    assert timeline.needs_nfd_worker(n, pods)
    rows = timeline.node_timeline([n], [], pods)
    assert [r["node"] for r in rows] == ["gpu-a"]  # the worker on cpu-1 does not make it a GPU node
    row = rows[0]
    assert row["steps"]["nfd_labelled"] == "2026-11-23T10:00:52+00:00"
    assert row["sources"] == {"nfd_labelled": "nfd-worker Ready"}
    assert (row["seconds"]["nfd"], row["seconds"]["driver"]) == (22.0, 68.0)
    # a worker pod is no driver pod (pods without the component label count as driver pods)
    assert row["steps"]["driver_ready"] == "2026-11-23T10:02:00+00:00"
    assert "nfd-worker" in timeline.table([], [row])[-1]


def test_the_helm_charts_worker_counts_too_and_the_earliest_worker_wins():
    n = real_node(
        "gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z", gfd_at="2026-11-23T10:03:00Z"
    )
    pods = gpu_stack("gpu-a", *STACK_AT) + [
        nfd_worker("gpu-a", "2026-11-23T10:01:10Z", helm=True),
        nfd_worker("gpu-a", "2026-11-23T10:00:40Z", helm=True),
    ]
    assert timeline.node_timeline([n], [], pods)[0]["steps"]["nfd_labelled"] == "2026-11-23T10:00:40+00:00"


def test_a_worker_ready_after_the_driver_is_unknown_too():
    # The worker pod was replaced after the driver came up (a config rollout): neither time is the labelling.
    n = real_node(
        "gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z", gfd_at="2026-11-23T10:03:00Z"
    )
    row = timeline.node_timeline(
        [n], [], gpu_stack("gpu-a", *STACK_AT) + [nfd_worker("gpu-a", "2026-11-23T10:04:00Z")]
    )[0]
    assert row["steps"]["nfd_labelled"] is None and row["sources"] == {"nfd_labelled": None}
    assert row["seconds"]["nfd"] is None and row["seconds"]["driver"] is None


def test_the_worker_is_needed_only_when_managed_fields_cannot_say():
    early = real_node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z")
    late = real_node(
        "gpu-b", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z", gfd_at="2026-11-23T10:03:00Z"
    )
    cpu = real_node("cpu-1", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z", nfd_labels=())
    assert not timeline.needs_nfd_worker(early, gpu_stack("gpu-a", *STACK_AT))
    assert timeline.needs_nfd_worker(late, gpu_stack("gpu-b", *STACK_AT))
    assert not timeline.needs_nfd_worker(late, [])  # no stack yet: the entry's time is the labelling
    assert not timeline.needs_nfd_worker(cpu, [])


class FakePods(object):
    """The dynamic client's get() as list_items calls it, answering pod lists by label selector."""

    def __init__(self, pods):
        self.pods, self.selectors = pods, []

    def get(self, resource, serialize=False, label_selector=None, **kwargs):
        import json

        self.selectors.append(label_selector)
        key, dummy, value = label_selector.partition("=")
        if key == "app":
            items = [p for p in self.pods if p["metadata"]["labels"].get("app") == value]
        else:
            items = [p for p in self.pods if p["metadata"]["labels"].get("role") == "worker"]

        class Response(object):
            data = json.dumps({"items": items})

        return Response()


def test_nfd_worker_pods_are_read_only_for_the_nodes_that_need_them():
    from ansible_collections.gpuops.cluster.plugins.module_utils.timeline_read import nfd_worker_pods

    early = real_node("gpu-a", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z")
    late = real_node(
        "gpu-b", "2026-11-23T10:00:00Z", "2026-11-23T10:00:30Z", "2026-11-23T10:00:50Z", gfd_at="2026-11-23T10:03:00Z"
    )
    stack = gpu_stack("gpu-a", *STACK_AT) + gpu_stack("gpu-b", *STACK_AT)
    workers = [nfd_worker("gpu-a", "2026-11-23T10:00:52Z"), nfd_worker("gpu-b", "2026-11-23T10:00:53Z", helm=True)]
    client = FakePods(workers)
    assert nfd_worker_pods(client, "pods", [early], stack) == [] and client.selectors == []
    got = nfd_worker_pods(client, "pods", [early, late], stack)
    assert [p["spec"]["nodeName"] for p in got] == ["gpu-b"]
    assert client.selectors == list(timeline.NFD_WORKER_SELECTORS)


def test_the_ledgers_record_in_the_timelines_run_comes_back_with_state_ledgers_defaults():
    from ansible_collections.gpuops.cluster.plugins.module_utils import follow, timeline_read

    states = [{"name": "nfd", "inputs": "x"}]
    checked = follow.check(
        {"state_ledger": {"mode": "record", "write": True, "states": states}}, timeline_read.FOLLOWERS
    )
    record = checked["state_ledger"]
    assert record["mode"] == "record" and record["write"] is True and record["name"] == "gpuops-state-ledger"
    assert follow.check({"state_ledger": None}, timeline_read.FOLLOWERS) == {}


@pytest.mark.parametrize(
    "given, param, words",
    [
        ({"states": [{"name": "nfd", "inputs": "x"}]}, "state_ledger.mode", "only mode=record"),  # check by default
        ({"mode": "invalidate", "failed_state": "nfd"}, "state_ledger.mode", "only mode=record"),
        ({"mode": "record", "states": [{"name": "nfd"}]}, "state_ledger.states", "inputs"),
        ({"mode": "record", "name": "Ledger!"}, "state_ledger.name", "not a valid"),
        ({"mode": "record", "api_key": "x"}, "state_ledger", "api_key"),
    ],
)
def test_a_bad_record_option_is_named_under_state_ledger(given, param, words):
    from ansible_collections.gpuops.cluster.plugins.module_utils import follow, timeline_read
    from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError

    with pytest.raises(GpuopsError) as err:
        follow.check({"state_ledger": given}, timeline_read.FOLLOWERS)
    assert err.value.param == param and words in str(err.value)
