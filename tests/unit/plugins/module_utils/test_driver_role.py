# -*- coding: utf-8 -*-
"""driver_role (module_utils of the driver role's filters): the build mode, the checks beyond the input rules, the
lines shown, the message per failing node and the driver_result fact."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import driver_role

OCP416 = {"openshift": True, "openshift_version": "4.16.3"}
OCP48 = {"openshift": True, "openshift_version": "4.8.12"}
K8S = {"openshift": False}
OLD = "5.14.0-427.22.1.el9_4.x86_64"
NEW = "5.14.0-427.50.1.el9_4.x86_64"
PEM = "data:text/plain;charset=utf-8;base64,LS0tLS1CRUdJTg=="
LABELS = ["feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present"]


def node(name, kernel=OLD, os_release=None, gpu=True):
    return {
        "name": name,
        "gpu": gpu,
        "kernel_version": kernel,
        "os_release": os_release or {"ID": "rhcos", "VERSION_ID": "4.16"},
    }


def checks(**over):
    base = {
        "version": "595.91.07",
        "precompiled_version": "595",
        "build_name": "nvidia-gpu-driver",
        "mode": "driver-toolkit",
        "platform": OCP416,
        "dtk_min_openshift": "4.9.9",
        "entitlement_pem": "",
        "entitlement_machineconfig": "50-entitlement-pem",
        "kernel_label": "feature.node.kubernetes.io/kernel-version.full",
        "gpu_labels": LABELS,
        "check_mode": False,
    }
    base.update(over)
    return base


@pytest.mark.parametrize(
    "asked,platform,mode",
    [
        ("auto", OCP416, "driver-toolkit"),
        ("auto", {"openshift": True, "openshift_version": "4.9.9"}, "driver-toolkit"),
        ("auto", {"openshift": True, "openshift_version": "4.9.8"}, "entitlement"),
        ("auto", OCP48, "entitlement"),
        ("auto", {"openshift": True}, "entitlement"),
        ("auto", K8S, "runtime-compiled"),
        ("auto", {"openshift": True, "openshift_version": "4.10.0-rc.1"}, "driver-toolkit"),
        ("precompiled", OCP416, "precompiled"),
        ("entitlement", K8S, "entitlement"),
    ],
)
def test_auto_follows_the_platform_and_a_given_mode_stays(asked, platform, mode):
    assert driver_role.resolve_mode(asked, platform, "4.9.9") == mode


def test_good_inputs_on_a_labelled_node_have_no_problem():
    assert driver_role.problems([node("gpu-a")], checks()) == []
    assert driver_role.problems([node("gpu-a")], checks(mode="entitlement", platform=OCP48, entitlement_pem=PEM)) == []
    assert driver_role.problems([node("gpu-a")], checks(version="550.90", precompiled_version=580)) == []


@pytest.mark.parametrize(
    "over,start",
    [
        ({"version": "latest"}, "driver: driver_version must be an NVIDIA driver version such as 595.91.07"),
        ({"version": 595}, "driver: driver_version must be"),
        ({"precompiled_version": "r580"}, "driver: driver_precompiled_version must be a driver branch such as 580"),
        ({"precompiled_version": True}, "driver: driver_precompiled_version must be"),
        ({"build_name": "a" * 41}, "driver: driver_build_name must be a DNS-1123 label of at most 40 characters"),
        ({"mode": "driver-toolkit", "platform": K8S}, "driver: driver_build_mode driver-toolkit builds on OpenShift"),
        ({"mode": "entitlement", "platform": K8S}, "driver: driver_build_mode entitlement builds on OpenShift"),
        (
            {"mode": "driver-toolkit", "platform": OCP48},
            "driver: driver_build_mode driver-toolkit needs OpenShift >= 4.9.9",
        ),
        (
            {"mode": "entitlement"},
            "driver: driver_build_mode entitlement needs the cluster-wide entitlement: MachineConfig",
        ),
        ({"mode": "entitlement", "entitlement_pem": "LS0t"}, "driver: driver_build_mode entitlement needs"),
    ],
)
def test_each_bad_input_is_named(over, start):
    found = driver_role.problems([node("gpu-a")], checks(**over))
    assert len(found) == 1 and found[0].startswith(start), found


def test_a_bad_build_name_is_left_to_the_input_rule():
    # Not a DNS label at all: the input rule (dns_label) says so with the same words, once.
    assert driver_role.problems([node("gpu-a")], checks(build_name="Bad_Name")) == []
    assert driver_role.problems([node("gpu-a")], checks(build_name="a" * 64)) == []


def test_a_long_value_is_shortened_in_the_message():
    (msg,) = driver_role.problems([node("gpu-a")], checks(version="9" * 200))
    assert msg.endswith("....") and len(msg) < 300


def test_entitlement_on_kubernetes_names_the_platform_only():
    (msg,) = driver_role.problems([node("gpu-a")], checks(mode="entitlement", platform=K8S))
    assert "builds on OpenShift" in msg


def test_gpu_nodes_without_nfd_labels_are_named():
    nodes = [node("gpu-a", kernel=None), node("gpu-b"), node("cpu", kernel=None, gpu=False)]
    (msg,) = driver_role.problems(nodes, checks())
    assert msg == (
        "driver: GPU node(s) gpu-a carry no feature.node.kubernetes.io/kernel-version.full label: Node Feature "
        "Discovery has not labelled them yet (run the nfd role, or wait for nfd-worker)."
    )


def test_nvidia_images_need_the_os_labels():
    nodes = [
        node("gpu-a", os_release={"ID": "ubuntu"}),
        node("gpu-b", os_release={"VERSION_ID": "22.04"}),
        node("gpu-c"),
    ]
    assert driver_role.problems(nodes, checks()) == []  # built images do not
    (msg,) = driver_role.problems(nodes, checks(mode="runtime-compiled", platform=K8S))
    assert msg.startswith("driver: GPU node(s) gpu-a, gpu-b carry no system-os_release.ID / VERSION_ID label")
    assert driver_role.problems(nodes, checks(mode="precompiled", platform=K8S)) == [msg]


def test_no_gpu_node_stops_except_in_check_mode():
    (msg,) = driver_role.problems([node("cpu", gpu=False)], checks())
    assert msg == (
        "driver: no GPU node: no node carries an NFD NVIDIA PCI label (feature.node.kubernetes.io/pci-10de.present, "
        "feature.node.kubernetes.io/pci-0302_10de.present=true). Run the gpu_machineset and nfd roles first."
    )
    assert driver_role.problems([], checks(check_mode=True)) == []


BUILD = {
    "strategy": "driver-toolkit",
    "images": {NEW: "registry/ns/nvidia-gpu-driver:595.91.07-" + NEW},
    "kernels": {
        NEW: {"action": "built", "image": "registry/ns/nvidia-gpu-driver:595.91.07-" + NEW, "nodes": ["gpu-a", "gpu-b"]}
    },
    "stale": [{"kernel": OLD}],
    "builds": ["nvidia-gpu-driver-5-14-0-427-50-1-1"],
}


def test_build_lines_name_each_kernel_and_the_stale_builds():
    lines = driver_role.build_lines(BUILD, False)
    assert lines == [
        "driver: driver-toolkit, 1 kernel(s)",
        NEW + " | built | registry/ns/nvidia-gpu-driver:595.91.07-" + NEW + " | gpu-a,gpu-b",
        "stale build for kernel (no GPU node runs it; kept, driver_prune_stale_builds removes it): " + OLD,
    ]
    assert driver_role.build_lines(BUILD, True)[-1] == "stale build for kernel (no GPU node runs it; pruned): " + OLD
    # A failed build has no images: the lines still render (the task stops with the build's message).
    assert driver_role.build_lines({"msg": "1 of 1 driver build(s) failed"}, False) == ["driver: None, 0 kernel(s)"]


def existing_ds(name, kernel):
    return {"metadata": {"name": name, "annotations": {"gpuops.cluster/kernel": kernel}}}


EXISTING = [existing_ds("nvidia-driver-old", OLD), {"metadata": {"name": "nvidia-driver-odd"}}]


def test_daemonset_kernels_read_the_annotation():
    assert driver_role.daemonset_kernels(EXISTING) == {"nvidia-driver-old": OLD, "nvidia-driver-odd": "?"}


def test_rollout_lines_name_the_objects_the_pruned_kernels_and_a_timeout():
    ensure = {
        "objects": [{"name": "nvidia-driver-new", "action": "created"}],
        "pruned": [{"name": "nvidia-driver-old"}, {"name": "nvidia-driver-gone"}],
        "progress": ["t+1s DaemonSet nvidia-gpu-driver/nvidia-driver-new created"],
        "ready": True,
        "not_ready": [],
    }
    assert driver_role.rollout_lines(ensure, EXISTING) == [
        "nvidia-driver-new: created",
        "pruned: DaemonSet of kernel " + OLD,
        "pruned: DaemonSet of kernel ?",
        "t+1s DaemonSet nvidia-gpu-driver/nvidia-driver-new created",
    ]
    late = dict(ensure, ready=False, msg="wait_timeout: not ready after 10s: DaemonSet x (0/1 ready).")
    assert (
        driver_role.rollout_lines(late, [])[-1]
        == "not ready: wait_timeout: not ready after 10s: DaemonSet x (0/1 ready)."
    )


def test_node_failures_say_when_the_kernel_label_is_stale():
    validation = {
        "passed": False,
        "nodes": [
            {"node": "gpu-a", "passed": False, "failures": ["driver pod p CrashLoopBackOff", "no nvidia-smi"]},
            {"node": "gpu-b", "passed": True, "failures": []},
            {"node": "gpu-c", "passed": False, "failures": ["no driver pod on the node"]},
        ],
    }
    now = [
        {"metadata": {"name": "gpu-a"}, "status": {"nodeInfo": {"kernelVersion": NEW}}},
        {"metadata": {"name": "gpu-c"}, "status": {"nodeInfo": {"kernelVersion": OLD}}},
    ]
    assert driver_role.node_failures(validation, [node("gpu-a"), node("gpu-b"), node("gpu-c")], now) == [
        "driver: node gpu-a (kernel %s; the NFD kernel label is stale: the node runs %s): driver pod p CrashLoopBackOff; "
        "no nvidia-smi" % (OLD, NEW),
        "driver: node gpu-c (kernel %s): no driver pod on the node" % OLD,
    ]
    # Nodes not read again: the label is all there is.
    assert driver_role.node_failures(validation, [node("gpu-a")], [])[0].startswith(
        "driver: node gpu-a (kernel %s): " % OLD
    )


DAEMONSET = {
    "metadata": {"name": "nvidia-driver-new", "annotations": {"gpuops.cluster/kernel": NEW}},
    "spec": {"template": {"spec": {"containers": [{"image": "registry/ns/nvidia-gpu-driver:595.91.07-" + NEW}]}}},
}


def test_result_records_each_kernel_the_pruned_ones_and_the_stale_builds():
    ensure = {"objects": [], "pruned": [{"name": "nvidia-driver-old"}], "ready": True, "not_ready": []}
    result = driver_role.result(BUILD, ensure, [DAEMONSET], EXISTING, "nvidia-gpu-driver", ["gpu-a", "gpu-b"])
    assert result == {
        "mode": "driver-toolkit",
        "namespace": "nvidia-gpu-driver",
        "kernels": {
            NEW: {
                "daemonset": "nvidia-driver-new",
                "image": "registry/ns/nvidia-gpu-driver:595.91.07-" + NEW,
                "nodes": ["gpu-a", "gpu-b"],
                "action": "built",
            }
        },
        "pruned_kernels": [OLD],
        "stale_builds": [OLD],
        "builds": ["nvidia-gpu-driver-5-14-0-427-50-1-1"],
        "ready": True,
        "validated_nodes": ["gpu-a", "gpu-b"],
    }


def test_result_in_check_mode_and_after_a_timeout():
    # Check mode: k8s_ensure waits for nothing (no ready key); nothing was validated.
    result = driver_role.result(BUILD, {"objects": [], "pruned": []}, [DAEMONSET], [], "ns")
    assert result["ready"] is True and "validated_nodes" not in result
    late = {"objects": [], "pruned": [], "ready": False, "msg": "wait_timeout: not ready", "not_ready": ["x"]}
    assert driver_role.result(BUILD, late, [DAEMONSET], [], "ns")["ready"] is False
    unknown = dict(DAEMONSET, metadata={"name": "nvidia-driver-x", "annotations": {"gpuops.cluster/kernel": "6.8.0"}})
    assert driver_role.result(BUILD, {}, [unknown], [], "ns")["kernels"]["6.8.0"]["nodes"] == []
