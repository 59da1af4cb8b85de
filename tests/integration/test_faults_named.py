# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Faults that a run must name, with the state and the node: an OLM install that never finishes, an image that
cannot be pulled, etcd restarted under a write, a GPU node going NotReady while its validation pods run.

In this order on one OpenShift cluster (each test starts from what the one before left): the OLM test ends with
the converge the others start from.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

import pytest
from faults import SiteRun, census, cut, failure_of, restart_etcd
from kubernetes import client
from simopenshift.control import break_node, images_back, images_missing, node_is_ready, repair_node, wait_for

pytestmark = pytest.mark.integration
# Mitogen's engine (conftest.engine_of): these faults are the cluster's, not the engine's; so is the SIGKILL chain's
# repair (test_faults_kill.py); the API server chain (test_faults_apiserver.py) runs ansible-core's default engine.
# README, Test suite.
ANSIBLE_ENGINE = "mitogen"

NFD_NS = "openshift-nfd"
QUOTA = "no-pods"


@pytest.fixture(scope="module")
def ocp(cluster):
    if cluster.profile != "openshift":
        pytest.skip("OLM and the GPU MachineSets need the openshift profile")
    return cluster


def _ended(run, timeout=900):
    rc = run.wait(timeout)
    result = run.result()
    assert result is not None, run.text()[-3000:]
    return rc, result


def test_an_olm_install_that_never_finishes_is_named(ocp, tmp_path):
    core = client.CoreV1Api(ocp.api)
    core.create_namespace({"metadata": {"name": NFD_NS}})
    # The operator's Deployment cannot make its pod: the ClusterServiceVersion stays Installing.
    core.create_namespaced_resource_quota(NFD_NS, {"metadata": {"name": QUOTA}, "spec": {"hard": {"pods": "0"}}})
    run = SiteRun(ocp, tmp_path, "olm-stuck", extra_args=["-e", "nfd_wait_timeout=30"])
    rc, result = _ended(run)
    final, failed = failure_of(result)
    assert rc == 2 and final.startswith("nfd failed"), (final, failed)
    said = " ".join(failed)
    assert "ClusterServiceVersion {0}/nfd.".format(NFD_NS) in said and "still not Succeeded after 30s" in said, said
    # What OLM says: the install waits for the operator's Deployment, whose pod the quota refuses.
    assert "Installing (InstallWaiting): installing: waiting for deployment nfd-controller-manager" in said, said
    core.delete_namespaced_resource_quota(QUOTA, NFD_NS)
    fixed = SiteRun(ocp, tmp_path, "olm-fixed")
    rc, result = _ended(fixed)
    assert rc == 0 and result["stats"]["localhost"]["failures"] == 0, fixed.text()[-3000:]


def _gpu_nodes(api):
    nodes = client.CoreV1Api(api).list_node(label_selector="feature.node.kubernetes.io/pci-10de.present=true").items
    return sorted(n.metadata.name for n in nodes)


def test_an_image_that_cannot_be_pulled_is_named_with_the_node_then_etcd_restarts_under_the_fix(ocp, tmp_path):
    (node,) = _gpu_nodes(ocp.api)
    # The registry has no such tag (the simulator's lever: the node's kubelet cannot pull it).
    images_missing(ocp.api, node, ["nvcr.io/nvidia/k8s-device-plugin:v0.0.0-missing"])
    bad = SiteRun(
        ocp,
        tmp_path,
        "unpullable",
        extra_args=["-e", "device_plugin_version=v0.0.0-missing", "-e", "device_plugin_wait_timeout=60"],
    )
    try:
        rc, result = _ended(bad)
    finally:
        images_back(ocp.api, node)
    final, failed = failure_of(result)
    said = " ".join(failed)
    assert rc == 2 and final.startswith("device_plugin failed"), (final, failed)
    assert node in said and ("ImagePullBackOff" in said or "ErrImagePull" in said), said
    assert "v0.0.0-missing" in said, said
    # The fix (the default image again), with etcd stopped and started under its first write.
    fixed = SiteRun(
        ocp,
        tmp_path,
        "etcd-restart",
        at=[
            "device_plugin::Ensure the device plugin (service account, RBAC, configs, DaemonSet) and wait for its rollout"
        ],
    )
    assert fixed.wait_held(0)
    first = cut(fixed, 0, ocp, "write", lambda: restart_etcd(ocp))
    rc, result = _ended(fixed)
    # The API server waits for etcd: the write that was under way and those after it went through.
    assert rc == 0 and result["stats"]["localhost"]["failures"] == 0, (first, fixed.text()[-3000:])
    assert census(ocp.api)["our DaemonSets"].count("nvidia-device-plugin-daemonset") == 1


def condition_taints(api, node):
    taints = client.CoreV1Api(api).read_node(node).spec.taints or []
    return [t.key for t in taints if t.key.startswith("node.kubernetes.io/")]


def test_a_gpu_node_not_ready_during_validation_is_named_before_the_timeout(ocp, tmp_path):
    (node,) = _gpu_nodes(ocp.api)
    run = SiteRun(
        ocp,
        tmp_path,
        "not-ready",
        at=["gpu_validation::Validate every GPU node (workload checks only where something changed)"],
        extra_args=["-e", "gpu_validation_force=true"],
        playbook="validate.yml",
    )
    assert run.wait_held(0)
    t0 = time.time()
    try:
        cut(run, 0, ocp, "write", lambda: break_node(ocp.api, node))
        rc, result = _ended(run)
        took = time.time() - t0
        said = " ".join(m for m in failure_of(result)[1])
        assert rc == 2, run.text()[-3000:]
        assert "pod did not finish: node {0} went NotReady (KubeletNotReady".format(node) in said, said
        # Named within two node looks, not at the validation's 300 s timeout.
        assert took < 90, took
    finally:
        repair_node(ocp.api, node)
    # Ready, and kube-controller-manager's node lifecycle controller has taken its not-ready taint off again (it
    # does so on its next pass, nodeMonitorPeriod 5 s, after the condition turned Ready).
    wait_for(lambda: node_is_ready(ocp.api, node) and not condition_taints(ocp.api, node), 90, what="node Ready again")
    again = SiteRun(ocp, tmp_path, "validated", extra_args=["-e", "gpu_validation_force=true"], playbook="validate.yml")
    rc, result = _ended(again)
    assert rc == 0, again.text()[-3000:]
    assert not census(ocp.api)["one-shot pods"]
