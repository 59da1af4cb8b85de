# -*- coding: utf-8 -*-
"""Scale-from-zero annotations of a GPU MachineSet: from the GPU instance type, never the source's GPU: "0"."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.machineset import capacity, clone, runner
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset import params as ms_params
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.providers import check_instance_type
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.machineset_fixtures import (
    aws_machineset,
    gcp_machineset,
)
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.test_machineset import params

GPU = "machine.openshift.io/GPU"
VCPU = "machine.openshift.io/vCPU"
MEM = "machine.openshift.io/memoryMb"


def plan(**kw):
    kw.setdefault("source", "x")
    return ms_params.validate_params(params(**kw))


def test_annotations_come_from_the_catalog_entry():
    gpu = check_instance_type("aws", "g5.xlarge", {})
    assert capacity.capacity_annotations("aws", "g5.xlarge", gpu) == ({VCPU: "4", MEM: "16384", GPU: "1"}, None)
    gpu = check_instance_type("aws", "p3.8xlarge", {})
    assert capacity.capacity_annotations("aws", "p3.8xlarge", gpu)[0] == {VCPU: "32", MEM: "249856", GPU: "4"}
    gpu = check_instance_type("azure", "Standard_NC24ads_A100_v4", {})
    assert capacity.capacity_annotations("azure", "Standard_NC24ads_A100_v4", gpu)[0][GPU] == "1"


def test_ec2_answer_wins_over_the_catalog():
    gpu = {"gpu_count": 8, "vcpu": 96, "memory_mib": 1000, "source": "aws"}
    assert capacity.capacity_annotations("aws", "p4d.24xlarge", gpu)[0] == {VCPU: "96", MEM: "1000", GPU: "8"}


def test_gcp_n1_with_attached_gpus_counts_the_attached_ones():
    value = {"gpus": [{"type": "nvidia-tesla-t4", "count": 2}], "onHostMaintenance": "Terminate"}
    gpu = check_instance_type("gcp", "n1-standard-4", value)
    annotations, note = capacity.capacity_annotations("gcp", "n1-standard-4", gpu)
    assert annotations == {VCPU: "4", MEM: "15360", GPU: "2"} and note is None


def test_unknown_type_sets_nothing_and_says_why():
    gpu = check_instance_type("aws", "g7.mystery", {}, allow_unknown=True)
    annotations, note = capacity.capacity_annotations("aws", "g7.mystery", gpu)
    assert annotations == {}
    assert "g7.mystery" in note and "GPU count" in note and "vCPU" in note


def test_update_keeps_controller_values_for_the_same_type_fills_missing_rewrites_on_type_change():
    desired = {VCPU: "4", MEM: "16384", GPU: "1", "other": "x"}
    existing = {VCPU: "4", MEM: "16000", GPU: "1"}  # the cloud's memory differs from the catalog's
    assert capacity.kept_on_update(existing, desired, False) == {}
    assert capacity.kept_on_update({VCPU: "4"}, desired, False) == {MEM: "16384", GPU: "1"}
    assert capacity.kept_on_update(existing, desired, True) == {VCPU: "4", MEM: "16384", GPU: "1"}


def _desired(instance_type, source=None):
    source = source or aws_machineset()
    p = plan(source=source["metadata"]["name"], instance_type=instance_type)
    return runner.plan_present(p, [source], {})[0]


def test_clone_of_a_worker_gets_the_gpu_values_not_gpu_zero():
    source = aws_machineset()
    assert source["metadata"]["annotations"][GPU] == "0"
    dummy, want, gpu, notes = _desired("g4dn.12xlarge", source)
    annotations = want["metadata"]["annotations"]
    assert (annotations[GPU], annotations[VCPU], annotations[MEM]) == ("4", "48", "196608")
    assert notes == []


def test_clone_without_capacity_annotations_drops_the_source_values():
    source = aws_machineset()
    p = plan(source=source["metadata"]["name"], instance_type="g5.xlarge", capacity_annotations=False)
    dummy, want, gpu, notes = runner.plan_present(p, [source], {})[0]
    assert not set(want["metadata"]["annotations"]) & set(capacity.CAPACITY_ANNOTATIONS)


def test_user_annotations_win():
    source = aws_machineset()
    p = plan(source=source["metadata"]["name"], instance_type="g5.xlarge", annotations={GPU: "2"})
    dummy, want, gpu, notes = runner.plan_present(p, [source], {})[0]
    assert want["metadata"]["annotations"][GPU] == "2" and want["metadata"]["annotations"][VCPU] == "4"


def test_gcp_clone_gets_annotations():
    source = gcp_machineset()
    p = plan(source=source["metadata"]["name"], instance_type="a2-highgpu-2g")
    dummy, want, gpu, notes = runner.plan_present(p, [source], {})[0]
    assert want["metadata"]["annotations"][GPU] == "2" and want["metadata"]["annotations"][VCPU] == "24"


def _server(obj, **annotations):
    out = copy.deepcopy(obj)
    out["metadata"].update(uid="u", resourceVersion="1")
    out["metadata"]["annotations"].update(annotations)
    return out


def test_update_patch_leaves_the_controllers_values_for_the_same_type():
    dummy, want, gpu, notes = _desired("g5.xlarge")
    existing = _server(want, **{MEM: "16000"})  # the AWS controller wrote the EC2 figure
    patch, dummy2 = clone.update_patch(existing, want)
    assert patch == {}


def test_update_patch_fills_in_missing_values():
    dummy, want, gpu, notes = _desired("g5.xlarge")
    existing = _server(want)
    del existing["metadata"]["annotations"][GPU]
    patch, dummy2 = clone.update_patch(existing, want)
    assert patch == {"metadata": {"annotations": {GPU: "1"}}}


def test_update_patch_rewrites_them_with_the_instance_type():
    dummy, old, gpu, notes = _desired("g5.xlarge")
    existing = _server(old)
    dummy, new, gpu, notes = _desired("p3.8xlarge")
    patch, predicted = clone.update_patch(existing, new)
    assert patch["metadata"]["annotations"] == {VCPU: "32", MEM: "249856", GPU: "4"}
    assert patch["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] == "p3.8xlarge"
    assert predicted["metadata"]["annotations"][GPU] == "4"
