# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpuops.cluster.nfd_labels against the local control plane (openshift profile).

Worker nodes come from the seeded worker MachineSets (simulated machine-api);
NFD labels appear once a NodeFeatureDiscovery CR exists (simulated operator and
nfd-worker). Every write is counted from the kube-apiserver audit log.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


import pytest
from waiting import wait_until

MODULE = "gpuops.cluster.nfd_labels"
GPU_LABEL = "feature.node.kubernetes.io/pci-10de.present"
WORKERS = "node-role.kubernetes.io/worker"
ON_WORKERS = {WORKERS: ""}  # node_selector: the role label OpenShift sets to ""
TEST_PREFIX = "gpuops-test.io/"
GROUP, VERSION = "machine.openshift.io", "v1beta1"


def core(cluster):
    from kubernetes import client

    return client.CoreV1Api(cluster.api)


def nodes(cluster, selector=None):
    kw = {"label_selector": selector} if selector else {}
    return core(cluster).list_node(**kw).items


def labels(cluster, name):
    return core(cluster).read_node(name).metadata.labels or {}


@pytest.fixture(scope="module")
def workers(cluster):
    """Names of the worker nodes machine-api created from the seeded MachineSets."""

    def three():
        found = nodes(cluster, WORKERS)
        return found if len(found) >= 3 else None

    found = wait_until(three, 120, what="3 worker nodes")
    return sorted(n.metadata.name for n in found)


@pytest.fixture(autouse=True)
def clean_labels(cluster):
    yield
    for node in nodes(cluster):
        stale = dict((k, None) for k in (node.metadata.labels or {}) if k.startswith(TEST_PREFIX))
        if stale:
            core(cluster).patch_node(node.metadata.name, {"metadata": {"labels": stale}})


# --------------------------------------------------------------------------- reading


