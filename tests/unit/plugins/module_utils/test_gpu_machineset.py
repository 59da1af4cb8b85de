# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The gpu_machineset role's checks and summaries (module_utils/gpu_machineset.py; the filters are thin wrappers)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import gpu_machineset as gm

AWS = {"openshift": True, "cloud": "AWS", "openshift_version": "4.16.0"}
CLOUDS = ["AWS", "Azure", "GCP"]
T4 = {"gpu_count": 1, "gpu_model": "Tesla-T4"}
PARAM_VARS = {"instance_type": "gpu_machineset_instance_type", "name_pattern": "gpu_machineset_name_pattern"}


def values(**kw):
    out = {
        "gpu_machineset_state": "present",
        "gpu_machineset_namespace": "openshift-machine-api",
        "gpu_machineset_instance_type": "g4dn.xlarge",
        "gpu_machineset_replicas": 1,
        "gpu_machineset_zones": [],
        "gpu_machineset_zone_count": 1,
        "gpu_machineset_name_pattern": "{infra}-gpu-{suffix}",
        "gpu_machineset_accelerator": "",
        "gpu_machineset_autoscaling": False,
        "gpu_machineset_autoscaler_min": 1,
        "gpu_machineset_autoscaler_max": 2,
        "gpu_machineset_cluster_autoscaler": False,
        "gpu_machineset_cluster_autoscaler_gpus_min": 0,
        "gpu_machineset_cluster_autoscaler_gpus_max": 8,
    }
    out.update(kw)
    return out


def planned(zones=("us-east-2a", "us-east-2b", "us-east-2c"), gpu=None):
    gpu = T4 if gpu is None else gpu
    return {
        "machinesets": [
            {
                "name": "infra-gpu-" + z,
                "zone": z,
                "instance_type": "g4dn.xlarge",
                "replicas": 1,
                "gpu": gpu,
                "action": "created",
            }
            for z in zones
        ]
    }


def test_skip_reason():
    assert gm.skip_reason(AWS, CLOUDS) == ""
    assert gm.skip_reason({"openshift": False, "cloud": "none"}, CLOUDS).startswith(
        "plain Kubernetes has no OpenShift Machine API"
    )
    assert gm.skip_reason({"openshift": True, "cloud": "BareMetal"}, CLOUDS) == (
        "OpenShift on platform BareMetal has no cloud MachineSets machineset_clone can clone (AWS, Azure and GCP only);"
        " add GPU nodes by hand"
    )


def test_good_inputs_have_no_problem():
    assert gm.input_problems(values()) == []
    assert gm.input_problems(values(gpu_machineset_autoscaling=True, gpu_machineset_cluster_autoscaler=True)) == []


@pytest.mark.parametrize(
    "given, variable, fragment",
    [
        ({"gpu_machineset_instance_type": " "}, "gpu_machineset_instance_type", "must name a GPU instance type"),
        ({"gpu_machineset_zones": ["us-east-2a", " "]}, "gpu_machineset_zones", 'got ["us-east-2a", " "]'),
        ({"gpu_machineset_name_pattern": ""}, "gpu_machineset_name_pattern", "'{infra}-gpu-{suffix}'"),
        ({"gpu_machineset_accelerator": "nvidia.com/gpu"}, "gpu_machineset_accelerator", "label value"),
        ({"gpu_machineset_accelerator": "a" * 64}, "gpu_machineset_accelerator", "label value"),
        (
            {
                "gpu_machineset_autoscaling": True,
                "gpu_machineset_autoscaler_min": 3,
                "gpu_machineset_autoscaler_max": 2,
            },
            "gpu_machineset_autoscaler_min",
            "(3) is larger than gpu_machineset_autoscaler_max (2); the MachineAutoscaler needs minReplicas <= maxReplicas.",
        ),
        (
            {"gpu_machineset_autoscaling": True, "gpu_machineset_autoscaler_min": -1},
            "gpu_machineset_autoscaler_min",
            ">= 0",
        ),
        (
            {"gpu_machineset_autoscaling": True, "gpu_machineset_autoscaler_max": 0},
            "gpu_machineset_autoscaler_max",
            ">= 1",
        ),
        (
            {"gpu_machineset_autoscaling": True, "gpu_machineset_replicas": 5},
            "gpu_machineset_replicas",
            "outside the MachineAutoscaler range gpu_machineset_autoscaler_min..gpu_machineset_autoscaler_max (1..2)",
        ),
        (
            {"gpu_machineset_cluster_autoscaler": True, "gpu_machineset_cluster_autoscaler_gpus_max": 0},
            "gpu_machineset_cluster_autoscaler_gpus_max",
            "must be a whole number >= 1, got 0.",
        ),
        (
            {"gpu_machineset_cluster_autoscaler": True, "gpu_machineset_cluster_autoscaler_gpus_min": 9},
            "gpu_machineset_cluster_autoscaler_gpus_min",
            "(9) is larger than gpu_machineset_cluster_autoscaler_gpus_max (8).",
        ),
    ],
)
def test_each_bad_input_is_named(given, variable, fragment):
    got = gm.input_problems(values(**given))
    assert len(got) == 1 and got[0].startswith("gpu_machineset: " + variable) and fragment in got[0], got


