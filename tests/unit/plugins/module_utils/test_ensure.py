# -*- coding: utf-8 -*-
"""k8s_ensure's pure parts: manifest checks, normalisation, compare, diff."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import compare, manifests
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import object_contains


def cm(name, ns="gpu", **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


def test_lists_are_flattened_and_labels_added():
    items = manifests.build_items(
        [{"apiVersion": "v1", "kind": "List", "items": [cm("a"), cm("b")]}, cm("c")], owner="driver"
    )
    assert [i.name for i in items] == ["a", "b", "c"]
    labels = items[0].body["metadata"]["labels"]
    assert labels == {"app.kubernetes.io/managed-by": "gpuops.cluster", "gpuops.cluster/owner": "driver"}


def test_label_values_become_strings_and_nulls_vanish():
    body = cm("a")
    body["metadata"]["labels"] = {"gpu": True, "count": 2}
    body["spec"] = {"x": None}
    item = manifests.build_items([body])[0]
    assert item.body["metadata"]["labels"]["gpu"] == "true" and item.body["metadata"]["labels"]["count"] == "2"
    assert item.body["spec"] == {}


def test_secret_string_data_is_stored_as_data():
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "n"},
        "stringData": {"pem": "abc"},
    }
    item = manifests.build_items([secret])[0]
    assert item.body["data"] == {"pem": "YWJj"} and "stringData" not in item.body


@pytest.mark.parametrize(
    "definitions, fragment",
    [
        (["text"], "not a manifest"),
        ([{"kind": "ConfigMap", "metadata": {"name": "a"}}], "no apiVersion"),
        ([{"apiVersion": "v1", "metadata": {"name": "a"}}], "no kind"),
        ([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "a-"}}], "metadata.name"),
        ([cm("Upper")], "not a valid object name"),
        ([cm("a"), cm("a")], "also item 0"),
        ([cm("a", ns="Bad_NS")], "metadata.namespace"),
    ],
)
def test_bad_manifests_name_the_item(definitions, fragment):
    with pytest.raises(GpuopsError) as err:
        manifests.build_items(definitions)
    assert err.value.param == "definitions" and fragment in str(err.value)


def test_rbac_names_may_hold_colons():
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "gpuops:reader"}}
    assert manifests.build_items([role])[0].name == "gpuops:reader"


def test_foundation_first_keeps_given_order_otherwise():
    objs = [cm("a"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu"}}, cm("b")]
    items = manifests.foundation_first(manifests.build_items(objs))
    assert [i.name for i in items] == ["gpu", "a", "b"]


def test_crd_kinds_from_the_list():
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.gpu.example.com"},
        "spec": {
            "group": "gpu.example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget"},
            "versions": [{"name": "v1"}, {"name": "v2"}],
        },
    }
    assert manifests.crd_kinds(manifests.build_items([crd])) == {
        ("gpu.example.com/v1", "Widget"): True,
        ("gpu.example.com/v2", "Widget"): True,
    }


def test_settle_namespace_uses_default_or_names_the_option():
    item = manifests.build_items([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}], "dflt")[0]
    item.namespaced = True
    manifests.settle_namespace(item)
    assert item.namespace == "dflt"
    item = manifests.build_items([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}])[0]
    item.namespaced = True
    with pytest.raises(GpuopsError) as err:
        manifests.settle_namespace(item)
    assert err.value.param == "namespace"


def test_contains_ignores_server_defaults_but_not_changes():
    server = {
        "metadata": {"name": "a", "uid": "1", "labels": {"x": "1"}},
        "spec": {"ports": [{"port": 1, "protocol": "TCP"}]},
    }
    assert object_contains(server, {"metadata": {"name": "a"}, "spec": {"ports": [{"port": 1}]}})
    assert not object_contains(server, {"spec": {"ports": [{"port": 2}]}})
    assert not object_contains(server, {"spec": {"ports": [{"port": 1}, {"port": 2}]}})
    # an empty map the server dropped is not a change; a missing non-empty one is
    assert object_contains(server, {"spec": {"template": {}}})
    assert not object_contains(server, {"spec": {"template": {"a": 1}}})
    assert not object_contains({"a": 1}, {"a": True})


def test_decide():
    assert compare.decide(None, {"a": 1}, "present") == "created"
    assert compare.decide({"a": 1, "b": 2}, {"a": 1}, "present") == "unchanged"
    assert compare.decide({"a": 2}, {"a": 1}, "present") == "updated"
    assert compare.decide({"a": 2}, {"a": 1}, "absent") == "deleted"
    assert compare.decide(None, {"a": 1}, "absent") == "absent"


def test_diff_hides_secret_values_and_skips_unchanged():
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "n"},
        "data": {"k": "c2VjcmV0"},
    }
    item = manifests.build_items([secret])[0]
    item.existing, item.action = None, "created"
    entry = compare.item_diff(item)
    assert entry["after"]["data"] == {"k": compare.MASK} and entry["before_header"] == "Secret n/s"
    item.action = "unchanged"
    assert compare.item_diff(item) is None


def test_crds_are_looked_at_soon_after_creation_then_up_to_wait_sleep(monkeypatch):
    from collections import namedtuple

    from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import writes

    Item = namedtuple("Item", "kind name resource")
    crd = Item("CustomResourceDefinition", "nodefeatures.nfd.k8s-sigs.io", "crd-api")
    looks = []

    def get_item(client, resource, name):
        looks.append(name)
        state = "True" if len(looks) > 6 else "False"
        return {"status": {"conditions": [{"type": "Established", "status": state}]}}

    monkeypatch.setattr(writes, "get_item", get_item)
    pauses, lines = [], []
    writes.wait_established(None, [crd, Item("ConfigMap", "x", None)], 60, 1, lines.append, pause=pauses.append)
    assert pauses == [0.2, 0.4, 0.8, 1, 1, 1]  # 0.2 s first, doubling, never longer than wait_sleep
    assert len(looks) == 7 and lines[0] == "CustomResourceDefinitions not Established yet: " + crd.name

    now = [0.0]
    looks[:] = []
    monkeypatch.setattr(writes, "get_item", lambda c, r, n: {"status": {}})
    with pytest.raises(GpuopsError, match="not Established after 3s") as err:
        writes.wait_established(
            None, [crd], 3, 1, lines.append, clock=lambda: now[0], pause=lambda s: now.__setitem__(0, now[0] + s)
        )
    assert err.value.param == "wait_timeout"


def _planned(kind, name, ns=None, action="created", api_version="v1", **body):
    """An item as k8s_ensure's plan leaves it: its action decided, its resource found."""
    meta = {"name": name}
    if ns:
        meta["namespace"] = ns
    it = manifests.Item(0, dict(apiVersion=api_version, kind=kind, metadata=meta, **body))
    it.action, it.resource, it.namespaced = action, kind, bool(ns)
    return it


