# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Role gpu_machineset on the simulated OpenShift 4.16 / AWS cluster (shared ``cluster`` fixture).

The tests run in file order and build on each other: check mode on the fresh
cluster, bad inputs, converge (1 zone x 1 replica with autoscaling objects),
the no-op re-run, autoscaling turned off (pruned, then no module run for it),
verify failures, absent twice. The module fixture removes
whatever is left at the end, so later test files find the cluster as it was.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from conftest import changed_tasks, failed_message, run_playbook, run_role, short_name, task_results

pytestmark = pytest.mark.integration

ROLE = "gpu_machineset"
NS = "openshift-machine-api"
MACHINE_API = ("machine.openshift.io", "v1beta1")
AUTOSCALING = "autoscaling.openshift.io"
OWNER = "gpuops.cluster/owner=gpu_machineset"
LABEL_MS = "machine.openshift.io/cluster-api-machineset"
INFRA = "gpuops-sim-8xk2q"
GPU_MS = INFRA + "-gpu-us-east-2a"
ACCEL = "nvidia-tesla-t4"  # g4dn.xlarge: Tesla-T4
SCALE_FROM_ZERO = {
    "machine.openshift.io/vCPU": "4",
    "machine.openshift.io/memoryMb": "16384",
    "machine.openshift.io/GPU": "1",
}
AUTOSCALE = {"gpu_machineset_autoscaling": True, "gpu_machineset_cluster_autoscaler": True}
PREFLIGHT_TASKS = (
    "Check gpu_machineset_state",
    "Check the role inputs",
    "Check the instance type, names and labels against the worker MachineSets",
    "Check the zones exist in the cluster",
    "Refuse to take over a ClusterAutoscaler gpuops did not create",
)
STATE_TASK = "Detect the platform and read the GPU nodes (once per run)"
AUTOSCALERS_TASK = "MachineAutoscalers and the ClusterAutoscaler"
AUTOSCALERS_REMOVAL = "Remove the MachineAutoscalers and the ClusterAutoscaler this role created"


def custom(cluster):
    from kubernetes import client

    return client.CustomObjectsApi(cluster.api)


def our_machinesets(cluster):
    return custom(cluster).list_namespaced_custom_object(*MACHINE_API, NS, "machinesets", label_selector=OWNER)["items"]


def machines_of(cluster, names):
    items = custom(cluster).list_namespaced_custom_object(*MACHINE_API, NS, "machines")["items"]
    return [m for m in items if (m["metadata"].get("labels") or {}).get(LABEL_MS) in names]


def node(cluster, name):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    try:
        return client.CoreV1Api(cluster.api).read_node(name).to_dict()
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def cluster_autoscaler(cluster):
    from kubernetes.client.rest import ApiException

    try:
        return custom(cluster).get_cluster_custom_object(AUTOSCALING, "v1", "clusterautoscalers", "default")
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def machine_autoscalers(cluster):
    return custom(cluster).list_namespaced_custom_object(AUTOSCALING, "v1beta1", NS, "machineautoscalers")["items"]


def result_of(out, task):
    return [res for name, res in task_results(out) if short_name(name) == task][-1]


def debug_lines(out, task="Say what the GPU MachineSet state did"):
    return result_of(out, task).get("msg")


def last_failure(out):
    """The message of the last task that failed (a rescue's own fail comes after the task it rescued)."""
    failed = [res.get("msg") for dummy, res in task_results(out) if res.get("failed")]
    return failed[-1] if failed else None


def assert_zero_writes(cluster, mark):
    writes = cluster.audit.writes_since(mark, include_dry_run=True)
    assert writes == [], writes


