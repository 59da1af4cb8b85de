# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""state_ledger on the real control plane: recorded states are skipped until something they made is
edited or deleted, or their inputs change; the first changed state runs and every state after it;
checking writes nothing; bad input names the option.

site.yml's use of it (a no-op re-run skips every state; a deleted object brings its state back) is
in test_site.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from kubernetes import client

pytestmark = pytest.mark.integration


def probes(namespace):
    """State names of this test alone: the ledger finds what a state made by its owner label in every namespace,
    and the namespace of the test before may still be terminating with its probes in it."""
    tag = namespace.replace("-", "_")
    return "ledger_probe_a_" + tag, "ledger_probe_b_" + tag


def config_map(namespace, name, owner, value="1"):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"gpuops.cluster/owner": owner, "app.kubernetes.io/managed-by": "gpuops.cluster"},
        },
        "data": {"value": value},
    }


def test_states_are_skipped_until_what_they_made_changes(cluster, namespace, ansible_task):
    A, B = probes(namespace)
    core = client.CoreV1Api(cluster.api)
    for name, owner in (("probe-a", A), ("probe-b", B)):
        res = ansible_task(
            "gpuops.cluster.k8s_ensure", {"definitions": [config_map(namespace, name, owner)], "owner": owner}
        )
        assert not res.get("failed"), res
    where = {"namespace": namespace, "name": "ledger-under-test"}
    states = [{"name": A, "inputs": "in-a"}, {"name": B, "inputs": "in-b"}]

    def check(given=None, **extra):
        mark = cluster.audit.mark()
        res = ansible_task("gpuops.cluster.state_ledger", dict(where, states=given or states, **extra))
        assert not res.get("failed"), res
        assert res["changed"] is False and cluster.audit.writes_since(mark) == []
        return res

    def record():
        res = ansible_task("gpuops.cluster.state_ledger", dict(where, states=states, mode="record"))
        assert not res.get("failed"), res
        ledger = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(where), "data": res["data"]}
        assert not ansible_task("gpuops.cluster.k8s_ensure", {"definitions": [ledger]}).get("failed")

    first = check()
    assert first["run"] == [A, B] and first["skip"] == [] and first["recorded"] is False
    assert first["reasons"][A].startswith("no record") and first["reasons"][B] == "runs after {0}, which runs".format(A)

    record()
    for mode in (False, True):
        res = ansible_task("gpuops.cluster.state_ledger", dict(where, states=states), check=mode)
        assert res["run"] == [] and res["skip"] == [A, B] and res["recorded"] is True, res

    # An edit of what B made: B runs, A stays skipped.
    core.patch_namespaced_config_map("probe-b", namespace, {"data": {"value": "edited"}})
    res = check()
    assert res["run"] == [B] and res["reasons"][B] == "ConfigMap {0}/probe-b was changed".format(namespace)

    record()
    assert check()["run"] == []
    # What A made is gone: A runs, and B after it.
    core.delete_namespaced_config_map("probe-a", namespace)
    res = check()
    assert res["run"] == [A, B], res
    assert res["reasons"] == {
        A: "ConfigMap {0}/probe-a is gone".format(namespace),
        B: "runs after {0}, which runs".format(A),
    }

    # Made again by someone else with our labels: a new object, not the recorded one.
    core.create_namespaced_config_map(namespace, config_map(namespace, "probe-a", A))
    assert check()["reasons"][A] == "ConfigMap {0}/probe-a was changed".format(namespace)

    record()
    assert check()["run"] == []
    # New inputs for B (a variable changed): B runs; force runs both.
    res = check([states[0], {"name": B, "inputs": "in-b2"}])
    assert res["run"] == [B] and res["reasons"][B] == "its variables or the collection changed"
    assert check(force=True)["run"] == [A, B]

    for bad, param, words in (
        ({"states": [{"name": A}]}, "states", "inputs"),
        ({"states": [{"name": A, "inputs": "x"}, {"name": A, "inputs": "y"}]}, "states", "twice"),
        ({"namespace": "Not_A_Namespace"}, "namespace", "not a valid"),
        ({"name": "Bad_Name"}, "name", "not a valid"),
    ):
        res = ansible_task("gpuops.cluster.state_ledger", dict(dict(where, states=states), **bad))
        assert res.get("failed") and res.get("param") == param, res
        assert res["msg"].startswith(param + ":") and words in res["msg"], res["msg"]
    res = ansible_task("gpuops.cluster.state_ledger", dict(where, states=states, mode="write"))
    assert res.get("failed") and "mode" in res["msg"], res


def one_state_made(namespace, ansible_task, probe, ledger):
    """(this test's state name, the ledger's namespace and name, the states to record): one ConfigMap ``probe`` made
    by that state, the ledger ConfigMap ``ledger`` in the test's namespace."""
    A = probes(namespace)[0]
    res = ansible_task("gpuops.cluster.k8s_ensure", {"definitions": [config_map(namespace, probe, A)], "owner": A})
    assert not res.get("failed"), res
    return A, {"namespace": namespace, "name": ledger}, [{"name": A, "inputs": "in-a"}]