def test_read_facts_without_nfd(cluster, ansible_task, workers):
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"node_selector": ON_WORKERS})
    assert not result.get("failed"), result
    assert result["changed"] is False
    assert sorted(n["name"] for n in result["nodes"]) == workers
    assert result["summary"]["nodes"] == len(workers)
    assert all(n["ready"] for n in result["nodes"])
    if cluster.profile == "openshift":  # machine-api nodes carry instance type and zone labels
        assert all(n["instance_type"] and n["zone"] for n in result["nodes"])
    assert result["ansible_facts"]["gpuops_nfd"]["summary"] == result["summary"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_gpu_node_labelled_by_nfd_is_found(cluster, ansible_task, workers, namespace):
    """End to end: a GPU MachineSet, the NodeFeatureDiscovery CR, then wait_for the NFD label."""
    from kubernetes import client

    seeded = client.CustomObjectsApi(cluster.api).list_namespaced_custom_object(
        GROUP, VERSION, "openshift-machine-api", "machinesets"
    )["items"]
    source = sorted(
        m["metadata"]["name"]
        for m in seeded
        if m["spec"]["template"]["metadata"]["labels"].get("machine.openshift.io/cluster-api-machine-role") == "worker"
    )[0]
    ms = ansible_task(
        "gpuops.cluster.machineset_clone",
        {
            "source": source,
            "instance_type": "g4dn.xlarge",
            "name": "nfd-test-gpu",
            "wait": True,
            "wait_sleep": 1,
            "wait_timeout": 180,
        },
    )
    assert not ms.get("failed"), ms
    try:
        client.CustomObjectsApi(cluster.api).create_namespaced_custom_object(
            "nfd.openshift.io",
            "v1",
            namespace,
            "nodefeaturediscoveries",
            {
                "apiVersion": "nfd.openshift.io/v1",
                "kind": "NodeFeatureDiscovery",
                "metadata": {"name": "nfd-instance", "namespace": namespace},
                "spec": {},
            },
        )
        mark = cluster.audit.mark()
        result = ansible_task(MODULE, {"wait_for": {"gpu_nodes": 1}, "wait_timeout": 180, "wait_sleep": 2})
        assert not result.get("failed"), result
        assert cluster.audit.writes_since(mark, include_dry_run=True) == []
        assert len(result["gpu_nodes"]) == 1
        gpu = [n for n in result["nodes"] if n["gpu"]][0]
        assert gpu["instance_type"] == "g4dn.xlarge"
        node_labels = labels(cluster, gpu["name"])
        assert gpu["kernel_version"] == node_labels["feature.node.kubernetes.io/kernel-version.full"]
        assert result["kernel_versions"] == {gpu["kernel_version"]: [gpu["name"]]}
        assert gpu["os_release"]["ID"] == node_labels["feature.node.kubernetes.io/system-os_release.ID"]
        assert result["progress"], result
        # workers have NFD labels too, but no NVIDIA PCI device
        assert not any(n["gpu"] for n in result["nodes"] if n["name"] in workers)
    finally:
        ansible_task(
            "gpuops.cluster.machineset_clone",
            {"state": "absent", "name": "nfd-test-gpu", "wait": True, "wait_sleep": 1, "wait_timeout": 120},
        )


def test_wait_for_times_out_with_progress(cluster, ansible_task, workers):
    mark = cluster.audit.mark()
    result = ansible_task(
        MODULE, {"label_selectors": [WORKERS], "wait_for": {"gpu_nodes": 50}, "wait_timeout": 3, "wait_sleep": 1}
    )
    assert result.get("failed") is True
    assert result["msg"].startswith("wait_timeout:") and "/50 nodes labelled" in result["msg"], result["msg"]
    assert result["progress"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def node_lists(cluster, mark):
    """The label selectors of the Node list requests our user sent since ``mark`` (None: unfiltered)."""
    from urllib.parse import parse_qs, urlparse

    out = []
    for ev in cluster.audit.events_since(mark):
        ref = ev.get("objectRef") or {}
        if ev.get("verb") == "list" and ref.get("resource") == "nodes" and ev["user"]["username"] == cluster.audit.user:
            out.append((parse_qs(urlparse(ev["requestURI"]).query).get("labelSelector") or [None])[0])
    return out


def test_gpu_nodes_only_reads_each_nfd_form_server_side(cluster, ansible_task, workers):
    """Each worker carries one NFD form of the NVIDIA label (the last one two forms); a control-plane
    node carries it set to false."""
    nfd = "feature.node.kubernetes.io/"
    forms = ["pci-10de.present", "pci-0302_10de.present", "pci-0300_10de.present"]
    other = sorted(n.metadata.name for n in nodes(cluster, "node-role.kubernetes.io/master"))[0]
    marks = {workers[0]: {nfd + forms[0]: "true"}, workers[1]: {nfd + forms[1]: "true"}}
    marks[workers[2]] = {nfd + forms[2]: "true", nfd + forms[0]: "true"}  # found twice, returned once
    marks[other] = {nfd + forms[0]: "false"}
    mine = {TEST_PREFIX + "gpu-only": "yes"}
    gpus = sorted(workers[:3])
    try:
        for name, extra in marks.items():
            core(cluster).patch_node(name, {"metadata": {"labels": dict(mine, **extra)}})
        mark = cluster.audit.mark()
        result = ansible_task(MODULE, {"node_selector": mine, "gpu_nodes_only": True})
        assert not result.get("failed"), result
        assert [n["name"] for n in result["nodes"]] == gpus and result["gpu_nodes"] == gpus
        assert all(n["gpu"] for n in result["nodes"]) and result["summary"]["nodes"] == len(gpus)
        # one list per form, each filtered by the server; no list of every node
        sent = node_lists(cluster, mark)
        assert sorted(sent) == sorted("{0}gpu-only=yes,{1}{2}=true".format(TEST_PREFIX, nfd, f) for f in forms), sent
        assert cluster.audit.writes_since(mark, include_dry_run=True) == []

        # the same GPU nodes as the full read finds
        full = ansible_task(MODULE, {"node_selector": mine})
        assert full["gpu_nodes"] == gpus and len(full["nodes"]) == len(marks), full

        # a wait counts among the GPU nodes
        ok = ansible_task(MODULE, {"node_selector": mine, "gpu_nodes_only": True, "wait_for": {"gpu_nodes": 3}})
        assert not ok.get("failed") and ok["gpu_nodes"] == gpus, ok
        late = ansible_task(
            MODULE,
            {
                "node_selector": mine,
                "gpu_nodes_only": True,
                "wait_for": {"gpu_nodes": 4},
                "wait_timeout": 2,
                "wait_sleep": 1,
            },
        )
        assert late.get("failed") and late["msg"].startswith("wait_timeout:") and "3/4" in late["msg"], late

        # the GPU nodes are the selection to label; a name that is no GPU node is refused, naming it
        mark = cluster.audit.mark()
        pool = TEST_PREFIX + "pool"
        labelled = ansible_task(MODULE, {"gpu_nodes_only": True, "node_selector": mine, "labels": {pool: "gpu"}})
        assert labelled["changed"] is True and labelled["changed_nodes"] == gpus, labelled
        assert sorted(w["name"] for w in cluster.audit.writes_since(mark)) == gpus
        assert pool not in labels(cluster, other)
        bad = ansible_task(MODULE, {"gpu_nodes_only": True, "node_names": [other]})
        assert bad.get("failed") and bad["msg"].startswith("node_names:"), bad
        assert other in bad["msg"] and "among the GPU nodes" in bad["msg"], bad["msg"]
    finally:
        for name, extra in marks.items():
            core(cluster).patch_node(name, {"metadata": {"labels": dict((k, None) for k in extra)}})


# --------------------------------------------------------------------------- labelling


def test_label_check_first_second_diff_absent(cluster, ansible_task, workers):
    key = TEST_PREFIX + "pool"
    args = {"node_selector": ON_WORKERS, "labels": {key: "training", TEST_PREFIX + "flag": True}}

    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args, check=True, diff=True)
    assert not result.get("failed"), result
    assert result["changed"] is True and result["changed_nodes"] == workers
    after = dict((d["after_header"], d["after"]["metadata"]["labels"]) for d in result["diff"])
    assert after["Node " + workers[0]] == {TEST_PREFIX + "flag": "true", key: "training"}
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert key not in labels(cluster, workers[0])

    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args)
    assert not result.get("failed"), result
    assert result["changed"] is True and result["changed_nodes"] == workers
    writes = cluster.audit.writes_since(mark)
    assert sorted((w["verb"], w["resource"], w["name"]) for w in writes) == [("patch", "nodes", n) for n in workers]
    for name in workers:
        assert labels(cluster, name)[key] == "training" and labels(cluster, name)[TEST_PREFIX + "flag"] == "true"
    masters = nodes(cluster, "node-role.kubernetes.io/master")
    assert masters, "the openshift profile seeds master nodes"
    assert all(key not in (m.metadata.labels or {}) for m in masters)

    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args)
    assert result["changed"] is False and result["changed_nodes"] == []
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []

    # one node out of line: only that one is patched, the diff shows it
    core(cluster).patch_node(workers[1], {"metadata": {"labels": {key: "inference"}}})
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args, diff=True)
    assert result["changed_nodes"] == [workers[1]]
    assert [(d["before_header"], d["before"]["metadata"]["labels"]) for d in result["diff"]] == [
        ("Node " + workers[1], {key: "inference"})
    ]
    assert [(d["after_header"], d["after"]["metadata"]["labels"]) for d in result["diff"]] == [
        ("Node " + workers[1], {key: "training"})
    ]
    assert [(w["verb"], w["name"]) for w in cluster.audit.writes_since(mark)] == [("patch", workers[1])]

    # removal by name, then nothing left to remove
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"node_names": workers[:2], "state": "absent", "labels": {key: None}})
    assert result["changed_nodes"] == workers[:2]
    assert key not in labels(cluster, workers[0]) and labels(cluster, workers[2])[key] == "training"
    assert len(cluster.audit.writes_since(mark)) == 2
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"node_names": workers[:2], "state": "absent", "labels": {key: None}})
    assert result["changed"] is False and cluster.audit.writes_since(mark, include_dry_run=True) == []