def test_autoscaler_bounds_are_checked_only_with_autoscaling():
    assert gm.input_problems(values(gpu_machineset_autoscaler_min=3, gpu_machineset_replicas=5)) == []
    assert gm.input_problems(values(gpu_machineset_cluster_autoscaler_gpus_max=0)) == []


@pytest.mark.parametrize(
    "model, accelerator",
    [
        ("Tesla-T4", "nvidia-tesla-t4"),
        ("A10G", "nvidia-a10g"),
        ("NVIDIA-H100 80GB HBM3", "nvidia-h100-80gb-hbm3"),
        ("Tesla-V100-SXM2-16GB", "nvidia-tesla-v100-sxm2-16gb"),
        ("x" * 80 + ".-", "nvidia-" + "x" * 56),
        ("", "nvidia-gpu"),
        (None, "nvidia-gpu"),
    ],
)
def test_accelerator_of(model, accelerator):
    assert gm.accelerator_of(model) == accelerator


def test_plan_takes_the_first_zones_and_derives_the_accelerator():
    got = gm.plan(planned(), values(gpu_machineset_zone_count=2), PARAM_VARS)
    assert got["input_problems"] == [] and got["problems"] == []
    assert got["available_zones"] == ["us-east-2a", "us-east-2b", "us-east-2c"]
    assert got["zones"] == ["us-east-2a", "us-east-2b"]
    assert got["names"] == ["infra-gpu-us-east-2a", "infra-gpu-us-east-2b"]
    assert got["gpus_per_node"] == 1 and got["accelerator"] == "nvidia-tesla-t4"


def test_plan_takes_the_given_zones_and_accelerator():
    got = gm.plan(planned(), values(gpu_machineset_zones=[" us-east-2c"], gpu_machineset_accelerator="t4"), PARAM_VARS)
    assert got["zones"] == ["us-east-2c"] and got["names"] == ["infra-gpu-us-east-2c"] and got["accelerator"] == "t4"


def test_a_refused_clone_names_the_role_variable():
    refused = {"failed": True, "param": "name_pattern", "msg": "name_pattern: unknown placeholder {nope}"}
    got = gm.plan(refused, values(), PARAM_VARS)
    assert got["problems"] == ["gpu_machineset: gpu_machineset_name_pattern: unknown placeholder {nope}"]
    assert got["names"] == [] and got["accelerator"] == "nvidia-gpu"
    other = gm.plan({"msg": "no worker MachineSets"}, values(), PARAM_VARS)
    assert other["problems"] == ["gpu_machineset: gpu_machineset_instance_type: no worker MachineSets"]


def test_zones_the_workers_do_not_cover():
    got = gm.plan(planned(), values(gpu_machineset_zones=["mars-1a"]), PARAM_VARS)
    assert got["problems"] == [
        "gpu_machineset: gpu_machineset_zones: zone(s) mars-1a not found; the worker MachineSets in openshift-machine-api"
        " cover 3 zone(s): us-east-2a, us-east-2b, us-east-2c. Pick zones from that list."
    ]
    got = gm.plan(planned(), values(gpu_machineset_zone_count=4), PARAM_VARS)
    assert got["problems"][0].startswith("gpu_machineset: gpu_machineset_zone_count: 4 zones asked, but the worker")
    assert "cover 3 zone(s)" in got["problems"][0]


def test_a_foreign_cluster_autoscaler_is_refused():
    mine = {"metadata": {"name": "default", "labels": {"gpuops.cluster/owner": "gpu_machineset"}}}
    foreign = {"metadata": {"name": "default"}}
    asked = values(gpu_machineset_cluster_autoscaler=True)
    assert gm.plan(planned(), asked, PARAM_VARS, mine)["problems"] == []
    assert gm.plan(planned(), values(), PARAM_VARS, foreign)["problems"] == []
    got = gm.plan(planned(), asked, PARAM_VARS, foreign)["problems"]
    assert len(got) == 1 and got[0].startswith(
        "gpu_machineset: gpu_machineset_cluster_autoscaler: ClusterAutoscaler default"
    )
    assert "does not take it over" in got[0] and "[{type: nvidia-tesla-t4, min: 0, max: 8}]" in got[0]


def machine(name, ms, node=None, phase="Running", **status):
    st = dict(status, phase=phase)
    if node:
        st["nodeRef"] = {"name": node}
    return {"metadata": {"name": name, "labels": {gm.MACHINESET_LABEL: ms}}, "status": st}