def test_write_records_in_the_same_run_only_when_changed_and_not_in_check_mode(cluster, namespace, ansible_task):
    """``write: true`` writes the ledger as k8s_ensure would (owner state_ledger): once, then nothing; check mode
    and diff say what it would write; an invalidation drops the records the same way."""
    A, where, states = one_state_made(namespace, ansible_task, "probe-w", "ledger-written")
    core = client.CoreV1Api(cluster.api)

    mark = cluster.audit.mark()
    res = ansible_task(
        "gpuops.cluster.state_ledger", dict(where, states=states, mode="record", write=True), check=True, diff=True
    )
    assert not res.get("failed"), res
    assert res["changed"] is True and res["objects"][0]["action"] == "created", res
    assert res["diff"] and cluster.audit.writes_since(mark) == []

    res = ansible_task("gpuops.cluster.state_ledger", dict(where, states=states, mode="record", write=True))
    assert res["changed"] is True and res["objects"][0]["action"] == "created", res
    cm = core.read_namespaced_config_map("ledger-written", namespace)
    assert cm.data == res["data"] and set(cm.data) == {A}
    assert cm.metadata.labels == {
        "gpuops.cluster/owner": "state_ledger",
        "app.kubernetes.io/managed-by": "gpuops.cluster",
    }
    check = ansible_task("gpuops.cluster.state_ledger", dict(where, states=states))
    assert check["run"] == [] and check["skip"] == [A], check.get("reasons")

    mark = cluster.audit.mark()
    res = ansible_task("gpuops.cluster.state_ledger", dict(where, states=states, mode="record", write=True))
    assert res["changed"] is False and res["objects"][0]["action"] == "unchanged", res
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []

    res = ansible_task(
        "gpuops.cluster.state_ledger", dict(where, mode="invalidate", failed_state=A, failed_task="t", write=True)
    )
    assert res["changed"] is True, res
    assert set(core.read_namespaced_config_map("ledger-written", namespace).data) == {"last-failure"}
    assert ansible_task("gpuops.cluster.state_ledger", dict(where, states=states))["run"] == [A]
    # No ledger, nothing to drop: nothing written.
    gone = dict(where, name="no-ledger-here")
    res = ansible_task("gpuops.cluster.state_ledger", dict(gone, mode="invalidate", failed_state=A, write=True))
    assert res["changed"] is False and res["data"] is None and "objects" not in res, res


def test_the_ledger_reads_every_kind_the_teardown_inventory_lists():
    """A kind a role starts to create goes into the teardown inventory; the ledger must stamp it too."""
    from inventory import KINDS as INVENTORY

    from ansible_collections.gpuops.cluster.plugins.module_utils.ledger import KINDS

    # Made and replaced by the workloads and operators that own them: their owners' readiness is read instead.
    transient = {"Machine", "ClusterServiceVersion", "InstallPlan", "Build"}
    assert sorted(k for k in INVENTORY if k[1] not in transient) == sorted(KINDS)


def test_asked_by_platform_info_and_recorded_by_gpu_timeline_in_their_module_runs(cluster, namespace, ansible_task):
    """The two followers site.yml uses: gpu_timeline's record (check mode writes nothing and says it would; then
    written once, then unchanged) and platform_info's check, which answers as state_ledger does; a bad option is
    named under state_ledger before anything is read or written."""
    A, where, states = one_state_made(namespace, ansible_task, "probe-f", "ledger-followed")
    core = client.CoreV1Api(cluster.api)
    record = dict(where, states=states, mode="record", write=True)

    mark = cluster.audit.mark()
    res = ansible_task("gpuops.cluster.gpu_timeline", {"machines": False, "state_ledger": record}, check=True)
    assert not res.get("failed"), res
    assert res["changed"] is True and res["state_ledger"]["objects"][0]["action"] == "created", res
    assert cluster.audit.writes_since(mark) == []

    res = ansible_task("gpuops.cluster.gpu_timeline", {"machines": False, "state_ledger": record})
    assert res["changed"] is True and res["state_ledger"]["objects"][0]["action"] == "created", res
    assert set(core.read_namespaced_config_map("ledger-followed", namespace).data) == {A}
    mark = cluster.audit.mark()
    res = ansible_task("gpuops.cluster.gpu_timeline", {"machines": False, "state_ledger": record})
    assert res["changed"] is False and res["state_ledger"]["objects"][0]["action"] == "unchanged", res
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []

    asked = ansible_task(
        "gpuops.cluster.platform_info", {"check_access": False, "state_ledger": dict(where, states=states)}
    )
    direct = ansible_task("gpuops.cluster.state_ledger", dict(where, states=states))
    keys = ("run", "skip", "reasons", "recorded")
    assert asked["state_ledger"]["skip"] == [A], asked.get("state_ledger")
    assert dict((k, asked["state_ledger"][k]) for k in keys) == dict((k, direct[k]) for k in keys)

    mark = cluster.audit.mark()
    bad = ansible_task("gpuops.cluster.gpu_timeline", {"machines": False, "state_ledger": dict(record, mode="check")})
    assert bad.get("failed") and "state_ledger.mode" in bad["msg"] and "only mode=record" in bad["msg"], bad
    bad = ansible_task("gpuops.cluster.platform_info", {"check_access": False, "state_ledger": dict(record)})
    assert bad.get("failed") and "state_ledger.mode" in bad["msg"] and "only mode=check" in bad["msg"], bad
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