def test_bindings_to_roles_of_the_same_run_are_dry_run_after_those_roles_are_written(monkeypatch):
    # Escalation prevention: the API server checks a binding against its role's rules, so a dry run of a binding to
    # a role that is not written yet fails (404) for every identity but a superuser.
    from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import runner

    def item(kind, name, ns=None, action="created", **body):
        return _planned(kind, name, ns, action, api_version="rbac.authorization.k8s.io/v1", **body)

    ns = manifests.Item(0, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nfd"}})
    ns.action, ns.resource, ns.namespaced = "created", "Namespace", False
    cr = item("ClusterRole", "gc", rules=[])
    crb = item("ClusterRoleBinding", "gc", roleRef={"kind": "ClusterRole", "name": "gc"})
    role = item("Role", "worker", "nfd", rules=[])
    rb = item("RoleBinding", "worker", "nfd", roleRef={"kind": "Role", "name": "worker"})
    old = item("ClusterRoleBinding", "view", roleRef={"kind": "ClusterRole", "name": "view"})  # role already there
    calls = []
    monkeypatch.setattr(runner, "apply", lambda c, i, fm, dry_run=False: calls.append((i.kind, i.name, dry_run)))
    monkeypatch.setattr(runner, "_resolve_deferred", lambda c, items: None)
    runner.converge(None, [ns, cr, crb, role, rb, old], "fm", 10, 1, lambda line: None)
    assert calls == [
        ("Namespace", "nfd", True),
        ("ClusterRole", "gc", True),
        ("ClusterRoleBinding", "view", True),
        ("Namespace", "nfd", False),
        ("Role", "worker", True),  # in the new namespace
        ("ClusterRole", "gc", False),
        ("Role", "worker", False),
        ("ClusterRoleBinding", "gc", True),
        ("RoleBinding", "worker", True),
        ("ClusterRoleBinding", "gc", False),
        ("RoleBinding", "worker", False),
        ("ClusterRoleBinding", "view", False),
    ]


def test_a_pod_running_as_a_serviceaccount_of_the_same_run_is_dry_run_after_that_account_is_written(monkeypatch):
    # Admission refuses a pod (a dry run too) whose ServiceAccount does not exist yet: the entitlement test pod
    # and its own ServiceAccount come in one k8s_ensure.
    from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import runner

    def item(kind, name, ns=None, action="created", **body):
        return _planned(kind, name, ns, action, **body)

    sa = item("ServiceAccount", "tester", "t")
    pod = item("Pod", "test", "t", spec={"serviceAccountName": "tester"})
    other = item("Pod", "plain", "t", spec={})  # the default ServiceAccount: not one of this run
    calls = []
    monkeypatch.setattr(runner, "apply", lambda c, i, fm, dry_run=False: calls.append((i.kind, i.name, dry_run)))
    monkeypatch.setattr(runner, "_resolve_deferred", lambda c, items: None)
    runner.converge(None, [sa, pod, other], "fm", 10, 1, lambda line: None)
    assert calls == [
        ("ServiceAccount", "tester", True),
        ("Pod", "plain", True),
        ("ServiceAccount", "tester", False),
        ("Pod", "test", True),
        ("Pod", "test", False),
        ("Pod", "plain", False),
    ]


def test_a_resource_quota_is_ready_once_the_quota_controller_counted_it():
    from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.readiness import quota_in_force

    spec = {"hard": {"requests.nvidia.com/gpu": "2", "pods": "10"}}
    assert not quota_in_force(None)
    assert not quota_in_force({"spec": spec})  # just created: admission would let a 3-GPU pod in
    assert not quota_in_force({"spec": spec, "status": {"hard": {"pods": "10"}}})
    assert quota_in_force({"spec": spec, "status": {"hard": dict(spec["hard"]), "used": {"pods": "0"}}})


def test_wait_exclude_leaves_out_the_named_objects_and_refuses_a_name_not_in_the_list():
    from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import task

    master = _planned("Deployment", "nfd-master", "nfd", api_version="apps/v1")
    worker = _planned("DaemonSet", "nfd-worker", "nfd", api_version="apps/v1")
    assert task.waited([master, worker], []) == [master, worker]
    assert task.waited([master, worker], ["DaemonSet/nfd-worker"]) == [master]
    with pytest.raises(GpuopsError) as err:
        task.waited([master, worker], ["DaemonSet/nfd-workers", "Deployment/nfd-master"])
    assert err.value.param == "wait_exclude"
    assert "names no object of definitions: DaemonSet/nfd-workers." in str(err.value)
    assert "(DaemonSet/nfd-worker, Deployment/nfd-master)" in str(err.value)
