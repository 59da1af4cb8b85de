# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_read on the real control plane: several reads in one task, each what k8s_info returns for it
(found, not found, an API the server does not serve), in order and by key; a skipped read keeps its
place; check mode reads the same; nothing is written; bad input names the option."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from kubernetes import client

pytestmark = pytest.mark.integration


def test_reads_in_one_task_as_k8s_info_would(cluster, namespace, ansible_task):
    core = client.CoreV1Api(cluster.api)
    core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "probe-read", "labels": {"probe": "read"}}, "data": {"k": "v"}}
    )
    masters = sorted(n.metadata.name for n in core.list_node(label_selector="node-role.kubernetes.io/master").items)
    assert masters
    reads = [
        {"api_version": "config.openshift.io/v1", "kind": "Infrastructure", "name": "cluster"},
        {"kind": "ConfigMap", "namespace": namespace, "label_selectors": ["probe=read"]},
        {"key": "missing", "kind": "ConfigMap", "namespace": namespace, "name": "not-there"},
        {"api_version": "example.com/v1", "kind": "Nothing"},
        {"key": "masters", "kind": "Node", "label_selectors": ["node-role.kubernetes.io/master"]},
        {"key": "skipped", "kind": "Secret", "namespace": namespace, "skip": True},
    ]
    mark = cluster.audit.mark()
    for check in (False, True):
        res = ansible_task("gpuops.cluster.k8s_read", {"reads": reads}, check=check)
        assert not res.get("failed") and res["changed"] is False, res
        results = res["answers"]
        assert [r["item"]["key"] for r in results] == [
            "Infrastructure",
            "ConfigMap",
            "missing",
            "Nothing",
            "masters",
            "skipped",
        ]
        assert [r["api_found"] for r in results] == [True, True, True, False, True, None]
        assert results[0]["resources"][0]["status"]["infrastructureName"]
        assert [c["data"] for c in results[1]["resources"]] == [{"k": "v"}]
        assert results[2]["resources"] == [] and results[3]["resources"] == []
        assert sorted(n["metadata"]["name"] for n in res["found"]["masters"]) == masters
        assert results[5]["skipped"] is True and res["found"]["skipped"] == []
        assert res["found"]["ConfigMap"] == results[1]["resources"]
    assert cluster.audit.writes_since(mark) == []

    # k8s_info of the same object returns the same object.
    info = ansible_task(
        "kubernetes.core.k8s_info", {"kind": "ConfigMap", "namespace": namespace, "label_selectors": ["probe=read"]}
    )
    assert info["resources"] == results[1]["resources"]


def test_bad_reads_name_the_option(cluster, ansible_task):
    for reads, words in (
        ([{"kind": "Node"}, {"kind": "Node"}], "reads[1].key 'Node' is also the key of reads[0]"),
        ([], "must list at least one read"),
    ):
        res = ansible_task("gpuops.cluster.k8s_read", {"reads": reads})
        assert res.get("failed") and res.get("param") == "reads", res
        assert words in res["msg"], res["msg"]
    # A read without kind: Ansible's own check of the suboptions.
    res = ansible_task("gpuops.cluster.k8s_read", {"reads": [{"name": "x"}]})
    assert res.get("failed") and "kind" in res["msg"], res


def test_names_and_selectors_reach_the_api_as_with_k8s_info(cluster, ansible_task):
    """No check of its own: a role checks its inputs first and names its variable (gpu_machineset's bad namespace).
    The API finds nothing for a malformed namespace or selector, and k8s_info returns that as an empty list."""
    reads = [
        {"key": "bad_namespace", "kind": "Pod", "namespace": "Bad_NS"},
        {"key": "bad_selector", "kind": "Pod", "label_selectors": ["app in ("]},
    ]
    res = ansible_task("gpuops.cluster.k8s_read", {"reads": reads})
    assert not res.get("failed") and res["found"] == {"bad_namespace": [], "bad_selector": []}, res
    for read in reads:
        info = ansible_task("kubernetes.core.k8s_info", {k: v for k, v in read.items() if k != "key"})
        assert not info.get("failed") and info["resources"] == [], info
