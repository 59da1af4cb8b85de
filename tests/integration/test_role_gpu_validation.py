# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The gpu_validation role on the simulated plain-Kubernetes cluster (``k8s_cluster``: bare GPU nodes gpu-0 T4 /
kernel 5.15 and gpu-1 A10G / kernel 6.8).

Check mode on the fresh cluster (zero writes, says what it would do); then NFD and the driver through their roles,
plus the simulator's minimal toolkit and device plugin DaemonSets (with a time-slicing ConfigMap of 1 replica) in the
GPU stack namespace. Then: bad inputs (each named in preflight, zero writes); the converge (workload pods on both
nodes, JSON / JUnit / Markdown reports, the record ConfigMap, the table); a no-op re-run (no pod, zero writes, every
task unchanged); a per-node change of the device plugin config (only that node re-validated); force (both); a node
whose device plugin is gone (named with its cause, reports written); check mode with the stack (zero writes); absent
twice. The metrics check is left out: the simulated exporter is not reachable through the API server's proxy yet.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from conftest import changed_tasks, failed_message, run_bad_inputs, run_role, task_results

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import manifests  # noqa: E402
from simopenshift.kube import CONFIGMAPS, DAEMONSETS, NAMESPACES, NODES, PODS, labels_of  # noqa: E402
from simopenshift.testing import Client, ensure_runtime_class, remove_runtime_class, wait_for  # noqa: E402

pytestmark = pytest.mark.integration

NS = "nvidia-gpu-driver"
RECORD = "gpu-validation-record"
PLUGIN_CM = "gpuops-test-plugin-config"
CONFIG_LABEL = "nvidia.com/device-plugin.config"
GPU_NODES = ["gpu-0", "gpu-1"]
KUBERNETES = {"openshift": False, "cloud": "none"}
CHECKS = ["allocatable", "driver", "vectoradd", "nvidia_smi"]
NFD = "feature.node.kubernetes.io/"
HOST = "kubernetes.io/hostname"
KERNELS = {"gpu-0": ("5.15.0-119-generic", "ubuntu", "22.04"), "gpu-1": ("6.8.0-45-generic", "ubuntu", "24.04")}
ONE_REPLICA = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 1\n"


def nfd_labels(kernel, os_id, version):
    return {
        NFD + "pci-10de.present": "true",
        NFD + "kernel-version.full": kernel,
        NFD + "system-os_release.ID": os_id,
        NFD + "system-os_release.VERSION_ID": version,
    }


