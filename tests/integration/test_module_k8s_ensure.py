# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure on the real control plane: writes counted in the apiserver audit log."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import uuid

import pytest
from kubernetes import client
from kubernetes.dynamic import DynamicClient

pytestmark = pytest.mark.integration

MODULE = "gpuops.cluster.k8s_ensure"


def daemonset(ns, name):
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    # Forms the server rewrites (0.5 -> 500m) or omits (false): a re-run must still send nothing.
                    "hostNetwork": False,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "containers": [
                        {
                            "name": "c",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": 0.5, "memory": "64Mi"}, "limits": {"cpu": "1"}},
                        }
                    ],
                },
            },
        },
    }


def manifests(ns):
    """20 objects of 6 kinds, one of them CRD-backed (ServiceMonitor), two DaemonSets."""
    objs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}]
    objs += [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm-%d" % i, "namespace": ns},
            "data": {"i": str(i)},
        }
        for i in range(6)
    ]
    objs += [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa-%d" % i}} for i in range(5)]
    objs += [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc-%d" % i, "namespace": ns, "labels": {"app": "svc-%d" % i}},
            "spec": {"selector": {"app": "x"}, "ports": [{"name": "metrics", "port": 9400 + i, "targetPort": 9400}]},
        }
        for i in range(4)
    ]
    objs += [daemonset(ns, "ds-0"), daemonset(ns, "ds-1")]
    objs += [
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": {"name": "sm-%d" % i, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": "svc-%d" % i}}, "endpoints": [{"port": "metrics"}]},
        }
        for i in range(2)
    ]
    assert len(objs) == 20 and len(set(o["kind"] for o in objs)) == 6
    return objs


def args(ns, objs, **extra):
    # One owner per test: prune works cluster-wide on the owner label.
    out = {"definitions": objs, "namespace": ns, "owner": "test-" + ns}
    out.update(extra)
    return out


def dyn(cluster):
    return DynamicClient(cluster.api)


def get(cluster, api_version, kind, name, ns=None):
    res = dyn(cluster).resources.get(api_version=api_version, kind=kind)
    try:
        return res.get(name=name, namespace=ns).to_dict()
    except Exception as exc:
        if getattr(exc, "status", None) == 404:
            return None
        raise


@pytest.fixture
def ns():
    return "ens-" + uuid.uuid4().hex[:6]


def test_converge_is_exact_and_a_rerun_writes_nothing(cluster, ansible_task, ns):
    objs = manifests(ns)
    # --check on a fresh cluster: everything would be created, nothing is sent.
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args(ns, objs), check=True, diff=True)
    assert result["changed"] is True and not result.get("failed"), result
    assert [o["action"] for o in result["objects"]] == ["created"] * 20
    assert len(result["diff"]) == 20
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    assert get(cluster, "v1", "Namespace", ns) is None

    # First run creates all 20, labelled as ours.
    result = ansible_task(MODULE, args(ns, objs))
    assert result["changed"] is True and not result.get("failed"), result.get("msg")
    for obj in objs:
        found = get(
            cluster, obj["apiVersion"], obj["kind"], obj["metadata"]["name"], None if obj["kind"] == "Namespace" else ns
        )
        assert found, obj
        assert found["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuops.cluster"
        assert found["metadata"]["labels"]["gpuops.cluster/owner"] == "test-" + ns

    # Second run: unchanged, and not one mutating request (dry runs included).
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args(ns, objs), diff=True)
    assert result["changed"] is False, result
    assert set(o["action"] for o in result["objects"]) == {"unchanged"}
    assert result["diff"] == []
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []

    # A changed field: --check --diff shows it and sends nothing; the run updates in place.
    changed = copy.deepcopy(objs)
    changed[3]["data"] = {"i": "changed"}
    uid = get(cluster, "v1", "ConfigMap", "cm-2", ns)["metadata"]["uid"]
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args(ns, changed), check=True, diff=True)
    assert result["changed"] is True
    assert len(result["diff"]) == 1 and result["diff"][0]["after"]["data"] == {"i": "changed"}
    assert result["diff"][0]["before"]["data"] == {"i": "2"}
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args(ns, changed))
    assert [o["name"] for o in result["objects"] if o["action"] == "updated"] == ["cm-2"]
    writes = cluster.audit.writes_since(mark)
    assert [(w["verb"], w["name"]) for w in writes] == [("patch", "cm-2")], writes
    now = get(cluster, "v1", "ConfigMap", "cm-2", ns)
    assert now["metadata"]["uid"] == uid and now["data"] == {"i": "changed"}
    assert not ansible_task(MODULE, args(ns, changed, state="absent")).get("failed")


