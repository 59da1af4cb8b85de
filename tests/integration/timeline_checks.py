# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Checks of test_site.py's converge: the timeline of site.yml, as `make demo` runs it, answers for every phase of
every GPU node (one converge proves both; this file held a converge of its own before).

The NFD phase is the one the API keeps no fixed time for. Run to the driver only, the time of the managedFields
entry that owns the GPU label (nfd-master's, as the simulated NFD writes it like the real one) is the labelling.
After GFD, whose labels nfd-master writes under that same entry, the entry's time is GFD's, after the driver was
Ready; the node's nfd-worker Ready stands in then. Both times are checked against the objects themselves.

Also what the local inventory sets for the scheduling state (GPU taint, PriorityClasses, the tenant's quota): in
place after the run, unchanged by a re-run, gone after the teardown.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os

import yaml
from conftest import ROOT
from kubernetes import client

GPU_LABELS = (
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
)
PHASES = ("provision", "boot", "nfd", "driver", "toolkit", "plugin", "validate")


def when(text):
    return datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))


def read_timeline(reports):
    with open(os.path.join(reports, "timeline.json")) as f:
        return json.load(f)


def label_entry(node):
    """The managedFields entry owning the node's NFD GPU label (the latest, as the timeline reads it)."""
    owning = [
        e
        for e in node.metadata.managed_fields or []
        if set("f:" + k for k in GPU_LABELS) & set(((e.fields_v1 or {}).get("f:metadata") or {}).get("f:labels") or {})
    ]
    assert owning, "no managedFields entry owns the GPU label of {0}".format(node.metadata.name)
    return max(owning, key=lambda e: e.time)


def worker_ready(core, node_name):
    pods = core.list_pod_for_all_namespaces(
        label_selector="app=nfd-worker", field_selector="spec.nodeName=" + node_name
    )
    times = [c.last_transition_time for p in pods.items for c in p.status.conditions or [] if c.type == "Ready"]
    assert times, "no nfd-worker pod Ready on {0}".format(node_name)
    return min(times)


def node_line(timeline, name):
    """The node's cells in the printed table: {column: text}."""
    head = next(line for line in timeline["table"] if line.startswith("node "))
    row = next(line for line in timeline["table"] if line.startswith(name + " "))
    return dict(zip(head.split(), row.split()))


def local_inventory():
    with open(os.path.join(ROOT, "inventories", "local", "group_vars", "all", "main.yml")) as f:
        return yaml.safe_load(f)


def check_scheduling(cluster, gpu_nodes, inv):
    """The local inventory's GPU taint, PriorityClasses and tenant quota are on the cluster."""
    core = client.CoreV1Api(cluster.api)
    assert inv["gpuops_gpu_taint"] is True
    for name in gpu_nodes:
        taints = [(t.key, t.value or "", t.effect) for t in core.read_node(name).spec.taints or []]
        assert ("nvidia.com/gpu", "", "NoSchedule") in taints, (name, taints)
    classes = dict((c.metadata.name, c) for c in client.SchedulingV1Api(cluster.api).list_priority_class().items)
    for wanted in inv["scheduling_priority_classes"]:
        got = classes.get(wanted["name"])
        assert got is not None, wanted["name"]
        assert got.value == wanted["value"], wanted["name"]
        assert got.preemption_policy == wanted.get("preemptionPolicy", "PreemptLowerPriority"), wanted["name"]
    for quota in inv["scheduling_quotas"]:
        rq = core.read_namespaced_resource_quota("gpuops-gpu", quota["namespace"])
        assert rq.spec.hard == {"requests.nvidia.com/gpu": str(quota["gpus"])}, rq.spec.hard


def check_until_driver(cluster, reports):
    """Run to the driver only: nfd-master's managedFields entry holds the labelling time of every GPU node."""
    core = client.CoreV1Api(cluster.api)
    timeline = read_timeline(reports)
    assert timeline["nodes"], "no GPU node in the timeline"
    for row in timeline["nodes"]:
        entry = label_entry(core.read_node(row["node"]))
        assert entry.manager == "nfd-master", entry  # the simulated NFD writes as the real nfd-master
        assert row["sources"] == {"nfd_labelled": "managedFields (nfd-master)"}, row
        assert when(row["steps"]["nfd_labelled"]) == entry.time, (row, entry.time)
        assert row["seconds"]["nfd"] is not None and row["seconds"]["driver"] > 0, row
        cells = node_line(timeline, row["node"])
        assert cells["nfd"] != "-" and cells["driver"] != "-", cells


def check_every_phase(cluster, reports):
    """After every state: GFD's labels, written by nfd-master, moved its entry past the driver's Ready, so the
    node's nfd-worker Ready stands in; every phase of every GPU node has a time. Returns the GPU nodes."""
    core = client.CoreV1Api(cluster.api)
    timeline = read_timeline(reports)
    gpu_nodes = sorted(r["node"] for r in timeline["nodes"])
    assert gpu_nodes, "no GPU node in the timeline"
    for row in timeline["nodes"]:
        node = core.read_node(row["node"])
        assert node.metadata.labels.get("nvidia.com/gpu.product"), "GFD did not label {0}".format(row["node"])
        entry = label_entry(node)
        assert entry.manager == "nfd-master" and entry.time > when(row["steps"]["driver_ready"]), (entry, row)
        assert row["sources"] == {"nfd_labelled": "nfd-worker Ready"}, row
        assert when(row["steps"]["nfd_labelled"]) == worker_ready(core, row["node"]), row
        for phase in PHASES:
            assert row["seconds"][phase] is not None and row["seconds"][phase] >= 0, (phase, row)
        assert row["out_of_order"] is False, row
        cells = node_line(timeline, row["node"])
        assert "-" not in [cells[p] for p in PHASES + ("total",)], (cells, timeline["table"])
    assert any("nfd-worker" in line for line in timeline["table"]), timeline["table"]
    return gpu_nodes


def check_scheduling_gone(cluster, inv):
    """After the teardown: the inventory's PriorityClasses and quotas are gone; the tenant's namespace stays."""
    core = client.CoreV1Api(cluster.api)
    names = [c.metadata.name for c in client.SchedulingV1Api(cluster.api).list_priority_class().items]
    assert not set(c["name"] for c in inv["scheduling_priority_classes"]) & set(names), names
    for quota in inv["scheduling_quotas"]:
        assert core.list_namespaced_resource_quota(quota["namespace"]).items == []
        assert core.read_namespace(quota["namespace"]).status.phase == "Active"  # the tenant's: never removed