def gpu_allocatable(kube, name):
    return ((kube.get(NODES, name).get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu")


def validation(cluster, role_vars=None, check=False):
    return run_role(
        cluster,
        "gpu_validation",
        dict({"preflight_platform": KUBERNETES, "gpu_validation_timeout": 60}, **(role_vars or {})),
        check=check,
    )


def fact(out, name):
    found = None
    for _name, res in task_results(out):
        if name in (res.get("ansible_facts") or {}):
            found = res["ansible_facts"][name]
    return found


def table(out):
    for name, res in task_results(out):
        if name.endswith("Show the validation table"):
            return res["msg"]
    return []


def record_writes(writes):
    return [w["name"] for w in writes if w["resource"] == "configmaps" and w["verb"] in ("create", "patch", "update")]


def pod_creates(writes):
    return [w for w in writes if w["verb"] == "create" and w["resource"] == "pods"]


@pytest.fixture(scope="module")
def fresh(k8s_cluster):
    """The Kubernetes cluster before any GPU state (the session's tests leave it so)."""
    kube = Client(k8s_cluster.api)
    assert not any(labels_of(n).get(NFD + "pci-10de.present") for n in kube.list(NODES)[0])
    return kube


@pytest.fixture(scope="module")
def stack(k8s_cluster, fresh, tmp_path_factory):
    """The first half done cheaply by hand: the NFD labels of both GPU nodes, the GPU stack namespace, one
    precompiled driver DaemonSet per kernel (the images the driver role names), the simulator's toolkit and device
    plugin DaemonSets (the plugin mounting a time-slicing ConfigMap of 1 replica). Removed afterwards."""
    kube = fresh
    reports = str(tmp_path_factory.mktemp("reports"))
    made_runtime_class = False
    try:
        for name, (kernel, os_id, version) in KERNELS.items():
            kube.patch(NODES, name, {"metadata": {"labels": nfd_labels(kernel, os_id, version)}})
        kube.create(NAMESPACES, {"metadata": {"name": NS}})
        kube.create(CONFIGMAPS, {"metadata": {"name": PLUGIN_CM, "namespace": NS}, "data": {"default": ONE_REPLICA}})
        for name, (kernel, os_id, version) in KERNELS.items():
            image = "nvcr.io/nvidia/driver:595-%s-%s%s" % (kernel, os_id, version)
            kube.create(
                DAEMONSETS, manifests.driver(NS, "nvidia-driver-" + name, image=image, node_selector={HOST: name})
            )
        for body in (manifests.toolkit(NS), manifests.device_plugin(NS, config_map=PLUGIN_CM)):
            kube.create(DAEMONSETS, body)
        # The toolkit role's RuntimeClass, which the validation pods name by default (gpu_validation_runtime_class).
        made_runtime_class = ensure_runtime_class(kube)
        wait_for(lambda: all(gpu_allocatable(kube, n) == "1" for n in GPU_NODES), 90, what="nvidia.com/gpu on both")
        yield kube, reports
    finally:
        remove_runtime_class(kube, made_runtime_class)
        if kube.get(NAMESPACES, NS) is not None:
            kube.delete(NAMESPACES, NS)
        for name in GPU_NODES:
            drop = {k: None for k in labels_of(kube.get(NODES, name)) if k.startswith((NFD, "nvidia.com/"))}
            if drop:
                kube.patch(NODES, name, {"metadata": {"labels": drop}})
        wait_for(lambda: kube.get(NAMESPACES, NS) is None, 90, what="namespace %s gone" % NS)
        wait_for(lambda: all(gpu_allocatable(kube, n) in (None, "0") for n in GPU_NODES), 60, what="GPUs withdrawn")


def test_check_mode_on_a_fresh_cluster_writes_nothing(k8s_cluster, fresh):
    mark = k8s_cluster.audit.mark()
    out = validation(k8s_cluster, check=True)
    assert failed_message(out) is None, failed_message(out)
    said = [
        res.get("msg") for name, res in task_results(out) if name.endswith("Say what the state would do (check mode)")
    ]
    assert said and said[0].startswith(
        "gpu_validation: would validate the GPU nodes (none is labelled by NFD yet) with allocatable, driver, vectoradd, nvidia_smi, metrics"
    )
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []


ARGSPEC = "Validation of arguments failed:\nvalue of "
BAD_INPUTS = [
    ({"gpu_validation_checks": ["vectoradd", "gpu_burn"]}, ARGSPEC + "gpu_validation_checks must be one or more of"),
    ({"gpu_validation_checks": []}, "gpu_validation: gpu_validation_checks must be a non-empty list"),
    (
        {"gpu_validation_namespace": "GPU_Stack"},
        "gpu_validation: gpu_validation_namespace (gpuops_gpu_namespace) must be",
    ),
    ({"gpu_validation_timeout": 3}, "gpu_validation: gpu_validation_timeout must be"),
    ({"gpu_validation_run_as_user": 0}, "gpu_validation: gpu_validation_run_as_user must be auto or a non-root UID"),
    ({"gpu_validation_driver_version": "latest"}, "gpu_validation: gpu_validation_driver_version must be"),
    ({"gpu_validation_driver_selector": ",app=x"}, "gpu_validation: gpu_validation_driver_selector must be"),
    (
        {"gpu_validation_tolerations": "nvidia.com/gpu"},
        "Validation of arguments failed:\nElements value for option 'gpu_validation_tolerations'",
    ),
    # Read from the cluster: more GPU nodes expected than NFD labelled, a namespace without the GPU stack.
    (
        {"gpu_validation_expected_gpu_nodes": 3},
        "gpu_validation: 2 GPU node(s) (gpu-0, gpu-1) carry an NFD NVIDIA PCI label, expected 3",
    ),
    ({"gpuops_gpu_namespace": "no-gpu-stack"}, "gpu_validation: gpu_validation_namespace no-gpu-stack does not exist"),
]


def test_bad_inputs_fail_in_preflight_with_zero_writes(k8s_cluster, stack):
    mark = k8s_cluster.audit.mark()
    out, failures = run_bad_inputs(
        k8s_cluster, [("gpu_validation", dict(bad, preflight_platform=KUBERNETES)) for bad, _msg in BAD_INPUTS]
    )
    assert len(failures) == len(BAD_INPUTS), failures
    for (name, msg), (bad, expected) in zip(failures, BAD_INPUTS):
        assert msg.startswith(expected), (bad, msg)
    ran = [name for name, _res in task_results(out)]
    assert not [n for n in ran if "Validate every GPU node (workload" in n], ran
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_converge_writes_reports_record_and_table_then_noop_rerun_starts_no_pod(k8s_cluster, stack):
    kube, reports = stack
    role_vars = {"gpu_validation_checks": CHECKS, "gpu_validation_reports_dir": reports}
    mark = k8s_cluster.audit.mark()
    started = time.monotonic()
    out = validation(k8s_cluster, role_vars)
    converge_s = time.monotonic() - started
    assert failed_message(out) is None, failed_message(out)
    writes = k8s_cluster.audit.writes_since(mark)
    assert len(pod_creates(writes)) == 4  # vectoradd and nvidia_smi on each GPU node
    assert record_writes(writes) == [RECORD]  # created (server-side apply)
    assert not kube.list(PODS, NS, label_selector="gpuops.cluster/validation-run")[0]

    result = fact(out, "gpu_validation_result")
    assert result["passed"] is True and result["nodes"] == {"gpu-0": True, "gpu-1": True}
    assert result["revalidated"] == GPU_NODES and result["unchanged"] == []
    report = json.load(open(os.path.join(reports, "gpu-validation.json")))
    assert report["summary"]["result"] == "passed" and report["summary"]["revalidated"] == GPU_NODES
    assert {n["node"]: n["checks"]["vectoradd"]["status"] for n in report["nodes"]} == {
        "gpu-0": "pass",
        "gpu-1": "pass",
    }
    suite = ET.parse(os.path.join(reports, "gpu-validation.xml")).getroot().find("testsuite")
    assert suite.get("tests") == str(2 * 5) and suite.get("failures") == "0" and suite.get("skipped") == "0"
    markdown = open(os.path.join(reports, "gpu-validation.md")).read()
    assert "## GPU validation: PASSED (2/2 nodes passed)" in markdown
    (row,) = [line for line in markdown.splitlines() if line.startswith("| gpu-0 |")]
    # No GPU Feature Discovery here: no product label, at least one GPU expected.
    assert (
        row == "| gpu-0 | - | 1/>=1 | pass | pass | pass | pass | pass | PASS | re-validated (never validated) |"
    ), row
    lines = table(out)
    assert lines[0] == "GPU validation: PASSED (2/2 nodes passed; checks: allocatable, driver, vectoradd, nvidia_smi)"
    assert [line.split(" | ")[0].strip() for line in lines[3:5]] == GPU_NODES
    assert all(line.endswith("re-validated (never validated)") for line in lines[3:5])
    record = kube.get(CONFIGMAPS, RECORD, NS)
    assert labels_of(record)["app.kubernetes.io/managed-by"] == "gpuops.cluster"
    entry = json.loads(record["data"]["gpu-1"])
    assert entry["checks"] == ["vectoradd", "nvidia_smi"] and entry["fingerprint"]["kernel"] == "6.8.0-45-generic"
    assert entry["fingerprint"]["driver"] == ["nvcr.io/nvidia/driver:595-6.8.0-45-generic-ubuntu24.04"]
    assert entry["fingerprint"]["allocatable"] == {"nvidia.com/gpu": "1"} and entry["fingerprint"]["plugin_config"]

    mark = k8s_cluster.audit.mark()
    started = time.monotonic()
    out = validation(k8s_cluster, role_vars)
    rerun_s = time.monotonic() - started
    assert failed_message(out) is None, failed_message(out)
    assert changed_tasks(out) == []
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
    result = fact(out, "gpu_validation_result")
    assert result["revalidated"] == [] and result["unchanged"] == GPU_NODES and result["passed"] is True
    lines = table(out)
    assert all(line.endswith("skipped, unchanged since " + entry["validated"]) for line in lines[3:5]), lines
    assert lines[-1] == "record %s/%s: unchanged" % (NS, RECORD)
    print(
        "gpu_validation kubernetes (2 GPU nodes): converge {0:.1f}s, no-op re-run {1:.1f}s, {2} tasks".format(
            converge_s, rerun_s, len(task_results(out))
        )
    )


def test_a_changed_node_alone_is_validated_again_and_force_validates_all(k8s_cluster, stack):
    kube, reports = stack
    role_vars = {"gpu_validation_checks": CHECKS, "gpu_validation_reports_dir": reports}
    before = json.loads(kube.get(CONFIGMAPS, RECORD, NS)["data"]["gpu-0"])
    # gpu-1 gets its own device plugin config (the per-node selection label of the device plugin).
    kube.patch(NODES, "gpu-1", {"metadata": {"labels": {CONFIG_LABEL: "default"}}})
    mark = k8s_cluster.audit.mark()
    out = validation(k8s_cluster, role_vars)
    assert failed_message(out) is None, failed_message(out)
    writes = k8s_cluster.audit.writes_since(mark)
    assert len(pod_creates(writes)) == 2
    assert record_writes(writes) == [RECORD]  # updated
    result = fact(out, "gpu_validation_result")
    assert result["revalidated"] == ["gpu-1"] and result["unchanged"] == ["gpu-0"]
    lines = table(out)
    assert lines[3].startswith("gpu-0 ") and lines[3].endswith("skipped, unchanged since " + before["validated"])
    assert lines[4].endswith("re-validated (label nvidia.com/device-plugin.config none -> default)"), lines
    record = kube.get(CONFIGMAPS, RECORD, NS)["data"]
    assert json.loads(record["gpu-0"]) == before
    assert json.loads(record["gpu-1"])["fingerprint"]["plugin_config_label"] == "default"
    report = json.load(open(os.path.join(reports, "gpu-validation.json")))
    gpu0 = [n for n in report["nodes"] if n["node"] == "gpu-0"][0]
    assert (
        gpu0["checks"]["vectoradd"]["status"] == "skipped"
        and gpu0["validation"]["last_validated"] == before["validated"]
    )

    mark = k8s_cluster.audit.mark()
    out = validation(k8s_cluster, dict(role_vars, gpu_validation_force=True))
    assert failed_message(out) is None, failed_message(out)
    assert len(pod_creates(k8s_cluster.audit.writes_since(mark))) == 4
    result = fact(out, "gpu_validation_result")
    assert result["revalidated"] == GPU_NODES and result["summary"]["forced"] is True
    assert all(line.endswith("re-validated (forced)") for line in table(out)[3:5])


def test_a_node_without_device_plugin_is_named_with_its_cause(k8s_cluster, stack):
    kube, reports = stack
    role_vars = {"gpu_validation_checks": CHECKS, "gpu_validation_reports_dir": reports}
    plugin = "nvidia-device-plugin-daemonset"
    kube.patch(
        DAEMONSETS, plugin, {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/hostname": "gpu-0"}}}}}, NS
    )
    try:
        wait_for(lambda: gpu_allocatable(kube, "gpu-1") in (None, "0"), 60, what="gpu-1 without GPUs")
        mark = k8s_cluster.audit.mark()
        out = validation(k8s_cluster, role_vars)
        msg = failed_message(out)
        assert msg.startswith("gpu_validation: node gpu-1: allocatable nvidia.com/gpu 0, expected "), msg
        assert "device-plugin pod" in msg and "gpu-0" not in msg.split("(reports:")[0]
        assert msg.endswith(
            "(reports: %s)" % ", ".join(os.path.join(reports, "gpu-validation." + e) for e in ("json", "xml", "md"))
        )
        assert pod_creates(k8s_cluster.audit.writes_since(mark)) == []  # gpu-0 unchanged, gpu-1 cannot run one
        report = json.load(open(os.path.join(reports, "gpu-validation.json")))
        assert report["summary"]["result"] == "failed" and report["failures"][0].startswith("gpu-1: allocatable")
        assert "**FAIL**" in open(os.path.join(reports, "gpu-validation.md")).read()
    finally:
        kube.patch(
            DAEMONSETS,
            plugin,
            {"spec": {"template": {"spec": {"nodeSelector": dict(manifests.GPU_NODE_SELECTOR, **{HOST: None})}}}},
            NS,
        )
        wait_for(lambda: gpu_allocatable(kube, "gpu-1") == "1", 60, what="gpu-1 GPUs back")


def test_check_mode_with_the_stack_writes_nothing_then_absent_twice(k8s_cluster, stack):
    kube, reports = stack
    kube.patch(
        NODES, "gpu-0", {"metadata": {"labels": {CONFIG_LABEL: "default"}}}
    )  # a change check mode must not act on
    mark = k8s_cluster.audit.mark()
    out = validation(k8s_cluster, {"gpu_validation_checks": CHECKS, "gpu_validation_reports_dir": reports}, check=True)
    assert failed_message(out) is None, failed_message(out)
    assert k8s_cluster.audit.writes_since(mark) == []
    lines = table(out)
    assert "gpu_validation: would record what was validated (check mode)" in lines

    out = validation(k8s_cluster, {"gpu_validation_state": "absent"})
    assert failed_message(out) is None, failed_message(out)
    assert kube.get(CONFIGMAPS, RECORD, NS) is None
    mark = k8s_cluster.audit.mark()
    out = validation(k8s_cluster, {"gpu_validation_state": "absent"})
    assert failed_message(out) is None and changed_tasks(out) == []
    assert k8s_cluster.audit.writes_since(mark, include_dry_run=True) == []