# --------------------------------------------------------------------------- bad inputs


BAD_INPUTS = [
    (
        "selector_matches_nothing",
        {"node_selector": TEST_PREFIX + "nothing=here", "labels": {TEST_PREFIX + "a": "b"}},
        "node_selector",
        "matches no Node",
    ),
    (
        "unknown_node_name",
        {"node_names": ["{w0}", "ghost-node"], "labels": {TEST_PREFIX + "a": "b"}},
        "node_names",
        "ghost-node",
    ),
    ("bad_key", {"node_selector": ON_WORKERS, "labels": {"Gpuops.IO/x": "1"}}, "labels", "Gpuops.IO/x"),
    ("key_name_too_long", {"node_selector": ON_WORKERS, "labels": {TEST_PREFIX + "k" * 64: "1"}}, "labels", "63"),
    ("bad_value", {"node_selector": ON_WORKERS, "labels": {TEST_PREFIX + "a": "not valid!"}}, "labels", "not valid!"),
    ("no_selection", {"labels": {TEST_PREFIX + "a": "b"}}, "node_selector", "explicit set of nodes"),
    ("timeout_too_small", {"wait_for": {"gpu_nodes": 1}, "wait_timeout": 0}, "wait_timeout", "too small"),
    (
        "selector_syntax",
        {"label_selectors": ["gpu in (a"], "labels": {TEST_PREFIX + "a": "b"}},
        "label_selectors",
        "rejected the selector",
    ),
    (
        "absent_with_empty_labels",
        {"node_selector": ON_WORKERS, "state": "absent", "labels": {}},
        "labels",
        "list the label keys",
    ),
]


