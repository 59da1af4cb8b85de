# -*- coding: utf-8 -*-
"""machineset_clone through main(): argument handling, check mode, diff, idempotence, zero writes on errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import kube
from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset import model as M
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset import runner
from ansible_collections.gpuops.cluster.plugins.modules import machineset_clone
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.machineset_fixtures import (
    INFRA,
    aws_machineset,
    azure_machineset,
    gcp_machineset,
    vsphere_machineset,
)
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.fake_k8s import FakeClient, run

SOURCE = INFRA + "-worker-us-east-2a"
TARGET = INFRA + "-gpu-us-east-2a"


def cluster():
    return FakeClient([aws_machineset(z) for z in ("us-east-2a", "us-east-2b", "us-east-2c")])


def diffs(result):
    """{MachineSet name: diff entry} from the diff list (one before/after entry per object)."""
    out = {}
    for entry in result["diff"]:
        assert entry["before_header"] == entry["after_header"]
        out[entry["before_header"].rsplit("/", 1)[1]] = entry
    return out


def go(monkeypatch, client, check=False, diff=False, **args):
    return run(monkeypatch, machineset_clone.main, client, args, check=check, diff=diff)


def test_create_then_idempotent(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client, source=SOURCE, instance_type="g4dn.xlarge")
    assert not failed, result
    assert result["changed"] is True
    assert [w[:3] for w in client.writes] == [("create", "MachineSet", TARGET)]
    item = result["machinesets"][0]
    assert item["name"] == TARGET and item["source"] == SOURCE and item["action"] == "created"
    assert item["zone"] == "us-east-2a" and item["instance_type"] == "g4dn.xlarge" and item["replicas"] == 1
    assert item["gpu"]["gpu_model"] == "Tesla-T4"
    created = [o for o in client.objects("MachineSet") if o["metadata"]["name"] == TARGET][0]
    assert created["metadata"]["labels"][MANAGED_BY_LABEL] == MANAGED_BY
    assert created["spec"]["template"]["spec"]["metadata"]["labels"] == {"node-role.kubernetes.io/gpu": ""}
    assert "status" not in created

    client.writes = []
    result, failed = go(monkeypatch, client, source=SOURCE, instance_type="g4dn.xlarge")
    assert not failed and result["changed"] is False and client.writes == []
    assert result["machinesets"][0]["action"] == "unchanged"


def test_check_mode_writes_nothing_and_reports(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client, check=True, diff=True, all_workers=True, instance_type="g4dn.xlarge")
    assert not failed, result
    assert client.writes == []
    assert result["changed"] is True
    assert [i["action"] for i in result["machinesets"]] == ["created"] * 3
    assert sorted(diffs(result)) == [INFRA + "-gpu-us-east-2" + z for z in "abc"]
    assert diffs(result)[TARGET]["before"] == {}
    assert diffs(result)[TARGET]["after"]["metadata"]["name"] == TARGET


def test_update_with_diff(monkeypatch):
    client = cluster()
    go(monkeypatch, client, source=SOURCE, instance_type="g4dn.xlarge")
    client.writes = []
    result, failed = go(monkeypatch, client, diff=True, source=SOURCE, instance_type="g4dn.xlarge", replicas=2)
    assert not failed, result
    assert [w[:3] for w in client.writes] == [("patch", "MachineSet", TARGET)]
    assert result["machinesets"][0]["action"] == "updated" and result["machinesets"][0]["replicas"] == 2
    assert diffs(result)[TARGET]["before"] == {"spec": {"replicas": 1}}
    assert diffs(result)[TARGET]["after"] == {"spec": {"replicas": 2}}
    assert diffs(result)[TARGET]["before_header"] == "MachineSet openshift-machine-api/" + TARGET
    assert len(client.objects("MachineSet")) == 4  # updated, not duplicated


def test_absent_deletes_only_what_it_created(monkeypatch):
    client = cluster()
    go(monkeypatch, client, all_workers=True, instance_type="g4dn.xlarge")
    user_ms = aws_machineset("us-east-2a", instance_type="p3.2xlarge")  # cloned by hand, as the manual procedure does
    user_ms["metadata"]["name"] = "users-own-gpu"
    client.put(user_ms)
    client.writes = []
    result, failed = go(monkeypatch, client, state="absent", name="users-own-gpu")
    assert not failed and result["changed"] is False and client.writes == []
    assert result["machinesets"][0]["action"] == "skipped"
    result, failed = go(monkeypatch, client, state="absent", all_workers=True)
    assert not failed and result["changed"] is True
    assert sorted(w[2] for w in client.writes) == [INFRA + "-gpu-us-east-2" + z for z in "abc"]
    assert {w[0] for w in client.writes} == {"delete"}
    client.writes = []
    result, failed = go(monkeypatch, client, state="absent", all_workers=True)
    assert result["changed"] is False and client.writes == []


@pytest.mark.parametrize(
    "args,param,fragment",
    [
        (dict(source="nope", instance_type="g4dn.xlarge"), "source", SOURCE),
        (dict(source=SOURCE, instance_type="m5.2xlarge"), "instance_type", "has no GPU"),
        (dict(source=SOURCE, instance_type="p9.unknown"), "instance_type", "not a known aws GPU instance type"),
        (dict(source="vs-abc12-infra-us-east-2a", instance_type="g4dn.xlarge"), "source", "VSphereMachineProviderSpec"),
        (dict(all_workers=True, name="one", instance_type="g4dn.xlarge"), "name", "3 source MachineSets"),
        (dict(all_workers=True, name_pattern="{infra}-gpu", instance_type="g4dn.xlarge"), "name_pattern", "same name"),
        (dict(source=SOURCE, instance_type="g4dn.xlarge", node_labels={"Bad Key": "1"}), "node_labels", "Bad Key"),
        (dict(source=SOURCE, instance_type="g4dn.xlarge", wait=True, wait_timeout=1), "wait_timeout", "too small"),
        (dict(source=SOURCE, instance_type="g4dn.xlarge", replicas=-1), "replicas", "0 or more"),
        (
            dict(source=SOURCE, name="users-own-gpu", instance_type="g4dn.xlarge"),
            "name",
            "not created by gpuops.cluster",
        ),
        (dict(all_workers=True, zones=["eu-west-1a"], instance_type="g4dn.xlarge"), "zones", "us-east-2a"),
    ],
)
def test_bad_input_fails_naming_parameter_and_writes_nothing(monkeypatch, args, param, fragment):
    client = cluster()
    client.put(vsphere_machineset(role="infra"))
    user_ms = aws_machineset("us-east-2a", instance_type="p3.2xlarge")
    user_ms["metadata"]["name"] = "users-own-gpu"
    client.put(user_ms)
    result, failed = go(monkeypatch, client, **args)
    assert failed, result
    assert result["param"] == param and result["msg"].startswith(param + ":"), result["msg"]
    assert fragment in result["msg"]
    assert client.writes == []


def test_mutually_exclusive_source_and_all_workers(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client, source=SOURCE, all_workers=True, instance_type="g4dn.xlarge")
    assert failed and "mutually exclusive" in result["msg"] and client.writes == []


def test_cluster_without_machine_api(monkeypatch):
    client = FakeClient([], kinds={("Node", "v1"): False})
    result, failed = go(monkeypatch, client, source=SOURCE, instance_type="g4dn.xlarge")
    assert failed and "OpenShift Machine API" in result["msg"] and client.writes == []


def _machine_api(client, resource):
    """Simulated machine-api: Machines Running + Ready Nodes for every GPU MachineSet."""
    if resource.kind != "Machine":
        return
    for ms in client.objects("MachineSet"):
        name = ms["metadata"]["name"]
        if not M.is_managed(ms):
            continue
        for i in range(ms["spec"]["replicas"]):
            node = "{0}-node-{1}".format(name, i)
            client.put(
                {
                    "kind": "Machine",
                    "metadata": {
                        "name": "{0}-{1}".format(name, i),
                        "namespace": ms["metadata"]["namespace"],
                        "labels": {M.LABEL_MACHINESET: name},
                    },
                    "status": {"phase": "Running", "nodeRef": {"kind": "Node", "name": node}},
                }
            )
            client.put(
                {
                    "kind": "Node",
                    "metadata": {"name": node},
                    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
                }
            )


def test_wait_for_machines_and_nodes(monkeypatch):
    client = cluster()
    client.on_get = _machine_api
    result, failed = go(
        monkeypatch,
        client,
        source=SOURCE,
        instance_type="g4dn.xlarge",
        replicas=2,
        wait=True,
        wait_sleep=1,
        wait_timeout=10,
    )
    assert not failed, result
    assert result["progress"] and "2/2 Nodes Ready" in result["progress"][-1]


def test_wait_reports_failed_machine(monkeypatch):
    client = cluster()

    def failing(client_, resource):
        if resource.kind == "Machine":
            client_.put(
                {
                    "kind": "Machine",
                    "metadata": {
                        "name": TARGET + "-x",
                        "namespace": M.DEFAULT_NAMESPACE,
                        "labels": {M.LABEL_MACHINESET: TARGET},
                    },
                    "status": {"phase": "Failed", "errorMessage": "InsufficientInstanceCapacity in us-east-2a"},
                }
            )

    client.on_get = failing
    result, failed = go(
        monkeypatch, client, source=SOURCE, instance_type="g4dn.xlarge", wait=True, wait_sleep=1, wait_timeout=10
    )
    assert failed and "InsufficientInstanceCapacity" in result["msg"] and result["param"] == "instance_type"


def test_wait_timeout_reports_progress(monkeypatch):
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s import waiter

    class Clock(object):
        now = 0.0

        def monotonic(self):
            return self.now

        def sleep(self, seconds):
            self.now += seconds

    clock = Clock()
    monkeypatch.setattr(waiter, "time", clock)
    monkeypatch.setattr(kube, "time", clock)  # kube.wait_backoff's own looks
    client = cluster()
    result, failed = go(
        monkeypatch, client, source=SOURCE, instance_type="g4dn.xlarge", wait=True, wait_sleep=10, wait_timeout=30
    )
    assert failed and result["param"] == "wait_timeout"
    assert "timed out after 30s" in result["msg"] and "0/1 Machines Running" in result["msg"]
    assert result["progress"]


def test_unknown_type_allowed_with_warning(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client, source=SOURCE, instance_type="p9.future", allow_unknown_instance_type=True)
    assert not failed, result
    assert result["machinesets"][0]["gpu"]["source"] == "unchecked"
    assert any("p9.future" in w for w in result["warnings"])
    assert [w[:3] for w in client.writes] == [("create", "MachineSet", TARGET)]


def test_validate_instance_type_refused_off_aws(monkeypatch):
    client = FakeClient([azure_machineset("1")])
    result, failed = go(
        monkeypatch, client, all_workers=True, instance_type="Standard_NC4as_T4_v3", validate_instance_type=True
    )
    assert failed and result["param"] == "validate_instance_type" and "azure" in result["msg"]
    assert client.writes == []


def test_validate_instance_type_with_aws_api(monkeypatch):
    from moto import mock_aws

    with mock_aws():
        client = cluster()
        result, failed = go(
            monkeypatch, client, all_workers=True, instance_type="g5.xlarge", validate_instance_type=True, check=True
        )
        assert not failed, result
        assert {i["gpu"]["source"] for i in result["machinesets"]} == {"aws"}
        assert result["machinesets"][0]["gpu"]["gpu_model"] == "A10G"

        # moto's offering data: p3dn.24xlarge is only in us-east-1c/d
        east1 = FakeClient([aws_machineset(z) for z in ("us-east-1a", "us-east-1c")])
        result, failed = go(
            monkeypatch, east1, all_workers=True, instance_type="p3dn.24xlarge", validate_instance_type=True
        )
        assert failed and result["param"] == "instance_type" and "us-east-1a" in result["msg"]
        assert east1.writes == []


# ---------------------------------------------------------------- takeover of another source's GPU MachineSet


def infra_same_zone():
    """An infra MachineSet in the zone of SOURCE: the default pattern maps both to TARGET."""
    return aws_machineset("us-east-2a", role="infra")


def test_second_source_in_same_zone_is_refused_not_taken_over(monkeypatch):
    client = cluster()
    client.put(infra_same_zone())
    result, failed = go(monkeypatch, client, source=SOURCE, instance_type="g4dn.xlarge")
    assert not failed and result["machinesets"][0]["name"] == TARGET
    first = [o for o in client.objects("MachineSet") if o["metadata"]["name"] == TARGET][0]

    client.writes = []
    infra = INFRA + "-infra-us-east-2a"
    result, failed = go(monkeypatch, client, source=infra, instance_type="p3.2xlarge", replicas=0)
    assert failed, result
    assert result["param"] == "name_pattern" and result["msg"].startswith("name_pattern:")
    assert SOURCE in result["msg"] and infra in result["msg"] and TARGET in result["msg"]
    assert "{role}" in result["msg"]
    assert client.writes == []
    assert [o for o in client.objects("MachineSet") if o["metadata"]["name"] == TARGET][0] == first

    # deleting "the infra clone" must not delete the worker's one either
    result, failed = go(monkeypatch, client, state="absent", source=infra)
    assert failed and result["param"] == "name_pattern" and SOURCE in result["msg"] and client.writes == []

    # with a pattern that tells them apart, both live side by side
    result, failed = go(
        monkeypatch, client, source=infra, instance_type="p3.2xlarge", name_pattern="{infra}-gpu-{role}-{suffix}"
    )
    assert not failed, result
    assert [w[:3] for w in client.writes] == [("create", "MachineSet", INFRA + "-gpu-infra-us-east-2a")]
    assert [o for o in client.objects("MachineSet") if o["metadata"]["name"] == TARGET][0] == first


def test_same_zone_sources_in_one_run_fail_before_any_write(monkeypatch):
    client = cluster()
    extra = aws_machineset("us-east-2a")
    extra["metadata"]["name"] = INFRA + "-worker-large-us-east-2a"
    client.put(extra)
    result, failed = go(
        monkeypatch, client, all_workers=True, instance_type="g4dn.xlarge", name_pattern="{infra}-{zone}"
    )
    assert failed and result["param"] == "name_pattern"
    assert SOURCE in result["msg"] and extra["metadata"]["name"] in result["msg"]
    assert "{role}" in result["msg"] and "{source}" in result["msg"]
    assert client.writes == []


# ---------------------------------------------------------------- GCP: GPUs and onHostMaintenance


def gcp_cluster(**kw):
    return FakeClient([gcp_machineset(**kw)])


GCP_SOURCE = "gcpc-8kq2x-worker-a"
GCP_TARGET = "gcpc-8kq2x-gpu-a"


def gcp_value(client):
    ms = [o for o in client.objects("MachineSet") if o["metadata"]["name"] == GCP_TARGET][0]
    return ms["spec"]["template"]["spec"]["providerSpec"]["value"]


@pytest.mark.parametrize(
    "instance_type,extra",
    [
        ("a2-highgpu-1g", {}),
        ("a3-highgpu-8g", {}),
        ("g2-standard-4", {}),
        ("n1-standard-4", {"provider_spec": {"gpus": [{"count": 1, "type": "nvidia-tesla-t4"}]}}),
    ],
)
def test_gcp_gpu_types_get_terminate_when_source_migrates(monkeypatch, instance_type, extra):
    client = gcp_cluster(on_host_maintenance="Migrate")
    result, failed = go(monkeypatch, client, source=GCP_SOURCE, instance_type=instance_type, **extra)
    assert not failed, result
    assert gcp_value(client)["onHostMaintenance"] == "Terminate"
    notes = result["machinesets"][0]["notes"]
    assert len(notes) == 1 and "Terminate" in notes[0] and "Migrate" in notes[0]
    client.writes = []
    result, failed = go(monkeypatch, client, source=GCP_SOURCE, instance_type=instance_type, **extra)
    assert not failed and result["changed"] is False and client.writes == []


def test_gcp_source_without_setting_gets_terminate_and_one_with_it_no_note(monkeypatch):
    client = gcp_cluster()
    result, failed = go(monkeypatch, client, source=GCP_SOURCE, instance_type="g2-standard-8")
    assert not failed and gcp_value(client)["onHostMaintenance"] == "Terminate"
    assert result["machinesets"][0]["notes"]
    client = gcp_cluster(on_host_maintenance="Terminate")
    result, failed = go(monkeypatch, client, source=GCP_SOURCE, instance_type="g2-standard-8")
    assert not failed and result["machinesets"][0]["notes"] == []


@pytest.mark.parametrize(
    "args,fragments",
    [
        (
            dict(instance_type="a2-highgpu-1g", provider_spec={"onHostMaintenance": "Migrate"}),
            ["Migrate", "a2-highgpu-1g", "Terminate", "live-migrate"],
        ),
        (
            dict(
                instance_type="n1-standard-8",
                provider_spec={"guestAccelerators": [{"acceleratorCount": 1, "acceleratorType": "nvidia-tesla-t4"}]},
            ),
            ["guestAccelerators", "gpus", "nvidia-tesla-t4"],
        ),
        (dict(instance_type="n1-standard-4"), ["N1", "provider_spec.gpus", "nvidia-tesla-t4", "nvidia-tesla-v100"]),
        (dict(instance_type="n1-highmem-8"), ["N1", "provider_spec.gpus", "nvidia-tesla-t4"]),
    ],
)
def test_gcp_bad_gpu_setup_refused_with_the_reason(monkeypatch, args, fragments):
    client = gcp_cluster(on_host_maintenance="Migrate")
    result, failed = go(monkeypatch, client, source=GCP_SOURCE, **args)
    assert failed, result
    assert result["param"] == "provider_spec" and result["msg"].startswith("provider_spec:"), result["msg"]
    for fragment in fragments:
        assert fragment in result["msg"], result["msg"]
    assert client.writes == []


# ---------------------------------------------------------------- rules the argument spec holds


@pytest.mark.parametrize(
    "args,fragments",
    [
        (dict(source=SOURCE, instance_type="g4dn.xlarge", taints=[{"key": "k", "effect": "Sometimes"}]), ["effect"]),
        (dict(source=SOURCE, instance_type="g4dn.xlarge", taints=[{"effect": "NoSchedule"}]), ["key"]),
        (dict(source=SOURCE), ["instance_type", "state is present"]),
        (dict(source=SOURCE, instance_type="g4dn.xlarge", state="gone"), ["state", "present, absent"]),
    ],
)
def test_argument_spec_rules(monkeypatch, args, fragments):
    client = cluster()
    result, failed = go(monkeypatch, client, **args)
    assert failed, result
    for fragment in fragments:
        assert fragment in result["msg"], result["msg"]
    assert client.writes == [] and client.reads == 0


def test_wait_defaults(monkeypatch):
    spec = machineset_clone.argument_spec()
    assert spec["wait"]["default"] is False
    assert "default" not in spec["wait_timeout"] and spec["wait_sleep"]["default"] == 5
    client = cluster()
    client.on_get = _machine_api
    seen = {}
    real = runner.wait_machines

    def spy(client_, svc, namespace, want, timeout, sleep, progress, absent=False):
        seen.update(timeout=timeout, sleep=sleep)
        return real(client_, svc, namespace, want, timeout, 1, progress, absent)

    monkeypatch.setattr(runner, "wait_machines", spy)
    result, failed = go(monkeypatch, client, source=SOURCE, instance_type="g4dn.xlarge", wait=True)
    assert not failed, result
    assert seen == {"timeout": 900, "sleep": 5}


def test_scale_from_zero_annotations_of_the_gpu_type(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client, check=True, source=SOURCE, instance_type="g4dn.12xlarge")
    assert not failed and client.writes == []
    want = {
        "machine.openshift.io/vCPU": "48",
        "machine.openshift.io/memoryMb": "196608",
        "machine.openshift.io/GPU": "4",
    }
    assert result["machinesets"][0]["scale_from_zero"] == want
    result, failed = go(monkeypatch, client, source=SOURCE, instance_type="g4dn.12xlarge")
    assert not failed, result
    created = [o for o in client.objects("MachineSet") if o["metadata"]["name"] == TARGET][0]
    assert dict((k, created["metadata"]["annotations"][k]) for k in want) == want
