# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Simulated machine-api: MachineSet -> Machines -> Nodes, scale down, failures, autoscaler."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import time
import uuid

import pytest
from kubernetes.utils import parse_quantity
from simopenshift.control import wait_match  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog  # noqa: E402
from simopenshift.kube import NODES, labels_of  # noqa: E402
from simopenshift.testing import (  # noqa: E402
    clone_machineset,
    delete_machineset,
    machines_of,
    ready_nodes_of,
    scale,
    wait_for,
    worker_machinesets,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def machineset(kube):
    made = []

    def make(instance_type="m6i.xlarge", replicas=0, **kwargs):
        source = worker_machinesets(kube)[1]
        name = "%s-t%s" % (source["metadata"]["name"], uuid.uuid4().hex[:4])
        clone_machineset(kube, source, name, instance_type, replicas=replicas, **kwargs)
        made.append(name)
        return name

    yield make
    for name in made:
        delete_machineset(kube, name)


def test_scale_up_walks_machine_phases_and_registers_the_node(kube, machineset):
    name = machineset(
        node_labels={"gpuops.test/role": "sim"},
        taints=[{"key": "gpuops.test/dedicated", "value": "x", "effect": "NoSchedule"}],
    )
    # Read the phases from a watch opened before the scale-up, not by polling: a
    # poll on a loaded CI machine can miss a phase that lasted a few milliseconds.
    dummy, since = kube.list(apis.MACHINES, apis.MACHINE_API_NS)
    scale(kube, name, 1)
    phases = []
    machine = None
    for etype, obj in kube.watch_stream(apis.MACHINES, since, apis.MACHINE_API_NS, timeout_seconds=30):
        if (
            etype not in ("ADDED", "MODIFIED")
            or labels_of(obj).get("machine.openshift.io/cluster-api-machineset") != name
        ):
            continue
        phase = (obj.get("status") or {}).get("phase")
        if phase and (not phases or phases[-1] != phase):
            phases.append(phase)
        if phase == "Running":
            machine = obj
            break
    assert machine is not None, "no Machine of %s reached Running in 30s; phases seen: %s" % (name, phases)
    assert phases == ["Provisioning", "Provisioned", "Running"]
    assert machine["metadata"]["generateName"] == name + "-"
    assert machine["metadata"]["ownerReferences"][0]["kind"] == "MachineSet"
    assert machine["metadata"]["labels"]["machine.openshift.io/instance-type"] == "m6i.xlarge"
    assert machine["metadata"]["labels"]["machine.openshift.io/zone"] == "us-east-2b"
    provider_status = machine["status"]["providerStatus"]
    assert provider_status["instanceState"] == "running" and provider_status["instanceId"].startswith("i-")
    assert machine["spec"]["providerID"] == "aws:///us-east-2b/" + provider_status["instanceId"]
    addresses = {a["type"]: a["address"] for a in machine["status"]["addresses"]}
    assert addresses["InternalIP"].startswith("10.0.14") or addresses["InternalIP"].startswith("10.0.15")

    (node,) = ready_nodes_of(kube, name, 1)
    assert node["metadata"]["name"] == machine["status"]["nodeRef"]["name"] == addresses["InternalDNS"]
    assert (
        node["metadata"]["annotations"]["machine.openshift.io/machine"]
        == "openshift-machine-api/" + machine["metadata"]["name"]
    )
    labels = labels_of(node)
    assert labels["gpuops.test/role"] == "sim"  # template spec.metadata.labels
    assert labels["node-role.kubernetes.io/worker"] == ""
    assert labels["topology.kubernetes.io/zone"] == "us-east-2b"
    assert labels["node.kubernetes.io/instance-type"] == "m6i.xlarge"
    assert {"key": "gpuops.test/dedicated", "value": "x", "effect": "NoSchedule"} in node["spec"]["taints"]
    itype = catalog.instance_type("m6i.xlarge")
    assert node["status"]["capacity"]["cpu"] == str(itype.vcpu)
    assert parse_quantity(node["status"]["capacity"]["memory"]) == itype.memory_mib * 1024 * 1024
    # MCO annotations: the node booted with its pool's current rendered config.
    pool = kube.get(apis.MACHINECONFIGPOOLS, "worker")
    assert (
        node["metadata"]["annotations"]["machineconfiguration.openshift.io/currentConfig"]
        == pool["spec"]["configuration"]["name"]
    )

    ms = wait_match(
        lambda: kube.get(apis.MACHINESETS, name, apis.MACHINE_API_NS),
        lambda m: (m.get("status") or {}).get("readyReplicas") == 1,
        20,
        what="readyReplicas 1",
    )
    status = ms["status"]
    assert (status["replicas"], status["fullyLabeledReplicas"], status["availableReplicas"]) == (1, 1, 1)
    assert status["observedGeneration"] == ms["metadata"]["generation"]


def test_scale_down_deletes_machines_and_nodes_newest_first(kube, machineset):
    name = machineset(replicas=2)
    nodes = ready_nodes_of(kube, name, 2)
    kube.patch(apis.MACHINESETS, name, {"spec": {"deletePolicy": "Newest"}}, apis.MACHINE_API_NS)
    machines = sorted(machines_of(kube, name), key=lambda m: m["metadata"]["creationTimestamp"])
    time.sleep(1.1)  # distinct creationTimestamps (second resolution) for the third machine
    scale(kube, name, 3)
    ready_nodes_of(kube, name, 3)
    newest = max(machines_of(kube, name), key=lambda m: m["metadata"]["creationTimestamp"])
    scale(kube, name, 2)
    wait_for(lambda: len(machines_of(kube, name)) == 2, 30, what="scale down to 2")
    left = {m["metadata"]["name"] for m in machines_of(kube, name)}
    assert newest["metadata"]["name"] not in left
    assert left == {m["metadata"]["name"] for m in machines}
    assert kube.get(NODES, newest["status"]["nodeRef"]["name"]) is None
    for node in nodes:
        assert kube.get(NODES, node["metadata"]["name"]) is not None
    wait_for(
        lambda: kube.get(apis.MACHINESETS, name, apis.MACHINE_API_NS)["status"]["replicas"] == 2,
        20,
        what="status.replicas 2",
    )


def test_unknown_instance_type_fails_the_machine(kube, machineset):
    name = machineset(instance_type="p9.mega", replicas=1)
    machine = wait_for(
        lambda: next((m for m in machines_of(kube, name) if (m.get("status") or {}).get("phase") == "Failed"), None),
        20,
        what="machine Failed",
    )
    assert machine["status"]["errorReason"] == "InvalidConfiguration"
    assert "p9.mega" in machine["status"]["errorMessage"]
    ms = wait_for(lambda: kube.get(apis.MACHINESETS, name, apis.MACHINE_API_NS), 5)
    assert (ms.get("status") or {}).get("readyReplicas", 0) == 0
    assert "machine.openshift.io/GPU" not in (ms["metadata"].get("annotations") or {})


def test_gpu_machineset_gets_scale_from_zero_annotations(kube, machineset):
    name = machineset(instance_type="p3.8xlarge")
    ms = wait_match(
        lambda: kube.get(apis.MACHINESETS, name, apis.MACHINE_API_NS),
        lambda m: (m["metadata"].get("annotations") or {}).get("machine.openshift.io/GPU"),
        20,
        what="capacity annotations",
    )
    ann = ms["metadata"]["annotations"]
    assert (
        ann["machine.openshift.io/GPU"],
        ann["machine.openshift.io/vCPU"],
        ann["machine.openshift.io/memoryMb"],
    ) == ("4", "32", "249856")


def test_machineautoscaler_annotates_its_target(kube, machineset):
    name = machineset()
    ma = "ma-" + uuid.uuid4().hex[:5]
    kube.create(
        apis.MACHINEAUTOSCALERS,
        {
            "apiVersion": apis.MACHINEAUTOSCALERS.api_version,
            "kind": "MachineAutoscaler",
            "metadata": {"name": ma, "namespace": apis.MACHINE_API_NS},
            "spec": {
                "minReplicas": 0,
                "maxReplicas": 4,
                "scaleTargetRef": {"apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineSet", "name": name},
            },
        },
    )
    min_key = "machine.openshift.io/cluster-api-autoscaler-node-group-min-size"
    max_key = "machine.openshift.io/cluster-api-autoscaler-node-group-max-size"

    def annotated():
        ann = kube.get(apis.MACHINESETS, name, apis.MACHINE_API_NS)["metadata"].get("annotations") or {}
        return (ann.get(min_key), ann.get(max_key)) == ("0", "4")

    wait_for(annotated, 20, what="autoscaler annotations")
    status = wait_for(
        lambda: (kube.get(apis.MACHINEAUTOSCALERS, ma, apis.MACHINE_API_NS).get("status") or {}).get("lastTargetRef"),
        20,
        what="lastTargetRef",
    )
    assert status == {"apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineSet", "name": name}
    kube.delete(apis.MACHINEAUTOSCALERS, ma, apis.MACHINE_API_NS)
    wait_for(
        lambda: min_key
        not in (kube.get(apis.MACHINESETS, name, apis.MACHINE_API_NS)["metadata"].get("annotations") or {}),
        20,
        what="annotations removed with the autoscaler",
    )
    wait_for(lambda: kube.get(apis.MACHINEAUTOSCALERS, ma, apis.MACHINE_API_NS) is None, 20, what="finalizer released")
