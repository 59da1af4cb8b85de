# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import openshift_releases as rel
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.upgrade_preflight import judge
from ansible_collections.gpuops.cluster.plugins.module_utils.upgrade_preflight.runner import check_params

# A ClusterVersion as the CVO writes it (openshift/api config/v1 types_cluster_version.go).
CV = {
    "status": {
        "desired": {"version": "4.16.0"},
        "history": [{"state": "Completed", "version": "4.16.0"}],
        "availableUpdates": [{"version": "4.16.3"}, {"version": "4.17.0"}],
        "conditionalUpdates": [
            {
                "release": {"version": "4.17.2"},
                "risks": [{"name": "AWSOldBootImages", "message": "..."}],
                "conditions": [{"type": "Recommended", "status": "False", "reason": "AWSOldBootImages"}],
            }
        ],
        "conditions": [{"type": "RetrievedUpdates", "status": "True"}],
    }
}


def test_release_table_gives_kernel_and_os_release_the_way_nfd_labels_them():
    row = rel.lookup("4.17.0")
    assert row["kernel"] == "5.14.0-427.50.1.el9_4.x86_64" and row["rhcos_build"] == "417.94.202409121747-0"
    assert rel.os_release(row) == {"ID": "rhcos", "VERSION_ID": "4.17", "OSTREE_VERSION": "417.94.202409121747-0",
                                   "RHEL_VERSION": "9.4", "OPENSHIFT_VERSION": "4.17"}  # fmt: skip
    # From 4.19 RHCOS is layered on RHEL: ID=rhel and VERSION_ID is the RHEL minor.
    layered = {
        "version": "4.19.9",
        "rhcos_build": "9.6.20250811-0",
        "kernel": "5.14.0-570.35.1.el9_6.x86_64",
        "rhel": "9.6",
    }
    assert rel.os_release(layered)["ID"] == "rhel" and rel.os_release(layered)["VERSION_ID"] == "9.6"
    given = [
        {
            "version": "4.17.12",
            "rhcos_build": "417.94.202501010000-0",
            "kernel": "5.14.0-427.60.1.el9_4.x86_64",
            "rhel": "9.4",
        }
    ]
    assert rel.lookup("4.17.12", given)["source"] == "given" and rel.lookup("4.17.12") is None
    assert rel.kubernetes_minor("4.17.0") == (1, 30) and rel.kubernetes_minor("4.6.4") == (1, 19)
    assert rel.kubernetes_minor("4.9.0") == (1, 22) and rel.kubernetes_minor("4.2.0") is None


def test_operands_are_judged_against_their_certified_range():
    assert rel.operands_supported("4.18.1")[0] and rel.operands_supported("4.22.0")[0]
    ok, words = rel.operands_supported("4.17.0")
    assert not ok and "certified for OpenShift 4.18-4.22, not 4.17.0" in words


@pytest.mark.parametrize(
    "version, products, status, words",
    [
        ("595.91.07", ["Tesla-T4", "NVIDIA-A10G"], judge.OK, "supports NVIDIA-A10G, Tesla-T4"),
        (
            "595.91.07",
            ["Tesla-V100-SXM2-16GB"],
            judge.FAIL,
            "(Maxwell, Pascal and Volta) needs a driver of branch 580 or older",
        ),
        ("580.95.05", ["Tesla-V100-SXM2-16GB"], judge.OK, "supports"),
        ("535.230.02", ["Tesla-K80"], judge.FAIL, "(Kepler) needs a driver of branch 470 or older"),
        ("550.90.07", ["NVIDIA-B200"], judge.FAIL, "(Blackwell) needs a driver of branch 570 or newer"),
        ("595.91.07", ["Mystery-GPU"], judge.WARN, "GPU model unknown (Mystery-GPU)"),
    ],
)
def test_driver_branch_against_the_gpus(version, products, status, words):
    got, text = judge.driver_supports(version, products)
    assert got == status and words in text, text


def test_available_conditional_and_unknown_targets():
    checks = dict((n, (s, w)) for n, s, w in judge.release_checks("4.17.0", "4.16.0", CV, [], [], True))
    assert checks["update"] == (judge.OK, "4.17.0 is an available update of 4.16.0")
    assert checks["operands"][0] == judge.WARN
    checks = dict((n, (s, w)) for n, s, w in judge.release_checks("4.17.2", "4.16.0", CV, [], [], True))
    assert checks["update"][0] == judge.WARN and "AWSOldBootImages" in checks["update"][1]
    checks = dict((n, (s, w)) for n, s, w in judge.release_checks("4.18.22", "4.16.0", CV, [], [], False))
    assert checks["update"][0] == judge.FAIL and checks["release"][0] == judge.FAIL and "crun" in checks["release"][1]
    assert checks["apis"] == (judge.WARN, "APIRequestCount is not served: removed APIs not checked")