def test_prune_removes_exactly_the_stale_objects_and_absent_leaves_nothing(cluster, ansible_task, ns):
    objs = manifests(ns)
    assert not ansible_task(MODULE, args(ns, objs)).get("failed")
    core = client.CoreV1Api(cluster.api)
    # Neighbours that prune must never touch: another owner's, and one not managed by us.
    other = {"app.kubernetes.io/managed-by": "gpuops.cluster", "gpuops.cluster/owner": "someone-else"}
    core.create_namespaced_config_map(ns, {"metadata": {"name": "other-owner", "labels": other}})
    core.create_namespaced_config_map(
        ns, {"metadata": {"name": "hand-made", "labels": {"gpuops.cluster/owner": "test-" + ns}}}
    )

    kept = [o for o in objs if o["metadata"]["name"] not in ("cm-4", "cm-5", "ds-1")]
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args(ns, kept, prune=True, wait=True, wait_timeout=120), diff=True)
    assert result["changed"] is True and not result.get("failed"), result.get("msg")
    assert sorted(p["name"] for p in result["pruned"]) == ["cm-4", "cm-5", "ds-1"]
    deletes = sorted(w["name"] for w in cluster.audit.writes_since(mark) if w["verb"] == "delete")
    assert deletes == ["cm-4", "cm-5", "ds-1"]
    for name in ("cm-4", "cm-5"):
        assert get(cluster, "v1", "ConfigMap", name, ns) is None
    assert get(cluster, "apps/v1", "DaemonSet", "ds-1", ns) is None
    assert get(cluster, "v1", "ConfigMap", "other-owner", ns) and get(cluster, "v1", "ConfigMap", "hand-made", ns)
    assert any("DaemonSet {0}/ds-0".format(ns) in line for line in result["progress"]), result["progress"]

    # state: absent deletes everything listed (reverse order) and waits; a second absent changes nothing.
    result = ansible_task(MODULE, args(ns, kept, state="absent", wait_timeout=120))
    assert result["changed"] is True and not result.get("failed"), result.get("msg")
    assert set(o["action"] for o in result["objects"]) == {"deleted"}
    for obj in kept:
        scope = None if obj["kind"] == "Namespace" else ns
        assert get(cluster, obj["apiVersion"], obj["kind"], obj["metadata"]["name"], scope) is None, obj
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args(ns, kept, state="absent"))
    assert result["changed"] is False and set(o["action"] for o in result["objects"]) == {"absent"}
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def cm(ns, name, **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


BAD = {
    "unknown_kind": (
        lambda ns: [cm(ns, "a"), {"apiVersion": "gpu.example.com/v1", "kind": "GpuWidget", "metadata": {"name": "w"}}],
        "GpuWidget",
        "CustomResourceDefinition",
    ),
    "not_a_manifest": (lambda ns: [cm(ns, "a"), "just text"], "item 1", "not a manifest"),
    "missing_kind": (lambda ns: [{"apiVersion": "v1", "metadata": {"name": "x"}}], "item 0", "kind"),
    "missing_name": (
        lambda ns: [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}],
        "metadata.name",
        "definitions",
    ),
    "invalid_name": (lambda ns: [cm(ns, "Bad_Name")], "Bad_Name", "lowercase"),
    "missing_namespace": (lambda ns: [cm("no-such-namespace-x", "a")], "no-such-namespace-x", "does not exist"),
    "duplicate": (lambda ns: [cm(ns, "a"), cm(ns, "a", x="1")], "also item 0", "once"),
    "invalid_field_422": (
        lambda ns: [
            cm(ns, "valid-one"),
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "bad-port", "namespace": ns},
                "spec": {"ports": [{"port": 99999}]},
            },
        ],
        "Service {0}/bad-port",
        "refused it (422)",
    ),
    "invalid_label": (
        lambda ns: [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "a", "namespace": ns, "labels": {"bad key!": "x"}},
            }
        ],
        "bad key!",
        "definitions",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_refused_with_nothing_written(cluster, ansible_task, namespace, case):
    build, first, second = BAD[case]
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"definitions": build(namespace), "namespace": namespace})
    assert result.get("failed") is True, result
    msg = result["msg"]
    assert first.format(namespace) in msg and second in msg, msg
    assert cluster.audit.writes_since(mark) == []
    assert get(cluster, "v1", "ConfigMap", "valid-one", namespace) is None