@pytest.fixture(scope="module", autouse=True)
def leave_cluster_as_found(cluster):
    """Whatever a failing test leaves behind goes at the end (GPU MachineSets, nodes, autoscaling objects)."""
    yield
    left = our_machinesets(cluster) or [m for m in machine_autoscalers(cluster) if "gpu" in m["metadata"]["name"]]
    ca = cluster_autoscaler(cluster)
    if left or (ca and (ca["metadata"].get("labels") or {}).get("gpuops.cluster/owner") == "gpu_machineset"):
        out = run_role(cluster, ROLE, {"gpu_machineset_state": "absent"})
        assert failed_message(out) is None, failed_message(out)
    if cluster_autoscaler(cluster) is not None:  # a hand-made one from a failed test
        custom(cluster).delete_cluster_custom_object(AUTOSCALING, "v1", "clusterautoscalers", "default")


def test_check_mode_on_a_fresh_cluster_writes_nothing_and_says_what_it_would_do(cluster):
    assert our_machinesets(cluster) == []
    mark = cluster.audit.mark()
    out = run_role(cluster, ROLE, AUTOSCALE, check=True)
    assert failed_message(out) is None, failed_message(out)
    assert_zero_writes(cluster, mark)
    lines = debug_lines(out)
    assert any(
        GPU_MS + " would be created" in line and "cluster-api/accelerator=" + ACCEL in line for line in lines
    ), lines
    assert "gpu_machineset: MachineAutoscaler {0} would be created".format(GPU_MS) in lines, lines
    assert "gpu_machineset: ClusterAutoscaler default would be created" in lines, lines
    # the clone would carry the GPU type's scale-from-zero annotations, not the worker's GPU: "0"
    clone = result_of(out, "Clone one GPU MachineSet per selected zone from the worker MachineSets")
    assert clone["machinesets"][0]["scale_from_zero"] == SCALE_FROM_ZERO
    assert our_machinesets(cluster) == [] and cluster_autoscaler(cluster) is None


BAD_INPUTS = [
    ("unknown_type", {"gpu_machineset_instance_type": "g9.mystery"}, "gpu_machineset_instance_type", "not a known"),
    ("zone_not_in_cluster", {"gpu_machineset_zones": ["mars-1a"]}, "gpu_machineset_zones", "us-east-2a"),
    ("negative_replicas", {"gpu_machineset_replicas": -1}, "gpu_machineset_replicas", ">= 0"),
    ("too_many_zones", {"gpu_machineset_zone_count": 4}, "gpu_machineset_zone_count", "cover 3 zone(s)"),
    (
        "autoscaler_min_above_max",
        {"gpu_machineset_autoscaling": True, "gpu_machineset_autoscaler_min": 3, "gpu_machineset_autoscaler_max": 2},
        "gpu_machineset_autoscaler_min",
        "minReplicas <= maxReplicas",
    ),
    (
        "replicas_outside_autoscaler_range",
        {"gpu_machineset_autoscaling": True, "gpu_machineset_replicas": 5},
        "gpu_machineset_replicas",
        "outside the MachineAutoscaler range",
    ),
    (
        "accelerator_not_a_label_value",
        {"gpu_machineset_accelerator": "nvidia.com/gpu"},
        "gpu_machineset_accelerator",
        "label value",
    ),
    (
        "name_pattern_placeholder",
        {"gpu_machineset_name_pattern": "{infra}-gpu-{nope}"},
        "gpu_machineset_name_pattern",
        "nope",
    ),
    ("namespace_invalid", {"gpu_machineset_namespace": "Machine_API"}, "gpu_machineset_namespace", "namespace name"),
    (
        "cluster_autoscaler_gpus_max_zero",
        {"gpu_machineset_cluster_autoscaler": True, "gpu_machineset_cluster_autoscaler_gpus_max": 0},
        "gpu_machineset_cluster_autoscaler_gpus_max",
        ">= 1",
    ),
    (
        "foreign_cluster_autoscaler",
        {"gpu_machineset_cluster_autoscaler": True},
        "gpu_machineset_cluster_autoscaler",
        "does not take it over",
    ),
]