def test_upgradeable_false_blocks_a_minor_upgrade_not_a_z_stream():
    operator = {"metadata": {"name": "kube-apiserver"},
                "status": {"conditions": [{"type": "Upgradeable", "status": "False", "reason": "AdminAckRequired",
                                           "message": "ack-4.16-kube-1.30-api-removals-in-4.17"}]}}  # fmt: skip
    status, words = judge.gates(CV, [operator], "4.16.0", "4.17.0")
    assert status == judge.FAIL and "ClusterOperator kube-apiserver: Upgradeable=False (AdminAckRequired" in words
    assert judge.gates(CV, [operator], "4.16.0", "4.16.3")[0] == judge.WARN
    assert judge.gates(CV, [], "4.16.0", "4.17.0") == (judge.OK, "no Upgradeable=False condition")


def test_apis_in_use_that_the_target_removes():
    counts = [
        {"metadata": {"name": "flowschemas.v1beta3.flowcontrol.apiserver.k8s.io"}, "status": {"removedInRelease": "1.32", "requestCount": 12}},
        {"metadata": {"name": "prioritylevelconfigurations.v1beta2.flowcontrol.apiserver.k8s.io"}, "status": {"removedInRelease": "1.29", "requestCount": 3}},
        {"metadata": {"name": "unused.v1beta1.example.io"}, "status": {"removedInRelease": "1.32", "requestCount": 0}},
        {"metadata": {"name": "pods.v1."}, "status": {"requestCount": 900}},
    ]  # fmt: skip
    status, words = judge.removed_apis(counts, "4.18.0", "4.19.0")  # Kubernetes 1.31 -> 1.32
    assert status == judge.FAIL and words.count("requests in 24 h") == 1
    assert "flowschemas.v1beta3.flowcontrol.apiserver.k8s.io (removed in Kubernetes 1.32, 12 requests" in words
    assert judge.removed_apis(counts, "4.16.0", "4.17.0")[0] == judge.OK  # 1.29 was already removed; 1.32 not yet


def test_pools_prefer_a_custom_pool_over_worker():
    pools = [
        {"metadata": {"name": "worker"}, "spec": {"nodeSelector": {"matchLabels": {"node-role.kubernetes.io/worker": ""}}}},
        {"metadata": {"name": "gpu"}, "spec": {"nodeSelector": {"matchLabels": {"node-role.kubernetes.io/gpu": ""}}}},
    ]  # fmt: skip
    nodes = [
        {
            "metadata": {
                "name": "a",
                "labels": {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/gpu": ""},
            }
        },
        {"metadata": {"name": "b", "labels": {"node-role.kubernetes.io/worker": ""}}},
        {"metadata": {"name": "c", "labels": {}}},
    ]
    assert judge.pools_of(nodes, pools) == {"gpu": ["a"], "worker": ["b"], "-": ["c"]}


def test_image_states_and_the_verdict():
    assert judge.image_check({"ready": "x@sha256:1"}, "t", True) == (judge.OK, "image t ready")
    assert "would build now" in judge.image_check({"would_build": True}, "t", True)[1]
    assert "Driver Toolkit image is unknown" in judge.image_check({}, "t", False)[1]
    assert (
        judge.image_check({"ready": "x", "unchecked": "the target's Driver Toolkit image is unknown"}, "t", False)[0]
        == judge.WARN
    )
    assert judge.image_check({"why": "inputs changed since nvidia-gpu-driver-5-1"}, "t", True) == (
        judge.FAIL,
        "image t inputs changed since nvidia-gpu-driver-5-1: build it before the upgrade",
    )
    assert judge.verdict([("a", judge.OK, ""), ("b", judge.WARN, "")])[0] == judge.GO
    assert judge.verdict([("a", judge.FAIL, ""), ("b", judge.WARN, "")])[0] == judge.NO_GO
    rows = [{"target": "4.17.0", "pool": "worker", "nodes": ["a"], "kernel": "k", "image_status": "ready", "verdict": "GO",
             "checks": [("image", judge.OK, "ready"), ("operands", judge.WARN, "certified for 4.18-4.22")]}]  # fmt: skip
    lines = judge.table(rows)
    assert lines[1].split()[:6] == ["4.17.0", "worker", "1", "k", "ready", "GO"]
    assert lines[1].endswith("operands: certified for 4.18-4.22")


BASE = {"namespace": "nvidia-gpu-driver", "name": "nvidia-gpu-driver", "driver_version": "595.91.07", "strategy": "driver-toolkit",
        "targets": None, "releases": None, "driver_toolkit_images": {}, "gpu_label": None}  # fmt: skip


@pytest.mark.parametrize(
    "change, param",
    [
        ({"targets": ["4.17"]}, "targets"),
        ({"driver_version": "latest"}, "driver_version"),
        ({"namespace": "Bad_NS"}, "namespace"),
        (
            {"releases": [{"version": "4.17.9", "rhcos_build": "x", "kernel": "not a kernel", "rhel": "9.4"}]},
            "releases",
        ),
        ({"driver_toolkit_images": {"4.17.0": "latest"}}, "driver_toolkit_images"),
    ],
)
def test_bad_options_are_named(change, param):
    with pytest.raises(GpuopsError) as err:
        check_params(dict(BASE, **change))
    assert err.value.param == param, str(err.value)