def test_result_lists_the_nodes_per_machineset():
    sets = planned(("us-east-2a", "us-east-2b"))["machinesets"]
    machines = [
        machine("m2", "infra-gpu-us-east-2a", "node-b"),
        machine("m1", "infra-gpu-us-east-2a", "node-a"),
        machine("m3", "infra-gpu-us-east-2b", phase="Provisioning"),
    ]
    assert gm.result(sets, machines) == [
        {"name": "infra-gpu-us-east-2a", "zone": "us-east-2a", "instance_type": "g4dn.xlarge", "replicas": 1,
         "gpus_per_node": 1, "nodes": ["node-a", "node-b"]},
        {"name": "infra-gpu-us-east-2b", "zone": "us-east-2b", "instance_type": "g4dn.xlarge", "replicas": 1,
         "gpus_per_node": 1, "nodes": []},
    ]  # fmt: skip
    assert gm.result(planned(gpu={})["machinesets"], [])[0]["gpus_per_node"] is None


def test_lines():
    sets = planned(("us-east-2a",))["machinesets"]
    objects = [{"kind": "MachineAutoscaler", "name": "infra-gpu-us-east-2a", "action": "created"}]
    assert gm.lines(sets, objects, "nvidia-tesla-t4", taint=True, check_mode=True) == [
        "gpu_machineset: MachineSet infra-gpu-us-east-2a would be created (zone us-east-2a, g4dn.xlarge x1, 1 GPU(s)/node,"
        " cluster-api/accelerator=nvidia-tesla-t4, taint nvidia.com/gpu:NoSchedule)",
        "gpu_machineset: MachineAutoscaler infra-gpu-us-east-2a would be created",
    ]
    line = gm.lines(planned(("x",), gpu={})["machinesets"], [], "nvidia-gpu")[0]
    assert line.endswith("created (zone x, g4dn.xlarge x1, ? GPU(s)/node, cluster-api/accelerator=nvidia-gpu)"), line


def gpu_set(name="ms", replicas=1, gpu="1", labels=None):
    labels = {gm.GPU_ROLE_LABEL: "", gm.ACCELERATOR_LABEL: "nvidia-tesla-t4"} if labels is None else labels
    return {
        "metadata": {"name": name, "annotations": {gm.GPU_ANNOTATION: gpu}},
        "spec": {"replicas": replicas, "template": {"spec": {"metadata": {"labels": labels}}}},
    }


def node(name, ready="True", reason="KubeletReady", message="ok"):
    return {
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": ready, "reason": reason, "message": message}]},
    }


WANT = [{"name": "ms", "gpus_per_node": 1}]


def test_a_ready_machineset_has_no_problem():
    assert gm.verify_problems(WANT, [gpu_set()], [machine("m1", "ms", "n1")], [node("n1")], "nvidia-tesla-t4") == []


def test_verify_names_machineset_machine_node_and_cause():
    got = gm.verify_problems(
        WANT + [{"name": "gone", "gpus_per_node": None}],
        [gpu_set(replicas=4, gpu="0", labels={})],
        [
            machine("m1", "ms", "n1"),
            machine("m2", "ms", phase="Failed", errorReason="InvalidConfiguration", errorMessage="no such type"),
            machine("m3", "ms", "n3"),
            machine("m4", "ms", "n4"),
            machine("m5", "other", "n5"),
        ],
        [node("n1", "False", "KubeletNotReady", "Kubelet stopped posting node status."), node("n4")],
        "nvidia-tesla-t4",
    )
    assert got == [
        'MachineSet ms: annotation machine.openshift.io/GPU is "0", the instance type has 1 GPU(s): the cluster autoscaler'
        " cannot scale it from zero",
        "MachineSet ms: template node labels lack node-role.kubernetes.io/gpu or cluster-api/accelerator=nvidia-tesla-t4",
        "MachineSet ms: Machine m1: Node n1 NotReady (KubeletNotReady: Kubelet stopped posting node status.)",
        "MachineSet ms: Machine m2 phase Failed: InvalidConfiguration no such type",
        "MachineSet ms: Machine m3: Node n3 not found",
        "MachineSet gone: not found",
    ]


def test_verify_counts_machines_being_deleted_out():
    deleting = machine("m2", "ms", "n2")
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    got = gm.verify_problems(
        WANT, [gpu_set(replicas=2)], [machine("m1", "ms", "n1"), deleting], [node("n1"), node("n2")], "nvidia-tesla-t4"
    )
    assert got == ["MachineSet ms: 1 Machine(s), spec.replicas 2"]
    unreconciled = gm.verify_problems(
        WANT, [gpu_set()], [{"metadata": {"name": "m", "labels": {gm.MACHINESET_LABEL: "ms"}}}], [], "x"
    )
    assert "MachineSet ms: Machine m phase none (not yet reconciled)" in unreconciled
