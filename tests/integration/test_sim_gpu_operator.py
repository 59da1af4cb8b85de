# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The simulated NVIDIA GPU Operator (simopenshift.gpuoperator): OLM install, ClusterPolicy -> operands, status.

Without the collection: the operator installed through the simulated OLM as a user would, a ClusterPolicy taken
from the CSV's alm-examples, and the node agent judging the operand pods it makes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog, nfd  # noqa: E402
from simopenshift.kube import DAEMONSETS, DEPLOYMENTS, NAMESPACES, NODES, labels_of  # noqa: E402
from simopenshift.testing import (  # noqa: E402
    Client,
    allocatable,
    make_gpu_node,
    wait_for,
)
from test_sim_olm import csv_phase, operator_group, subscription  # noqa: E402

pytestmark = pytest.mark.integration

NS = "nvidia-gpu-operator"
CSV = "gpu-operator-certified.v26.3.3"  # the 4.16 catalog's (v26.7.0 is certified for 4.18+)


@pytest.fixture(scope="module")
def kube(cluster):
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile (OLM)")
    return Client(cluster.api)


@pytest.fixture(scope="module")
def operator(kube):
    """The GPU Operator installed through OLM, one hand-made T4 node with its NFD labels."""
    tag = uuid.uuid4().hex[:6]
    kube.create(NAMESPACES, {"metadata": {"name": NS}})
    operator_group(kube, NS, [NS], name="nvidia-gpu-operator-group")
    subscription(kube, NS, package="gpu-operator-certified", channel="v26.3", source="certified-operators")
    wait_for(lambda: csv_phase(kube, NS, CSV) == "Succeeded", 60, what="GPU Operator CSV Succeeded")
    node = make_gpu_node(kube, "sim-gpuop-" + tag, {"sim-test": tag}, 1, "Tesla-T4")
    # The labels the Red Hat NFD worker would report for it (the operator finds GPU nodes and RHCOS builds by them).
    labels = nfd.feature_labels(kube.get(NODES, node), nfd.parse_worker_config(nfd.OPENSHIFT_DEFAULT_WORKER_CONF))
    kube.patch(NODES, node, {"metadata": {"labels": labels}})
    csv = kube.get(apis.CSVS, CSV, NS)
    examples = json.loads(csv["metadata"]["annotations"]["alm-examples"])
    policy = [e for e in examples if e["kind"] == "ClusterPolicy"][0]
    yield type("Operator", (), {"node": node, "policy": policy})
    for cp in kube.list(apis.CLUSTERPOLICIES)[0]:
        kube.delete(apis.CLUSTERPOLICIES, cp["metadata"]["name"])
    wait_for(lambda: not kube.list(DAEMONSETS, NS)[0], 60, what="operands garbage-collected")
    kube.delete(NAMESPACES, NS)
    kube.delete(NODES, node)


def state(kube, name="gpu-cluster-policy"):
    return (kube.get(apis.CLUSTERPOLICIES, name) or {}).get("status") or {}


def condition(status, kind):
    return next((c for c in status.get("conditions") or [] if c["type"] == kind), {})


def test_alm_example_becomes_a_ready_gpu_stack(kube, operator):
    kube.create(apis.CLUSTERPOLICIES, operator.policy)
    status = wait_for(lambda: state(kube).get("state") == "ready" and state(kube), 120, what="ClusterPolicy ready")
    assert status["namespace"] == NS
    assert condition(status, "Ready")["reason"] == "Reconciled"
    node = kube.get(NODES, operator.node)
    labels = labels_of(node)
    assert labels["nvidia.com/gpu.present"] == "true" and labels["nvidia.com/gpu.deploy.driver"] == "true"
    # GFD ran (USE_NODE_FEATURE_API=false on OpenShift) and the plugin advertised the GPU.
    assert labels["nvidia.com/gpu.product"] == "Tesla-T4"
    assert allocatable(kube, operator.node) == "1"
    names = {d["metadata"]["name"] for d in kube.list(DAEMONSETS, NS)[0]}
    build = labels["feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"]
    assert "nvidia-driver-daemonset-" + build in names, names
    assert {"nvidia-container-toolkit-daemonset", "nvidia-device-plugin-daemonset", "gpu-feature-discovery"} <= names
    driver = kube.get(DAEMONSETS, "nvidia-driver-daemonset-" + build, NS)
    images = [c["image"] for c in driver["spec"]["template"]["spec"]["containers"]]
    # alm-examples name no driver image: the operator's DRIVER_IMAGE env (a digest, so no OS suffix), and the
    # Driver Toolkit of the node's RHCOS build from the openshift/driver-toolkit ImageStream.
    operator_pod = kube.get(DEPLOYMENTS, "gpu-operator", NS)["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in operator_pod["containers"][0]["env"] if "value" in e}
    assert images[0] == env["DRIVER_IMAGE"] and "@sha256:" in images[0]
    stream = kube.get(apis.IMAGESTREAMS, "driver-toolkit", "openshift")
    tag = [t for t in stream["status"]["tags"] if t["tag"] == build][0]
    assert images[1] == tag["items"][0]["dockerImageReference"]


def test_a_driver_version_tags_the_image_for_the_rhcos_release(kube, operator):
    triple = {"repository": "nvcr.io/nvidia", "image": "driver", "version": "580.126.20"}
    kube.patch(apis.CLUSTERPOLICIES, "gpu-cluster-policy", {"spec": {"driver": triple}})
    build = labels_of(kube.get(NODES, operator.node))["feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"]
    name = "nvidia-driver-daemonset-" + build

    def image():
        return kube.get(DAEMONSETS, name, NS)["spec"]["template"]["spec"]["containers"][0]["image"]

    wanted = "nvcr.io/nvidia/driver:580.126.20-rhcos" + catalog.cluster_build().ocp
    wait_for(lambda: image() == wanted, 30, what="driver image %s" % wanted)
    assert kube.get(DAEMONSETS, name, NS)["spec"]["updateStrategy"]["type"] == "OnDelete"


def test_partial_image_triple_fails_reconcile_with_the_operators_message(kube, operator):
    bad = {"spec": {"toolkit": {"repository": "registry.example.com/nvidia", "version": "v1.20.0"}}}
    kube.patch(apis.CLUSTERPOLICIES, "gpu-cluster-policy", bad)
    try:
        status = wait_for(
            lambda: condition(state(kube), "Error").get("reason") == "ReconcileFailed" and state(kube),
            30,
            what="ReconcileFailed",
        )
        assert status["state"] == "notReady"
        assert "repository, image and version must all be set" in condition(status, "Error")["message"]
    finally:
        kube.patch(
            apis.CLUSTERPOLICIES, "gpu-cluster-policy", {"spec": {"toolkit": {"repository": None, "version": None}}}
        )
    wait_for(lambda: state(kube).get("state") == "ready", 60, what="ready again")


def test_a_second_cluster_policy_is_ignored(kube, operator):
    second = dict(operator.policy, metadata={"name": "second-policy"})
    kube.create(apis.CLUSTERPOLICIES, second)
    try:
        wait_for(lambda: state(kube, "second-policy").get("state") == "ignored", 30, what="second ignored")
        assert state(kube).get("state") == "ready"
    finally:
        kube.delete(apis.CLUSTERPOLICIES, "second-policy")
