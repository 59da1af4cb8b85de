# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import boto3
import pytest
from moto import mock_aws

from ansible_collections.gpuops.cluster.plugins.module_utils import kube
from ansible_collections.gpuops.cluster.plugins.module_utils.common import MANAGED_BY, MANAGED_BY_LABEL, GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset import (
    clone,
    model,
    names,
    providers,
    wait,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset import (
    ec2 as ms_ec2,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset import params as ms_params
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.machineset_fixtures import (
    INFRA,
    aws_machineset,
    azure_machineset,
    gcp_machineset,
    vsphere_machineset,
)

NS = "openshift-machine-api"


def params(**kw):
    base = {
        "state": "present",
        "namespace": NS,
        "source": None,
        "all_workers": False,
        "zones": None,
        "name": None,
        "name_pattern": names.DEFAULT_NAME_PATTERN,
        "instance_type": "p3.2xlarge",
        "replicas": 1,
        "node_labels": {"node-role.kubernetes.io/gpu": ""},
        "taints": None,
        "labels": None,
        "annotations": None,
        "provider_spec": None,
        "allow_unknown_instance_type": False,
        "validate_instance_type": False,
        "wait": False,
        "wait_timeout": 900,
        "wait_sleep": 10,
    }
    base.update(kw)
    return base


def plan(**kw):
    kw.setdefault("source", "x")
    return ms_params.validate_params(params(**kw))


# ---------------------------------------------------------------- provider detection


def test_detect_provider():
    assert model.detect_provider(aws_machineset()) == "aws"
    assert model.detect_provider(azure_machineset()) == "azure"
    assert model.detect_provider(gcp_machineset()) == "gcp"


def test_detect_provider_by_field_without_kind():
    ms = aws_machineset()
    del ms["spec"]["template"]["spec"]["providerSpec"]["value"]["kind"]
    assert model.detect_provider(ms) == "aws"


def test_unsupported_provider_names_source_and_kind():
    with pytest.raises(GpuopsError) as exc:
        model.detect_provider(vsphere_machineset())
    assert exc.value.param == "source"
    assert "VSphereMachineProviderSpec" in str(exc.value) and "AWS, Azure and GCP" in str(exc.value)


def test_describe_each_provider():
    assert model.describe(aws_machineset("us-east-2b")) == {
        "name": INFRA + "-worker-us-east-2b",
        "provider": "aws",
        "zone": "us-east-2b",
        "region": "us-east-2",
        "instance_type": "m5.2xlarge",
        "replicas": 1,
        "infra": INFRA,
        "role": "worker",
    }
    az = model.describe(azure_machineset("2"))
    assert (az["zone"], az["region"], az["instance_type"]) == ("2", "eastus", "Standard_D4s_v3")
    gcp = model.describe(gcp_machineset())
    assert (gcp["zone"], gcp["region"], gcp["instance_type"]) == ("us-central1-a", "us-central1", "n2-standard-4")


# ---------------------------------------------------------------- the clone (manual procedure)


def test_clone_matches_the_manual_edit():
    source = aws_machineset("us-east-2a")
    p = plan(source=source["metadata"]["name"], node_labels={})
    gpu = clone.clone(source, INFRA + "-gpu-us-east-2a", p)
    # what the manual edit changes: new name in metadata, selector and template labels, new instanceType, no status
    new = INFRA + "-gpu-us-east-2a"
    assert gpu["metadata"]["name"] == new
    assert gpu["spec"]["selector"]["matchLabels"][model.LABEL_MACHINESET] == new
    assert gpu["spec"]["template"]["metadata"]["labels"][model.LABEL_MACHINESET] == new
    assert gpu["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] == "p3.2xlarge"
    assert "status" not in gpu
    for key in ("uid", "resourceVersion", "creationTimestamp", "selfLink", "managedFields", "generation"):
        assert key not in gpu["metadata"]
    # everything else identical to the source
    expected = copy.deepcopy(source)
    del expected["status"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "selfLink", "managedFields", "generation"):
        del expected["metadata"][key]
    expected["metadata"]["name"] = new
    expected["metadata"]["labels"][MANAGED_BY_LABEL] = MANAGED_BY
    expected["metadata"]["annotations"] = {
        "team.example.com/owner": "platform",
        model.SOURCE_ANNOTATION: source["metadata"]["name"],
    }
    expected["spec"]["selector"]["matchLabels"][model.LABEL_MACHINESET] = new
    expected["spec"]["template"]["metadata"]["labels"][model.LABEL_MACHINESET] = new
    expected["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] = "p3.2xlarge"
    # the `creationTimestamp: null` entries oc prints are dropped (null = absent for the API server)
    del expected["spec"]["template"]["metadata"]["creationTimestamp"]
    del expected["spec"]["template"]["spec"]["metadata"]
    del expected["spec"]["template"]["spec"]["providerSpec"]["value"]["metadata"]
    assert gpu == expected


def test_prune():
    assert clone.prune({"a": None, "b": {"c": None}, "d": [{"e": None, "f": ""}], "g": 0, "h": []}) == {
        "d": [{"f": ""}],
        "g": 0,
        "h": [],
    }


def test_clone_does_not_touch_source():
    source = aws_machineset()
    before = copy.deepcopy(source)
    clone.clone(source, "x-gpu", plan(source="s"))
    assert source == before


def test_clone_drops_machine_api_annotations_keeps_others():
    gpu = clone.clone(aws_machineset(), "g", plan(annotations={"a.example.com/x": "1"}))
    assert gpu["metadata"]["annotations"] == {
        "team.example.com/owner": "platform",
        "a.example.com/x": "1",
        model.SOURCE_ANNOTATION: INFRA + "-worker-us-east-2a",
    }


def test_clone_replicas_labels_taints():
    p = plan(
        replicas=3,
        labels={"gpuops.io/pool": "a"},
        node_labels={"node-role.kubernetes.io/gpu": "", "gpuops.io/pool": True},
        taints=[{"key": "nvidia.com/gpu", "value": None, "effect": "NoSchedule"}],
    )
    gpu = clone.clone(aws_machineset(), "g", p)
    assert gpu["spec"]["replicas"] == 3
    assert gpu["metadata"]["labels"]["gpuops.io/pool"] == "a"
    assert gpu["spec"]["template"]["spec"]["metadata"]["labels"] == {
        "node-role.kubernetes.io/gpu": "",
        "gpuops.io/pool": "true",
    }
    assert gpu["spec"]["template"]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]


def test_clone_inherits_and_removes_source_node_labels_and_taints():
    source = aws_machineset()
    source["spec"]["template"]["spec"]["metadata"]["labels"] = {"keep": "1", "drop": "1"}
    source["spec"]["template"]["spec"]["taints"] = [{"key": "dedicated", "effect": "NoSchedule"}]
    gpu = clone.clone(source, "g", plan(node_labels={"drop": None}))
    assert gpu["spec"]["template"]["spec"]["metadata"]["labels"] == {"keep": "1"}
    assert gpu["spec"]["template"]["spec"]["taints"] == [{"key": "dedicated", "effect": "NoSchedule"}]
    gpu = clone.clone(source, "g", plan(node_labels={}, taints=[]))
    assert "taints" not in gpu["spec"]["template"]["spec"]


@pytest.mark.parametrize(
    "factory,field,itype",
    [
        (azure_machineset, "vmSize", "Standard_NC4as_T4_v3"),
        (gcp_machineset, "machineType", "a2-highgpu-1g"),
    ],
)
def test_clone_sets_provider_field(factory, field, itype):
    gpu = clone.clone(factory(), "g", plan(instance_type=itype))
    value = gpu["spec"]["template"]["spec"]["providerSpec"]["value"]
    assert value[field] == itype
    assert "instanceType" not in value


def test_clone_provider_spec_merge():
    p = plan(provider_spec={"blockDevices": [{"ebs": {"volumeSize": 500, "volumeType": "gp3"}}], "deviceIndex": None})
    value = clone.clone(aws_machineset(), "g", p)["spec"]["template"]["spec"]["providerSpec"]["value"]
    assert value["blockDevices"] == [{"ebs": {"volumeSize": 500, "volumeType": "gp3"}}]
    assert "deviceIndex" not in value and value["instanceType"] == "p3.2xlarge"


# ---------------------------------------------------------------- merge patch / update


def test_merge_patch_rfc7386():
    assert kube.merge_patch({"a": {"b": 1, "c": 2}, "l": [1]}, {"a": {"b": None, "d": 3}, "l": [2]}) == {
        "a": {"c": 2, "d": 3},
        "l": [2],
    }
    assert kube.create_merge_patch({"a": 1, "b": {"c": 1, "d": 2}}, {"a": 1, "b": {"c": 2}, "e": [1]}) == {
        "b": {"c": 2, "d": None},
        "e": [1],
    }


def _created(desired):
    """What the API server returns for a created clone: desired + server fields + controller annotations."""
    obj = copy.deepcopy(desired)
    obj["metadata"].update(
        uid="u1",
        resourceVersion="100",
        generation=1,
        creationTimestamp="2026-01-01T00:00:00Z",
        managedFields=[{"manager": "x"}],
    )
    obj["metadata"]["annotations"]["machine.openshift.io/GPU"] = "1"
    obj["spec"]["deletePolicy"] = "Random"  # a server-side default
    obj["status"] = {"replicas": 1, "readyReplicas": 1}
    return obj


def test_update_patch_empty_when_converged():
    desired = clone.clone(aws_machineset(), "g", plan())
    patch, predicted = clone.update_patch(_created(desired), desired)
    assert patch == {}
    assert predicted == _created(desired)


def test_update_patch_changes_only_what_differs():
    desired = clone.clone(aws_machineset(), "g", plan())
    existing = _created(desired)
    new = clone.clone(aws_machineset(), "g", plan(instance_type="g4dn.xlarge", replicas=2))
    patch, predicted = clone.update_patch(existing, new)
    assert patch == {
        "spec": {"replicas": 2, "template": {"spec": {"providerSpec": {"value": {"instanceType": "g4dn.xlarge"}}}}}
    }
    assert predicted["status"] == existing["status"] and predicted["spec"]["deletePolicy"] == "Random"


def test_update_patch_removes_node_labels_and_taints_it_owns():
    existing = _created(
        clone.clone(
            aws_machineset(),
            "g",
            plan(node_labels={"a": "1", "b": "1"}, taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
        )
    )
    new = clone.clone(aws_machineset(), "g", plan(node_labels={"a": "1"}, taints=[]))
    patch, predicted = clone.update_patch(existing, new)
    assert patch == {"spec": {"template": {"spec": {"metadata": {"labels": {"b": None}}, "taints": None}}}}
    assert predicted["spec"]["template"]["spec"]["metadata"]["labels"] == {"a": "1"}
    assert "taints" not in predicted["spec"]["template"]["spec"]


# ---------------------------------------------------------------- sources and names


def workers():
    return [aws_machineset(z) for z in ("us-east-2a", "us-east-2b", "us-east-2c")]


def test_select_source_by_name_and_missing_lists_existing():
    mss = workers()
    assert model.select_sources(mss, NS, source=INFRA + "-worker-us-east-2b") == [mss[1]]
    with pytest.raises(GpuopsError) as exc:
        model.select_sources(mss, NS, source="nope")
    assert exc.value.param == "source"
    for ms in mss:
        assert ms["metadata"]["name"] in str(exc.value)


def test_select_all_workers_skips_own_and_non_workers():
    mss = workers()
    mine = clone.clone(mss[0], INFRA + "-gpu-us-east-2a", plan())
    infra = aws_machineset("us-east-2a", role="infra")
    by_hand = aws_machineset("us-east-2a", instance_type="p3.2xlarge")  # the manual procedure's GPU clone
    by_hand["metadata"]["name"] = INFRA + "-gpu-manual"
    assert model.select_sources(mss + [mine, infra, by_hand], NS, all_workers=True) == mss


def test_select_all_workers_none_found():
    with pytest.raises(GpuopsError) as exc:
        model.select_sources([aws_machineset(role="infra")], NS, all_workers=True)
    assert exc.value.param == "all_workers" and "infra" in str(exc.value)


def test_select_zones():
    mss = workers()
    assert model.select_sources(mss, NS, all_workers=True, zones=["us-east-2c"]) == [mss[2]]
    with pytest.raises(GpuopsError) as exc:
        model.select_sources(mss, NS, all_workers=True, zones=["eu-west-1a"])
    assert exc.value.param == "zones" and "us-east-2b" in str(exc.value)


def test_select_refuses_own_clone_as_source():
    mine = clone.clone(aws_machineset(), "g", plan())
    with pytest.raises(GpuopsError) as exc:
        model.select_sources([mine], NS, source="g")
    assert exc.value.param == "source"


def test_default_name_pattern_reproduces_the_manual_name():
    assert (
        names.target_name(aws_machineset("us-east-2a"), names.DEFAULT_NAME_PATTERN, "p3.2xlarge")
        == "cluster-aus-9195-jg5lt-gpu-us-east-2a"
    )
    assert names.target_name(azure_machineset("3"), names.DEFAULT_NAME_PATTERN, "x") == "azc-4mzs2-gpu-eastus3"
    assert names.target_name(gcp_machineset("us-central1-c"), names.DEFAULT_NAME_PATTERN, "x") == "gcpc-8kq2x-gpu-c"


def test_name_pattern_placeholders():
    ms = aws_machineset("us-east-2b")
    assert names.target_name(ms, "{source}-gpu", "p3.2xlarge") == INFRA + "-worker-us-east-2b-gpu"
    assert names.target_name(ms, "{infra}-{instance_type}-{zone}", "p3.2xlarge") == INFRA + "-p3-2xlarge-us-east-2b"
    assert names.target_name(ms, "gpu-{region}-{role}", "x") == "gpu-us-east-2-worker"


def test_name_pattern_unknown_placeholder():
    with pytest.raises(GpuopsError) as exc:
        names.pattern_fields("{infra}-{az}")
    assert exc.value.param == "name_pattern" and "{az}" in str(exc.value) and "{zone}" in str(exc.value)
    with pytest.raises(GpuopsError):
        names.pattern_fields("{infra")


def test_name_pattern_missing_value():
    ms = aws_machineset()
    del ms["metadata"]["labels"][model.LABEL_CLUSTER]
    del ms["spec"]["template"]["metadata"]["labels"][model.LABEL_CLUSTER]
    with pytest.raises(GpuopsError) as exc:
        names.target_name(ms, "{infra}-gpu", "x")
    assert exc.value.param == "name_pattern" and "{infra}" in str(exc.value)


def test_target_names_collisions_and_limits():
    mss = workers()
    with pytest.raises(GpuopsError) as exc:
        names.target_names(mss, None, "{infra}-gpu", "p3.2xlarge")
    assert exc.value.param == "name_pattern" and "same name" in str(exc.value)
    with pytest.raises(GpuopsError) as exc:
        names.target_names(mss, "one-name", names.DEFAULT_NAME_PATTERN, "p3.2xlarge")
    assert exc.value.param == "name"
    with pytest.raises(GpuopsError) as exc:
        names.target_names(mss[:1], None, "{source}-{source}", "p3.2xlarge")
    assert exc.value.param == "name_pattern" and "63" in str(exc.value)
    with pytest.raises(GpuopsError) as exc:
        names.target_names(mss[:1], None, "{source}", "p3.2xlarge")
    assert "equals its source" in str(exc.value)
    assert [t for s, t in names.target_names(mss, None, names.DEFAULT_NAME_PATTERN, "x")] == [
        INFRA + "-gpu-us-east-2a",
        INFRA + "-gpu-us-east-2b",
        INFRA + "-gpu-us-east-2c",
    ]


@pytest.mark.parametrize(
    "name,ok",
    [
        ("gpu-a", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("GPU", False),
        ("a.b", False),
        ("-a", False),
        ("", False),
    ],
)
def test_name_problem(name, ok):
    assert (names.name_problem(name) is None) is ok


# ---------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    "kw,param,fragment",
    [
        (dict(source=None), "source", "all_workers"),
        (dict(instance_type=None), "instance_type", "required"),
        (dict(instance_type="  "), "instance_type", "required"),
        (dict(state="absent", source=None), "name", "state=absent needs"),
        (dict(name="Bad_Name"), "name", "lowercase"),
        (dict(name_pattern="{bad}"), "name_pattern", "unknown placeholder"),
        (dict(replicas=-1), "replicas", "0 or more"),
        (dict(node_labels={"bad key": "x"}), "node_labels", "bad key"),
        (dict(labels={"app.kubernetes.io/managed-by": "me"}), "labels", "marks the MachineSets"),
        (dict(labels={"a": None}), "labels", "has no value"),
        (dict(annotations={"bad key": "x"}), "annotations", "bad key"),
        (dict(taints=[{"key": "nvidia.com/gpu", "value": "x y", "effect": "NoSchedule"}]), "taints[0]", "x y"),
        (dict(taints=[{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "NoSchedule"}]), "taints", "twice"),
        (dict(provider_spec={"instanceType": "p3.2xlarge"}), "provider_spec", "instance_type"),
        (dict(wait=True, wait_timeout=5), "wait_timeout", "too small"),
        (dict(wait_sleep=0), "wait_sleep", "at least 1"),
    ],
)
def test_validate_params_errors(kw, param, fragment):
    kw.setdefault("source", "x")
    with pytest.raises(GpuopsError) as exc:
        ms_params.validate_params(params(**kw))
    assert exc.value.param == param
    assert fragment in str(exc.value)


def test_validate_params_absent_by_name_ok():
    p = ms_params.validate_params(params(state="absent", name="gpu-a", instance_type=None))
    assert p["state"] == "absent" and p["name"] == "gpu-a"


# ---------------------------------------------------------------- instance types


def test_check_instance_type_catalog():
    gpu = providers.check_instance_type("aws", "p3.2xlarge", {})
    assert gpu["gpu_count"] == 1 and gpu["gpu_model"] == "Tesla-V100-SXM2-16GB" and gpu["source"] == "catalog"
    assert providers.check_instance_type("azure", "standard_nc4as_t4_v3", {})["gpu_model"] == "Tesla-T4"


@pytest.mark.parametrize(
    "provider,itype", [("aws", "m5.2xlarge"), ("azure", "Standard_D4s_v3"), ("gcp", "n2-standard-4")]
)
def test_check_instance_type_refuses_known_non_gpu(provider, itype):
    with pytest.raises(GpuopsError) as exc:
        providers.check_instance_type(provider, itype, {}, allow_unknown=True)
    assert exc.value.param == "instance_type" and "has no GPU" in str(exc.value)


def test_check_instance_type_unknown():
    with pytest.raises(GpuopsError) as exc:
        providers.check_instance_type("aws", "p3.2xlarg", {})
    assert exc.value.param == "instance_type"
    assert "p3.2xlarge" in str(exc.value)  # suggestion
    assert "allow_unknown_instance_type" in str(exc.value)
    assert providers.check_instance_type("aws", "p9.mega", {}, allow_unknown=True)["source"] == "unchecked"
    validated = {"gpu_count": 4, "source": "aws"}
    assert providers.check_instance_type("aws", "p9.mega", {}, validated=validated) is validated


def test_gcp_attached_gpus():
    value = {"gpus": [{"type": "nvidia-tesla-t4", "count": 2}], "onHostMaintenance": "Terminate"}
    gpu = providers.check_instance_type("gcp", "n1-standard-4", value)
    assert gpu["gpu_count"] == 2 and gpu["source"] == "gcp-attached"
    with pytest.raises(GpuopsError) as exc:
        providers.check_instance_type("gcp", "n1-standard-4", {"gpus": [{"type": "nvidia-tesla-t4", "count": 1}]})
    assert exc.value.param == "provider_spec" and "Terminate" in str(exc.value)
    with pytest.raises(GpuopsError) as exc:
        providers.check_instance_type("gcp", "n2-standard-4", value)
    assert "only N1" in str(exc.value)
    with pytest.raises(GpuopsError):
        providers.check_instance_type(
            "gcp", "n1-standard-4", {"gpus": [{"type": "nvidia-a100"}], "onHostMaintenance": "Terminate"}
        )


@mock_aws
def test_aws_check_gpu_type_offered():
    ec2 = boto3.client("ec2", region_name="us-east-2")
    info = ms_ec2.aws_check(ec2, "g4dn.xlarge", ["us-east-2a", "us-east-2b"])
    assert info["gpu_count"] == 1 and info["gpu_model"] == "T4" and info["source"] == "aws"
    assert "us-east-2a" in info["offered_zones"]


@mock_aws
def test_aws_check_refuses_non_gpu_and_unknown():
    ec2 = boto3.client("ec2", region_name="us-east-2")
    with pytest.raises(GpuopsError) as exc:
        ms_ec2.aws_check(ec2, "m5.2xlarge", ["us-east-2a"])
    assert exc.value.param == "instance_type" and "no NVIDIA GPU" in str(exc.value)
    with pytest.raises(GpuopsError) as exc:
        ms_ec2.aws_check(ec2, "p9.doesnotexist", ["us-east-2a"])
    assert "does not exist in region us-east-2" in str(exc.value)


@mock_aws
def test_aws_check_zone_not_offered():
    # moto's offering data (from AWS) has p3dn.24xlarge in us-east-1c/d only
    ec2 = boto3.client("ec2", region_name="us-east-1")
    info = ms_ec2.aws_check(ec2, "p3dn.24xlarge", ["us-east-1c", "us-east-1d"])
    assert info["gpu_count"] == 8
    with pytest.raises(GpuopsError) as exc:
        ms_ec2.aws_check(ec2, "p3dn.24xlarge", ["us-east-1a", "us-east-1c"])
    msg = str(exc.value)
    assert exc.value.param == "instance_type" and "not offered in availability zone(s) us-east-1a " in msg
    assert "offered in: us-east-1c, us-east-1d" in msg


@mock_aws
def test_aws_validate_uses_region_of_each_machineset():
    p = {"instance_type": "g5.xlarge", "aws_profile": None, "aws_endpoint_url": None}
    info = ms_ec2.aws_validate(p, {"us-east-2": {"us-east-2a"}})
    assert info["gpu_model"] == "A10G"


def test_aws_validate_without_credentials(monkeypatch):
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(GpuopsError) as exc:
        ms_ec2.aws_validate({"instance_type": "g5.xlarge"}, {"us-east-2": {"us-east-2a"}})
    assert exc.value.param == "validate_instance_type" and "credentials" in str(exc.value)


# ---------------------------------------------------------------- waiting


def machine(name, ms, phase=None, node=None, deleting=False, error=None):
    m = {"metadata": {"name": name, "labels": {model.LABEL_MACHINESET: ms}}, "status": {}}
    if phase:
        m["status"]["phase"] = phase
    if node:
        m["status"]["nodeRef"] = {"kind": "Node", "name": node}
    if deleting:
        m["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if error:
        m["status"]["errorMessage"] = error
    return m


def test_machines_status_progression():
    want = {"g-a": 1, "g-b": 2}
    done, failed, msg = wait.machines_status(want, [], {})
    assert not done and not failed and "g-a: 0/1 Machines Running, 0/1 Nodes Ready" in msg
    machines = [
        machine("a1", "g-a", "Running", "n1"),
        machine("b1", "g-b", "Provisioning"),
        machine("b2", "g-b", "Running", "n3"),
    ]
    done, failed, msg = wait.machines_status(want, machines, {"n1": True, "n3": False})
    assert not done and "g-b: 1/2 Machines Running, 0/2 Nodes Ready" in msg
    machines[1] = machine("b1", "g-b", "Running", "n2")
    done, failed, msg = wait.machines_status(want, machines, {"n1": True, "n2": True, "n3": True})
    assert done and not failed


def test_machines_status_ignores_deleting_and_reports_failed():
    machines = [
        machine("a1", "g-a", "Running", "n1"),
        machine("a0", "g-a", "Running", "n0", deleting=True),
        machine("a2", "g-a", "Failed", error="InsufficientInstanceCapacity"),
    ]
    done, failed, msg = wait.machines_status({"g-a": 2}, machines, {"n1": True, "n0": True})
    assert not done and failed == [("a2", "InsufficientInstanceCapacity")]
    done, failed, msg = wait.machines_status({"g-a": 0}, [], {})
    assert done


def test_machines_gone():
    assert wait.machines_gone({"g"}, [machine("x", "other")])[0] is True
    gone, msg = wait.machines_gone({"g"}, [machine("g1", "g")])
    assert not gone and "g1" in msg


def test_failed_machine_names_error_reason_and_message():
    m = machine("a2", "g-a", "Failed", error="error launching instance: Invalid value 'x9.big' for InstanceType")
    m["status"]["errorReason"] = "InvalidConfiguration"
    done, failed, msg = wait.machines_status({"g-a": 1}, [m], {})
    assert failed == [("a2", "InvalidConfiguration: error launching instance: Invalid value 'x9.big' for InstanceType")]
