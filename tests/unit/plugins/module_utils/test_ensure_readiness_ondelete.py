# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.ensure import readiness
from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.manifests import Item


def ds(strategy, updated, ready=2, desired=2, generation=3, observed=3):
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "d", "namespace": "n", "generation": generation},
        "spec": {"updateStrategy": {"type": strategy}},
        "status": {
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "updatedNumberScheduled": updated,
            "observedGeneration": observed,
        },
    }


def test_ondelete_daemonset_is_ready_with_old_pods_running():
    """An OnDelete DaemonSet whose template changed keeps its old, ready pods: ready, not a timeout."""
    obj = ds("OnDelete", updated=0)
    assert readiness._ready_predicate(Item(0, obj))(obj)
    assert not readiness._ready_predicate(Item(0, obj))(ds("OnDelete", updated=0, ready=1))
    assert not readiness._ready_predicate(Item(0, obj))(ds("OnDelete", updated=2, observed=2))


def test_rolling_update_daemonset_still_waits_for_updated_pods():
    obj = ds("RollingUpdate", updated=0)
    predicate = readiness._ready_predicate(Item(0, obj))
    # kubernetes.core's predicate takes a ResourceInstance; a plain object with attributes is enough here.
    from kubernetes.dynamic.resource import ResourceInstance

    assert not predicate(ResourceInstance(None, obj))
    assert predicate(ResourceInstance(None, ds("RollingUpdate", updated=2)))


def test_the_readiness_wait_looks_soon_then_backs_off(monkeypatch):
    """Each waited object goes through kube.wait_backoff (first look 0.5 s after the writes, doubling to wait_sleep):
    a flat wait_sleep poll cost each of the stack's five DaemonSets a whole 5 s in every converge."""
    calls = []

    def backoff(waiter, timeout, sleep, first=0.5, **kwargs):
        calls.append((kwargs["name"], timeout, sleep, first))
        return True, {}, 1

    monkeypatch.setattr(readiness, "wait_backoff", backoff)
    items = [
        Item(0, ds("RollingUpdate", updated=2)),
        Item(1, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
    ]
    for item in items:
        item.resource = object()
    assert readiness.wait_all(None, items, 300, 5, lambda line: None) == 1
    assert calls == [("d", 300, 5, 0.5)]  # the DaemonSet only: a ConfigMap has no readiness


def test_a_look_without_an_object_is_not_ready_and_a_deletion_is_gone():
    """kubernetes.core's Waiter calls the predicate with None after a look the API server did not answer (and then
    raises that error) or when the object is not found; its own DaemonSet predicate would fail on None."""
    obj = ds("RollingUpdate", updated=2)
    lines = []
    watched = readiness._watch(Item(0, obj), readiness._ready_predicate(Item(0, obj)), lines.append, absent=False)
    assert watched(None) is False and lines == []
    gone = readiness._watch(Item(0, obj), readiness.resource_absent, lines.append, absent=True)
    assert gone(None) is True and lines == ["DaemonSet n/d: gone"]
