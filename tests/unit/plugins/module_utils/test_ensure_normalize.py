# -*- coding: utf-8 -*-
"""k8s_ensure's body preparation and compare-before-write test, on objects as the API server returns them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
from decimal import Decimal

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import normalize as N

DAEMONSET = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "nvidia-driver", "namespace": "gpu", "labels": {"app": "nvidia-driver"}},
    "spec": {
        "selector": {"matchLabels": {"app": "nvidia-driver"}},
        "template": {
            "metadata": {"labels": {"app": "nvidia-driver"}},
            "spec": {
                "hostPID": True,
                "hostNetwork": False,
                "tolerations": [],
                "nodeSelector": {"nvidia.com/gpu.deploy.driver": True},
                "containers": [
                    {
                        "name": "driver",
                        "image": "nvcr.io/nvidia/driver:550.90.07",
                        "resources": {"limits": {"cpu": "1000m", "memory": 1073741824}, "requests": {"cpu": 0.5}},
                        "securityContext": {"privileged": True},
                    }
                ],
            },
        },
    },
}

# What a 1.34 apiserver returns for DAEMONSET once applied (defaults, canonical quantities, omitted zero values).
SERVER = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {
        "name": "nvidia-driver",
        "namespace": "gpu",
        "uid": "0b6c",
        "resourceVersion": "812",
        "generation": 1,
        "annotations": {"deprecated.daemonset.template.generation": "1"},
        "labels": {"app": "nvidia-driver", N.OWNER_LABEL: "driver", "app.kubernetes.io/managed-by": "gpuops.cluster"},
        "managedFields": [{"manager": "gpuops.cluster", "operation": "Apply"}],
    },
    "spec": {
        "revisionHistoryLimit": 10,
        "selector": {"matchLabels": {"app": "nvidia-driver"}},
        "template": {
            "metadata": {"creationTimestamp": None, "labels": {"app": "nvidia-driver"}},
            "spec": {
                "hostPID": True,
                "nodeSelector": {"nvidia.com/gpu.deploy.driver": "true"},
                "containers": [
                    {
                        "name": "driver",
                        "image": "nvcr.io/nvidia/driver:550.90.07",
                        "imagePullPolicy": "IfNotPresent",
                        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
                        "securityContext": {"privileged": True},
                        "terminationMessagePath": "/dev/termination-log",
                    }
                ],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
            },
        },
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
    },
    "status": {"desiredNumberScheduled": 3, "numberReady": 3},
}


def test_server_copy_of_the_manifest_needs_no_write():
    body = N.prepare(DAEMONSET, owner="driver")
    assert N.matches(SERVER, body)


def test_a_changed_field_is_a_difference():
    body = N.prepare(DAEMONSET, owner="driver")
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/driver:550.127.05"
    assert not N.matches(SERVER, body)


def test_a_missing_label_of_ours_is_a_difference():
    server = copy.deepcopy(SERVER)
    del server["metadata"]["labels"][N.OWNER_LABEL]
    assert not N.matches(server, N.prepare(DAEMONSET, owner="driver"))
    assert N.matches(server, N.prepare(DAEMONSET))


def test_quantities_compare_by_value():
    assert N.quantity("1000m") == N.quantity(1) == N.quantity("1") == Decimal(1)
    assert N.quantity("1Gi") == N.quantity(1073741824) == N.quantity("1024Mi")
    assert N.quantity("1e3") == N.quantity("1k") == 1000
    assert N.quantity("0.5") == N.quantity("500m")
    assert N.quantity("fast") is None and N.quantity(True) is None and N.quantity(None) is None
    server = copy.deepcopy(SERVER)
    server["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "2"
    assert not N.matches(server, N.prepare(DAEMONSET, owner="driver"))


@pytest.mark.parametrize("zero", [None, False, 0, "", {}, []])
def test_zero_values_the_server_omits_are_no_difference(zero):
    body = N.prepare({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}, "x": zero})
    server = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(body["metadata"], uid="1")}
    assert N.matches(server, body)


def test_a_non_zero_value_the_server_lacks_is_a_difference():
    body = N.prepare({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}, "x": True})
    server = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(body["metadata"], uid="1")}
    assert not N.matches(server, body)
    assert not N.matches(None, body)


def test_prepare_sends_strings_where_kubernetes_wants_strings():
    body = N.prepare(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "labels": {"index": 3, "on": True}, "annotations": {"ratio": 0.5}},
            "data": {"replicas": 4, "enabled": False, "text": "x"},
        },
        owner="role",
    )
    assert body["metadata"]["labels"] == {
        "index": "3",
        "on": "true",
        "app.kubernetes.io/managed-by": "gpuops.cluster",
        "gpuops.cluster/owner": "role",
    }
    assert body["metadata"]["annotations"] == {"ratio": "0.5"}
    assert body["data"] == {"replicas": "4", "enabled": "false", "text": "x"}


def test_prepare_does_not_change_the_manifest_and_encodes_secret_string_data():
    manifest = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"token": "abc"}}
    before = copy.deepcopy(manifest)
    body = N.prepare(manifest)
    assert manifest == before
    assert body["data"] == {"token": "YWJj"} and "stringData" not in body


def test_a_manifest_saved_from_the_server_matches_it():
    """`kubectl get -o yaml` output as a manifest: status and server metadata must not count (nor be sent)."""
    body = N.prepare(SERVER, owner="driver")
    assert "status" not in body and "resourceVersion" not in body["metadata"] and "uid" not in body["metadata"]
    assert "managedFields" not in body["metadata"]
    newer = copy.deepcopy(SERVER)
    newer["metadata"]["resourceVersion"] = "913"
    newer["status"]["numberReady"] = 2
    assert N.matches(newer, body)