def test_namespaced_object_without_namespace_names_the_option(cluster, ansible_task):
    mark = cluster.audit.mark()
    result = ansible_task(
        MODULE, {"definitions": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}]}
    )
    assert result.get("failed") is True and result["msg"].startswith("namespace:"), result["msg"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_prune_without_owner_is_refused_by_the_spec(cluster, ansible_task, namespace):
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, {"definitions": [cm(namespace, "a")], "prune": True})
    assert result.get("failed") is True and "owner" in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_no_permission(cluster, ansible_task, namespace):
    mark = cluster.audit.mark()
    result = ansible_task(
        MODULE, {"definitions": [cm(namespace, "a")]}, env={"K8S_AUTH_KUBECONFIG": cluster.kubeconfig_of("nobody")}
    )
    assert result.get("failed") is True and "403" in result["msg"], result["msg"]
    assert cluster.audit.writes_since(mark, user="nobody", include_dry_run=True) == []


def test_unreachable_api(cluster, ansible_task, namespace):
    env = {
        "K8S_AUTH_KUBECONFIG": None,
        "K8S_AUTH_HOST": "https://127.0.0.1:1",
        "K8S_AUTH_API_KEY": "x",
        "K8S_AUTH_VERIFY_SSL": "false",
    }
    result = ansible_task(MODULE, {"definitions": [cm(namespace, "a")]}, env=env)
    assert result.get("failed") is True
    assert result["msg"].startswith("host:") and "cannot reach" in result["msg"], result["msg"]