def test_bad_inputs_fail_in_preflight_naming_the_variable_with_zero_writes(cluster):
    """One playbook, one block per bad input: each stops in preflight (rescue records where and why)."""
    tasks = []
    for case, role_vars, dummy, dummy2 in BAD_INPUTS:
        tasks.append(
            {
                "name": "case " + case,
                "block": [
                    {
                        "name": "role " + case,
                        "ansible.builtin.include_role": {"name": "gpuops.cluster." + ROLE},
                        "vars": role_vars,
                    }
                ],
                "rescue": [
                    {
                        "name": "outcome " + case,
                        "ansible.builtin.debug": {
                            "msg": "{{ {'task': ansible_failed_task.name, 'msg': ansible_failed_result.msg} | to_json }}"
                        },
                    }
                ],
            }
        )
    # a ClusterAutoscaler "default" made by someone else (foreign_cluster_autoscaler)
    custom(cluster).create_cluster_custom_object(
        AUTOSCALING,
        "v1",
        "clusterautoscalers",
        {"apiVersion": AUTOSCALING + "/v1", "kind": "ClusterAutoscaler", "metadata": {"name": "default"}, "spec": {}},
    )
    try:
        mark = cluster.audit.mark()
        out = run_playbook(cluster, tasks)
        assert_zero_writes(cluster, mark)
    finally:
        custom(cluster).delete_cluster_custom_object(AUTOSCALING, "v1", "clusterautoscalers", "default")
    outcomes = dict(
        (name[len("outcome ") :], json.loads(res["msg"]))
        for name, res in task_results(out)
        if name.startswith("outcome ") and not res.get("skipped")
    )
    for case, dummy, variable, fragment in BAD_INPUTS:
        assert case in outcomes, "case {0} did not fail: {1}".format(case, sorted(outcomes))
        got = outcomes[case]
        assert short_name(got["task"]) in PREFLIGHT_TASKS, (case, got)
        assert got["msg"].startswith("gpu_machineset: " + variable), (case, got["msg"])
        assert fragment in got["msg"], (case, got["msg"])
    assert our_machinesets(cluster) == []