@pytest.mark.parametrize("case,args,param,fragment", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_fails_clearly_and_writes_nothing(cluster, ansible_task, workers, case, args, param, fragment):
    args = dict((k, [v.format(w0=workers[0]) for v in val] if k == "node_names" else val) for k, val in args.items())
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args)
    assert result.get("failed") is True, result
    assert result["msg"].startswith(param + ":"), result["msg"]
    assert fragment in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    if case == "unknown_node_name":
        assert workers[1] in result["msg"]  # the error lists existing nodes


def test_absent_without_labels_is_refused_by_the_argument_spec(cluster, ansible_task, workers):
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"node_selector": ON_WORKERS, "state": "absent"})
    assert result.get("failed") is True
    assert "state is absent but all of the following are missing: labels" in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_old_string_node_selector_and_label_selectors(cluster, ansible_task, workers):
    """node_selector was a kubectl string: equality selectors still work; the rest goes in label_selectors."""
    key = TEST_PREFIX + "legacy"
    result = ansible_task(MODULE, {"node_selector": WORKERS + "=", "labels": {key: "x"}}, check=True)
    assert not result.get("failed"), result
    assert result["changed_nodes"] == workers
    core(cluster).patch_node(workers[0], {"metadata": {"labels": {key: "x"}}})
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"label_selectors": [WORKERS, "!" + key], "labels": {key: "y"}})
    assert not result.get("failed"), result
    assert result["changed_nodes"] == workers[1:]
    assert sorted(w["name"] for w in cluster.audit.writes_since(mark)) == workers[1:]
    assert labels(cluster, workers[0])[key] == "x"


def test_unreachable_api(cluster, ansible_task):
    env = {
        "K8S_AUTH_KUBECONFIG": None,
        "K8S_AUTH_HOST": "https://127.0.0.1:1",
        "K8S_AUTH_API_KEY": "x",
        "K8S_AUTH_VERIFY_SSL": "false",
    }
    result = ansible_task(MODULE, {"node_selector": ON_WORKERS, "labels": {TEST_PREFIX + "a": "b"}}, env=env)
    assert result.get("failed") is True
    assert result["msg"].startswith("host:") and "cannot reach" in result["msg"], result["msg"]


def test_wrong_token(cluster, ansible_task, workers):
    env = {
        "K8S_AUTH_KUBECONFIG": None,
        "K8S_AUTH_HOST": cluster.server,
        "K8S_AUTH_API_KEY": "not-a-valid-token",
        "K8S_AUTH_SSL_CA_CERT": cluster.ca_cert,
    }
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"node_selector": ON_WORKERS, "labels": {TEST_PREFIX + "a": "b"}}, env=env)
    assert result.get("failed") is True
    assert result["msg"].startswith("api_key:") and "401" in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert TEST_PREFIX + "a" not in labels(cluster, workers[0])


def test_no_permission(cluster, ansible_task, workers):
    env = {"K8S_AUTH_KUBECONFIG": cluster.kubeconfig_of("nobody")}
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"node_selector": ON_WORKERS, "labels": {TEST_PREFIX + "a": "b"}}, env=env)
    assert result.get("failed") is True
    assert "403" in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, user="nobody", include_dry_run=True) == []
    assert TEST_PREFIX + "a" not in labels(cluster, workers[0])
