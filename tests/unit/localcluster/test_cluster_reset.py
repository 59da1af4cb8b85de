# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What the integration tests' cluster reset (tests/integration/cluster_reset.py) writes back on a seed object."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "integration")
)
from cluster_reset import harness_object, restore_patch, without_harness  # noqa: E402

MCO = "machineconfiguration.openshift.io/"


def node(labels=None, annotations=None, taints=None, unschedulable=None):
    spec = {}
    if taints is not None:
        spec["taints"] = taints
    if unschedulable is not None:
        spec["unschedulable"] = unschedulable
    return {"metadata": {"name": "n", "labels": labels or {}, "annotations": annotations or {}}, "spec": spec}


def test_an_unchanged_object_needs_no_patch():
    seed = node({"a": "1"}, {"gpuops.cluster/x": "y", "other": "1"}, [{"key": "k", "effect": "NoSchedule"}])
    assert restore_patch("Node", seed, seed) is None


def test_labels_added_changed_and_removed_are_put_back():
    seed = node({"keep": "1", "changed": "old", "removed": "x"})
    live = node({"keep": "1", "changed": "new", "feature.node.kubernetes.io/pci-10de.present": "true"})
    patch = restore_patch("Node", seed, live)
    assert patch == {
        "metadata": {
            "labels": {
                "keep": "1",
                "changed": "old",
                "removed": "x",
                "feature.node.kubernetes.io/pci-10de.present": None,
            }
        }
    }


def test_only_gpuops_annotations_are_restored():
    seed = node(annotations={"kwok.x-k8s.io/node": "fake"})
    live = node(annotations={"kwok.x-k8s.io/node": "fake", "gpuops.cluster/added-taints": "[]", "nfd.node/x": "1"})
    assert restore_patch("Node", seed, live) == {"metadata": {"annotations": {"gpuops.cluster/added-taints": None}}}


def test_node_taints_go_back_and_the_controllers_taints_stay():
    seed = node(taints=[{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}])
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
    live = node(taints=[not_ready, {"key": "nvidia.com/gpu", "effect": "NoSchedule"}], unschedulable=True)
    patch = restore_patch("Node", seed, live)
    assert patch == {
        "spec": {
            "taints": [{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}, not_ready],
            "unschedulable": False,
        }
    }


def test_a_node_the_mco_is_updating_keeps_its_spec():
    seed = node()
    busy = {MCO + "state": "Working", MCO + "currentConfig": "rendered-a", MCO + "desiredConfig": "rendered-b"}
    live = node(annotations=busy, unschedulable=True)
    assert restore_patch("Node", seed, live) is None


def test_machineset_replicas_and_template_taints_and_pool_max_unavailable():
    seed = {"metadata": {"name": "ms"}, "spec": {"replicas": 1, "template": {"spec": {}}}}
    live = {
        "metadata": {"name": "ms"},
        "spec": {"replicas": 3, "template": {"spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}}},
    }
    assert restore_patch("MachineSet", seed, live) == {"spec": {"replicas": 1, "template": {"spec": {"taints": None}}}}
    pool = {"metadata": {"name": "worker"}, "spec": {"configuration": {"name": "rendered-worker-1"}}}
    moved = {
        "metadata": {"name": "worker"},
        "spec": {"configuration": {"name": "rendered-worker-2"}, "maxUnavailable": 3},
    }
    # The rendered config is the MCO's: it comes back by itself once the extra MachineConfigs are gone.
    assert restore_patch("MachineConfigPool", pool, moved) == {"spec": {"maxUnavailable": None}}


def test_configmap_data_goes_back():
    seed = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    live = {"metadata": {"name": "c"}, "data": {"a": "2", "b": "3"}}
    assert restore_patch("ConfigMap", seed, live) == {"data": {"a": "1", "b": None}}


def test_the_harness_objects_are_neither_deleted_nor_compared():
    """kwok's CRD and APIService and the simulator's status ConfigMap are made as they start: a seed taken before
    or after them must not make the reset delete them or wait for them (CI: a 247 s reset timeout)."""
    assert harness_object("CustomResourceDefinition", "", "logs.kwok.x-k8s.io")
    assert harness_object("APIService", "", "v1alpha1.kwok.x-k8s.io")
    assert harness_object("ConfigMap", "kube-system", "simopenshift")
    assert not harness_object("ConfigMap", "nvidia-gpu-driver", "simopenshift")
    assert not harness_object("CustomResourceDefinition", "", "nodefeaturediscoveries.nfd.openshift.io")
    seed = {"CustomResourceDefinition": {"/logs.kwok.x-k8s.io": {}, "/clusterpolicies.nvidia.com": {}}}
    live = {"CustomResourceDefinition": {"/clusterpolicies.nvidia.com": {}}}
    assert without_harness(seed) == without_harness(live) == live