def unschedulable(ns, name):
    """A Deployment whose pod no node takes: never ready."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "nodeSelector": {"gpuops.test/no-such-node": "x"},
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                },
            },
        },
    }


def test_wait_timeout_names_what_is_not_ready(cluster, ansible_task, namespace):
    never = daemonset(namespace, "never-ready")
    # No node carries this label: desiredNumberScheduled stays 0, so use a Deployment that cannot schedule.
    deploy = unschedulable(namespace, "unschedulable")
    result = ansible_task(MODULE, {"definitions": [never, deploy], "wait": True, "wait_timeout": 6, "wait_sleep": 1})
    assert result.get("failed") is True, result
    assert (
        result["msg"].startswith("wait_timeout:") and "Deployment {0}/unschedulable".format(namespace) in result["msg"]
    )
    assert any("unschedulable: 0/1 ready" in line for line in result.get("progress", [])), result.get("progress")


def test_operand_pods_reports_each_node_after_the_wait_in_the_same_run(cluster, ansible_task, namespace):
    core = client.CoreV1Api(cluster.api)
    workers = core.list_node(label_selector="node-role.kubernetes.io/worker").items
    on, off = sorted(n.metadata.name for n in workers)[:2]
    ds = daemonset(namespace, "operand")
    ds["spec"]["template"]["spec"].update(
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [on]}]}]
                }
            }
        },
        tolerations=[{"operator": "Exists"}],
    )
    pods = {"namespace": namespace, "selector": "app=operand", "node_names": [on, off]}
    task = {"definitions": [ds], "wait": True, "wait_timeout": 90, "wait_sleep": 1, "operand_pods": pods}

    res = ansible_task(MODULE, task)
    assert not res.get("failed") and res["changed"] and res["ready"], res
    report = res["operand_pods"]
    assert [(n["node"], n["ready"], n["state"]) for n in report["nodes"]] == [
        (on, True, "Running, ready"),
        (off, False, "no pod"),
    ], report
    assert [n["node"] for n in report["not_ready"]] == [off] and report["pods"] == 1
    assert "ready on 1 of 2 node(s); not on " + off in report["summary"]

    # A re-run writes nothing and still reports; check mode writes nothing and has nothing to report on.
    mark = cluster.audit.mark()
    res = ansible_task(MODULE, task)
    assert res["changed"] is False and res["operand_pods"]["nodes"][0]["ready"], res
    res = ansible_task(MODULE, task, check=True)
    assert not res.get("failed") and "operand_pods" not in res, res
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []

    # A bad option is named as a suboption, before anything is written.
    for bad, param in (
        ({"selector": "app in ("}, "operand_pods.selector"),
        ({"namespace": "Not_A_Namespace"}, "operand_pods.namespace"),
        ({"log_lines": -1}, "operand_pods.log_lines"),
        ({"service": "Bad_Service"}, "operand_pods.service"),
    ):
        mark = cluster.audit.mark()
        res = ansible_task(
            MODULE, dict(task, definitions=[daemonset(namespace, "never-written")], operand_pods=dict(pods, **bad))
        )
        assert res.get("failed") and res["msg"].startswith(param + ":"), res
        assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_followers_run_in_the_same_module_run_after_a_ready_wait(cluster, ansible_task, namespace):
    """nfd_labels (and gpu_validate, the roles' tests) as k8s_ensure followers: run after a ready wait, with their own
    module's result; not after a timeout, not in check mode; their options checked before anything is written."""
    core = client.CoreV1Api(cluster.api)
    node = sorted(n.metadata.name for n in core.list_node(label_selector="node-role.kubernetes.io/worker").items)[0]
    ds = daemonset(namespace, "followed")
    ds["spec"]["template"]["spec"]["tolerations"] = [{"operator": "Exists"}]
    labels = {"node_names": [node]}
    task = {"definitions": [ds], "wait": True, "wait_timeout": 90, "wait_sleep": 1, "nfd_labels": labels}

    res = ansible_task(MODULE, task)
    assert not res.get("failed") and res["changed"] and res["ready"], res
    assert [n["name"] for n in res["nfd_labels"]["nodes"]] == [node], res["nfd_labels"]
    assert res["nfd_labels"]["changed_nodes"] == [], res["nfd_labels"]

    # A re-run writes nothing and still follows; check mode does not follow.
    mark = cluster.audit.mark()
    res = ansible_task(MODULE, task)
    assert res["changed"] is False and [n["name"] for n in res["nfd_labels"]["nodes"]] == [node], res
    res = ansible_task(MODULE, task, check=True)
    assert not res.get("failed") and "nfd_labels" not in res, res
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []

    # The follower's own wait running out is its result (as its task would register it), not a failure of the writes.
    res = ansible_task(
        MODULE, dict(task, nfd_labels=dict(labels, wait_for={"gfd_nodes": 1}, wait_timeout=2, wait_sleep=1))
    )
    assert not res.get("failed") and res["nfd_labels"]["failed"] is True, res
    assert res["nfd_labels"]["param"] == "wait_timeout" and "nodes" not in res["nfd_labels"], res["nfd_labels"]

    # After a wait that timed out (fail_on_timeout false), no follower runs: the caller explains the timeout.
    never = unschedulable(namespace, "never-followed")
    res = ansible_task(MODULE, dict(task, definitions=[never], wait_timeout=4, fail_on_timeout=False))
    assert not res.get("failed") and res["ready"] is False and "nfd_labels" not in res, res

    # A bad follower option is named (<follower>.<option>) before anything is written.
    for follower, bad, param in (
        ("nfd_labels", {"wait_for": {"gpu_nodes": -1}}, "nfd_labels.wait_for.gpu_nodes"),
        ("nfd_labels", {"kubeconfig": "/nowhere"}, "nfd_labels"),
        ("nfd_labels", {"node_names": ["Not_A_Node"]}, "nfd_labels.node_names"),
        ("gpu_validate", {"checks": ["no-such-check"]}, "gpu_validate"),
    ):
        mark = cluster.audit.mark()
        res = ansible_task(MODULE, dict(task, definitions=[daemonset(namespace, "never-written")], **{follower: bad}))
        assert res.get("failed") and res["msg"].startswith(param + ":"), (follower, bad, res)
        assert cluster.audit.writes_since(mark, include_dry_run=True) == []


def test_taints_and_dry_runs_follow_the_objects(cluster, ansible_task, namespace):
    """node_taints and k8s_dry_run as followers (the scheduling state's): the taint after the objects' ready wait,
    the dry runs last, answered by admission with the quota just made; a re-run writes nothing; check mode neither
    taints nor asks; a bad option is named before anything is written."""
    core = client.CoreV1Api(cluster.api)
    node = sorted(n.metadata.name for n in core.list_node(label_selector="node-role.kubernetes.io/worker").items)[0]
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "followed", "namespace": namespace},
        "spec": {"hard": {"requests.nvidia.com/gpu": "1"}},
    }

    def probe(gpus):
        container = {
            "name": "p",
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"limits": {"nvidia.com/gpu": gpus}},
        }
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "probe-", "namespace": namespace},
            "spec": {"containers": [container]},
        }

    taint = {"key": "gpuops.test/followed-" + namespace[-8:], "value": "", "effect": "NoSchedule"}
    text = taint["key"] + "=:NoSchedule"
    task = {
        "definitions": [quota],
        "wait": True,
        "wait_timeout": 90,
        "wait_sleep": 1,
        "node_taints": {"taints": [taint], "node_names": [node]},
        "k8s_dry_run": {"definitions": [probe(1), probe(2)]},
    }
    try:
        res = ansible_task(MODULE, task)
        assert not res.get("failed") and res["changed"] and res["ready"], res
        assert res["node_taints"]["changed_nodes"] == [node], res["node_taints"]
        assert text in [t.key + "=" + (t.value or "") + ":" + t.effect for t in core.read_node(node).spec.taints or []]
        answers = res["k8s_dry_run"]["results"]
        assert [a["allowed"] for a in answers] == [True, False], answers
        assert answers[1]["status"] == 403 and "exceeded quota" in answers[1]["message"], answers[1]

        # A re-run: nothing written (the dry runs persist nothing), the taint reported as it is.
        mark = cluster.audit.mark()
        res = ansible_task(MODULE, task)
        assert res["changed"] is False and res["node_taints"]["changed_nodes"] == [], res
        assert [n["action"] for n in res["node_taints"]["nodes"]] == ["unchanged"], res["node_taints"]
        assert [a["allowed"] for a in res["k8s_dry_run"]["results"]] == [True, False], res["k8s_dry_run"]
        assert cluster.audit.writes_since(mark) == []
        res = ansible_task(MODULE, task, check=True)
        assert not res.get("failed") and "node_taints" not in res and "k8s_dry_run" not in res, res

        # A bad follower option is named (<follower>.<option>) before anything is written.
        for follower, bad, param in (
            ("node_taints", {"taints": [dict(taint, effect="Sometimes")], "node_names": [node]}, "node_taints"),
            ("node_taints", {"taints": [taint]}, "node_taints.node_names"),
            ("k8s_dry_run", {"definitions": [{"kind": "Pod", "metadata": {"name": "p"}}]}, "k8s_dry_run.definitions"),
        ):
            mark = cluster.audit.mark()
            never = dict(quota, metadata={"name": "never-written", "namespace": namespace})
            res = ansible_task(MODULE, dict(task, definitions=[never], **{follower: bad}))
            assert res.get("failed") and res["msg"].startswith(param + ":"), (follower, bad, res)
            assert cluster.audit.writes_since(mark, include_dry_run=True) == []
    finally:
        ansible_task("gpuops.cluster.node_taints", {"state": "absent", "taints": [taint]})
    assert text not in [t.key + "=" + (t.value or "") + ":" + t.effect for t in core.read_node(node).spec.taints or []]