def test_converge_one_zone_one_replica_with_autoscaling(cluster):
    out = run_role(cluster, ROLE, AUTOSCALE)
    assert failed_message(out) is None, failed_message(out)
    progress = result_of(out, "Show the progress of the machines")["msg"]
    assert any(GPU_MS + ": 1/1 Machines Running, 1/1 Nodes Ready" in line for line in progress), progress

    sets = our_machinesets(cluster)
    assert [m["metadata"]["name"] for m in sets] == [GPU_MS]
    ms = sets[0]
    assert ms["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuops.cluster"
    assert ms["spec"]["replicas"] == 1
    assert ms["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] == "g4dn.xlarge"
    labels = ms["spec"]["template"]["spec"]["metadata"]["labels"]
    assert labels == {"node-role.kubernetes.io/gpu": "", "cluster-api/accelerator": ACCEL}
    assert not ms["spec"]["template"]["spec"].get("taints")  # gpuops_gpu_taint defaults to false
    annotations = ms["metadata"]["annotations"]
    assert dict((k, annotations.get(k)) for k in SCALE_FROM_ZERO) == SCALE_FROM_ZERO

    facts = result_of(out, "Record the GPU MachineSets for later states")["ansible_facts"]["gpu_machineset_result"]
    assert len(facts) == 1 and len(facts[0]["nodes"]) == 1, facts
    assert dict((k, facts[0][k]) for k in ("name", "zone", "instance_type", "replicas", "gpus_per_node")) == {
        "name": GPU_MS,
        "zone": "us-east-2a",
        "instance_type": "g4dn.xlarge",
        "replicas": 1,
        "gpus_per_node": 1,
    }
    gpu_node = node(cluster, facts[0]["nodes"][0])
    assert gpu_node["metadata"]["labels"]["node-role.kubernetes.io/gpu"] == ""
    assert gpu_node["metadata"]["labels"]["cluster-api/accelerator"] == ACCEL
    assert [m["status"]["phase"] for m in machines_of(cluster, [GPU_MS])] == ["Running"]

    mas = [m for m in machine_autoscalers(cluster) if m["metadata"]["name"] == GPU_MS]
    assert len(mas) == 1
    assert (mas[0]["spec"]["minReplicas"], mas[0]["spec"]["maxReplicas"]) == (1, 2)
    assert mas[0]["spec"]["scaleTargetRef"] == {
        "apiVersion": "machine.openshift.io/v1beta1",
        "kind": "MachineSet",
        "name": GPU_MS,
    }
    ca = cluster_autoscaler(cluster)
    # resourceLimits.gpus type must equal the nodes' cluster-api/accelerator value
    assert ca["spec"]["resourceLimits"]["gpus"] == [{"type": ACCEL, "min": 0, "max": 8}]
    assert ca["metadata"]["labels"]["gpuops.cluster/owner"] == "gpu_machineset"


def test_rerun_changes_nothing_and_sends_no_write(cluster):
    mark = cluster.audit.mark()
    out = run_role(cluster, ROLE, AUTOSCALE)
    assert failed_message(out) is None, failed_message(out)
    assert changed_tasks(out) == []
    assert_zero_writes(cluster, mark)
    assert "ready" in result_of(out, "Check every GPU MachineSet has its Machines Running and Nodes Ready")["msg"]


def test_autoscaling_turned_off_prunes_its_objects_then_starts_no_autoscaler_task(cluster):
    """The plan reads this role's autoscaling objects: turned off, the apply prunes them; then, with none to apply
    and none to prune, its task is skipped (one module run fewer on every run without autoscaling)."""
    out = run_role(cluster, ROLE, {})
    assert failed_message(out) is None, failed_message(out)
    pruned = result_of(out, AUTOSCALERS_TASK)["pruned"]
    assert sorted((o["kind"], o["name"]) for o in pruned) == [
        ("ClusterAutoscaler", "default"),
        ("MachineAutoscaler", GPU_MS),
    ], pruned
    assert cluster_autoscaler(cluster) is None
    assert [m for m in machine_autoscalers(cluster) if m["metadata"]["name"] == GPU_MS] == []
    assert any("ClusterAutoscaler default deleted" in line for line in debug_lines(out)), debug_lines(out)

    mark = cluster.audit.mark()
    out = run_role(cluster, ROLE, {})
    assert failed_message(out) is None, failed_message(out)
    assert result_of(out, AUTOSCALERS_TASK).get("skipped"), result_of(out, AUTOSCALERS_TASK)
    assert changed_tasks(out) == []
    assert_zero_writes(cluster, mark)


def test_verify_names_the_machineset_machine_node_and_cause(cluster):
    from simopenshift import control

    machine = machines_of(cluster, [GPU_MS])[0]
    node_name = machine["status"]["nodeRef"]["name"]
    control.break_node(cluster.api, node_name, message="Kubelet stopped posting node status.")
    try:
        out = run_role(cluster, ROLE, dict(AUTOSCALE, gpu_machineset_wait=False))
        msg = failed_message(out)
        assert msg is not None
        assert msg.startswith("gpu_machineset: MachineSet " + GPU_MS), msg
        assert "Machine " + machine["metadata"]["name"] in msg and "Node " + node_name + " NotReady" in msg, msg
        assert "Kubelet stopped posting node status." in msg, msg
    finally:
        control.repair_node(cluster.api, node_name)
        control.wait_for(lambda: control.node_is_ready(cluster.api, node_name), 60, what="node repaired")


def test_a_machine_the_cloud_refuses_stops_the_run_with_its_error_reason(cluster):
    """An instance type the catalog does not know, allowed on purpose: the simulated AWS refuses it."""
    out = run_role(
        cluster,
        ROLE,
        {
            "gpu_machineset_instance_type": "g9.mystery",
            "gpu_machineset_allow_unknown_instance_type": True,
            "gpu_machineset_accelerator": "nvidia-mystery",
            "gpu_machineset_zones": ["us-east-2b"],
            "gpu_machineset_wait_timeout": 60,
        },
    )
    msg = last_failure(out)
    assert msg is not None and msg.startswith("gpu_machineset: "), msg
    assert INFRA + "-gpu-us-east-2b-" in msg and "InvalidConfiguration" in msg and "g9.mystery" in msg, msg
    # the GPU MachineSet of us-east-2a is still there (the run stopped before any pruning)
    assert sorted(m["metadata"]["name"] for m in our_machinesets(cluster)) == [GPU_MS, INFRA + "-gpu-us-east-2b"]


def test_absent_removes_everything_and_a_second_absent_changes_nothing(cluster):
    names = [m["metadata"]["name"] for m in our_machinesets(cluster)]
    nodes = [
        m["status"]["nodeRef"]["name"] for m in machines_of(cluster, names) if (m.get("status") or {}).get("nodeRef")
    ]
    assert names and nodes
    out = run_role(cluster, ROLE, {"gpu_machineset_state": "absent"})
    assert failed_message(out) is None, failed_message(out)
    assert our_machinesets(cluster) == [] and machines_of(cluster, names) == []
    assert [n for n in nodes if node(cluster, n) is not None] == []
    assert cluster_autoscaler(cluster) is None
    assert [m for m in machine_autoscalers(cluster) if m["metadata"]["name"] in names] == []
    # the worker MachineSets are untouched
    workers = custom(cluster).list_namespaced_custom_object(*MACHINE_API, NS, "machinesets")["items"]
    assert len(workers) == 3 and all("-worker-" in m["metadata"]["name"] for m in workers)

    mark = cluster.audit.mark()
    out = run_role(cluster, ROLE, {"gpu_machineset_state": "absent"})
    assert failed_message(out) is None, failed_message(out)
    assert changed_tasks(out) == []
    assert_zero_writes(cluster, mark)
    assert "nothing" in debug_lines(out, "Say what the absent state did")
    # Nothing of this role's left to prune: no module run for it.
    assert result_of(out, AUTOSCALERS_REMOVAL).get("skipped"), result_of(out, AUTOSCALERS_REMOVAL)


@pytest.mark.parametrize(
    "platform, reason",
    [
        ({"openshift": False, "cloud": "none"}, "plain Kubernetes has no OpenShift Machine API"),
        ({"openshift": True, "cloud": "BareMetal", "openshift_version": "4.16.0"}, "platform BareMetal"),
    ],
)
def test_skipped_with_one_line_where_there_is_nothing_to_clone(cluster, platform, reason):
    """The platform as preflight would have recorded it: one debug line, every other task skipped, no write."""
    mark = cluster.audit.mark()
    out = run_role(cluster, ROLE, {"preflight_platform": platform})
    assert failed_message(out) is None, failed_message(out)
    assert_zero_writes(cluster, mark)
    # What every state does first (the platform, the GPU nodes once per run: preflight's state.yml) is not this
    # role's work; gpu_machineset_state is checked by argument_specs.
    ran = [
        (short_name(name), res)
        for name, res in task_results(out)
        if not res.get("skipped")
        and name != "role under test"
        and short_name(name) != STATE_TASK
        and not name.startswith("gpuops.cluster.preflight : ")
        and not short_name(name).startswith("Validating arguments")
    ]
    assert [name for name, dummy in ran] == [
        "Decide whether GPU MachineSets apply to this cluster",
        "Say why the role is skipped",
    ], ran
    assert ran[-1][1]["msg"].startswith("gpu_machineset: skipped - ") and reason in ran[-1][1]["msg"]
