# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The gpu_operator role's pure decisions: ClusterPolicy fields, InstallPlan approval, ClusterPolicy outcome."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import yaml

from ansible_collections.gpuops.cluster.plugins.module_utils import gpu_operator, olm

CHOICES = {
    "driver_repository": "nvcr.io/nvidia",
    "driver_version": "",
    "kernel_module_type": "auto",
    "time_slicing_replicas": 1,
    "time_slicing_config_map": "time-slicing-config",
    "mig_strategy": "single",
    "service_monitor": True,
    "metrics_config_map": "",
    "overrides": {},
}
# The ClusterPolicy of the v26.7.0 bundle's alm-examples, the fields the mapping touches (verbatim values).
EXAMPLE = {
    "apiVersion": "nvidia.com/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "gpu-cluster-policy"},
    "spec": {
        "operator": {"use_ocp_driver_toolkit": True},
        "driver": {"enabled": True, "kernelModuleType": "auto", "upgradePolicy": {"autoUpgrade": True}},
        "devicePlugin": {"enabled": True, "config": {"name": "", "default": ""}},
        "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": True}},
        "mig": {"strategy": "single"},
    },
}


def policy(**choices):
    fields = gpu_operator.cluster_policy(dict(CHOICES, **choices))
    return olm.alm_example([EXAMPLE], "ClusterPolicy", overrides={"spec": fields})


def test_defaults_keep_the_operators_driver_and_the_example():
    spec = policy()["spec"]
    assert "repository" not in spec["driver"] and "version" not in spec["driver"]
    assert spec["driver"]["upgradePolicy"] == {"autoUpgrade": True}  # untouched fields stay
    assert spec["devicePlugin"]["config"] == {"name": "", "default": ""}
    assert spec["operator"] == {"use_ocp_driver_toolkit": True}


def test_a_driver_version_sets_the_whole_image_triple():
    spec = policy(driver_version="580.126.20", driver_repository="mirror.example.com:5000/nvidia/")["spec"]
    assert {k: spec["driver"][k] for k in ("repository", "image", "version")} == {
        "repository": "mirror.example.com:5000/nvidia",
        "image": "driver",
        "version": "580.126.20",
    }


def test_time_slicing_writes_a_config_and_names_it():
    choices = dict(CHOICES, time_slicing_replicas=4)
    configs = gpu_operator.sharing_configs(choices)
    assert list(configs) == ["any"]
    assert configs["any"]["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    yaml.safe_dump(configs["any"])  # what the ConfigMap holds
    spec = policy(time_slicing_replicas=4)["spec"]
    assert spec["devicePlugin"]["config"] == {"name": "time-slicing-config", "default": "any"}
    assert gpu_operator.sharing_configs(CHOICES) == {}


def test_mig_monitoring_module_type_and_overrides_last():
    spec = policy(
        mig_strategy="mixed",
        service_monitor=False,
        kernel_module_type="open",
        overrides={"driver": {"kernelModuleType": "proprietary"}, "gds": {"enabled": True}, "mig": None},
    )["spec"]
    assert spec["driver"]["kernelModuleType"] == "proprietary"
    assert spec["gds"] == {"enabled": True} and "mig" not in spec
    assert spec["dcgmExporter"]["serviceMonitor"] == {"enabled": False}


def sub(plan="install-abcde", starting="gpu-operator-certified.v26.3.3"):
    return [{"spec": {"startingCSV": starting}, "status": {"installPlanRef": {"name": plan}}}]


def plan(name, csv, approved=False):
    return {"metadata": {"name": name}, "spec": {"approved": approved, "clusterServiceVersionNames": [csv]}}


def test_only_the_plan_of_the_pinned_csv_is_approved():
    plans = [plan("install-abcde", "gpu-operator-certified.v26.3.3")]
    assert gpu_operator.install_plan(sub(), plans) == {"approve": "install-abcde", "waiting": ""}
    assert gpu_operator.install_plan(sub(), [plan("install-abcde", "x", approved=True)])["approve"] == ""
    # The channel moved on: the plan is for a newer CSV; it waits, and the message says how to take it.
    newer = [plan("install-abcde", "gpu-operator-certified.v26.7.0")]
    decision = gpu_operator.install_plan(sub(), newer)
    assert decision["approve"] == "" and "gpu_operator_csv: gpu-operator-certified.v26.7.0" in decision["waiting"]
    # ... unless that CSV is the one asked for.
    assert gpu_operator.install_plan(sub(), newer, "gpu-operator-certified.v26.7.0")["approve"] == "install-abcde"
    assert gpu_operator.install_plan([], plans) == {"approve": "", "waiting": ""}


def cp(state, error=None, name="gpu-cluster-policy"):
    conditions = []
    if error:
        conditions.append({"type": "Error", "status": "True", "reason": error[0], "message": error[1]})
    else:
        conditions.append({"type": "Ready", "status": "True", "reason": "Reconciled", "message": "all reconciled"})
    return {"metadata": {"name": name}, "status": {"state": state, "conditions": conditions}}


def test_policy_outcome_quotes_the_operators_error():
    assert gpu_operator.policy_outcome([cp("ready")], "gpu-cluster-policy", 60)["ready"] is True
    failed = cp("notReady", ("OperandNotReady", "ClusterPolicy is not ready, states not ready: [state-driver]"))
    out = gpu_operator.policy_outcome([failed], "gpu-cluster-policy", 60)
    assert out["ready"] is False
    assert out["problem"] == (
        "gpu_operator: ClusterPolicy gpu-cluster-policy not ready after 60s (state notReady): OperandNotReady: "
        "ClusterPolicy is not ready, states not ready: [state-driver]"
    )
    assert (
        "another ClusterPolicy is older"
        in gpu_operator.policy_outcome([cp("ignored")], "gpu-cluster-policy", 60)["problem"]
    )
    bare = [{"metadata": {"name": "gpu-cluster-policy"}}]
    assert "is the operator running?" in gpu_operator.policy_outcome(bare, "gpu-cluster-policy", 60)["problem"]
    assert gpu_operator.policy_outcome([], "gpu-cluster-policy", 60, check_mode=True)["problem"] == ""


def test_manual_stack_is_found_by_the_owner_labels():
    def ds(ns, name, owner, manager="gpuops.cluster"):
        labels = {"app.kubernetes.io/managed-by": manager, "gpuops.cluster/owner": owner}
        return {"metadata": {"namespace": ns, "name": name, "labels": labels}}

    found = gpu_operator.manual_stack(
        [
            ds("nvidia-gpu-driver", "nvidia-driver-416-94", "driver"),
            ds("nvidia-gpu-driver", "nvidia-device-plugin", "device_plugin"),
            ds("openshift-nfd", "nfd-worker", "nfd"),  # NFD runs under both stacks
            ds("x", "y", "driver", manager="helm"),
        ]
    )
    assert found == ["nvidia-gpu-driver/nvidia-device-plugin", "nvidia-gpu-driver/nvidia-driver-416-94"]
    (msg,) = gpu_operator.manual_stack_problems([ds("nvidia-gpu-driver", "nvidia-driver-416-94", "driver")])
    assert "own GPU stack runs on this cluster (DaemonSet nvidia-gpu-driver/nvidia-driver-416-94)" in msg
    assert gpu_operator.manual_stack_problems([ds("openshift-nfd", "nfd-worker", "nfd")]) == []


def test_absent_objects_in_order_and_the_namespace_only_when_ours():
    names = {"namespace": "nvidia-gpu-operator", "subscription": "gpu-operator-certified",
             "operator_group": "nvidia-gpu-operator-group", "config_map": "time-slicing-config"}  # fmt: skip
    found = {
        "subscription": [{"status": {"installedCSV": "gpu-operator-certified.v26.3.3"}}],
        "csvs": [{"metadata": {"name": "gpu-operator-certified.v26.3.3"}}],
        "namespace": [{"metadata": {"labels": {"gpuops.cluster/owner": "gpu_operator"}}}],
    }
    kinds = [(o["kind"], o["metadata"]["name"]) for o in gpu_operator.absent_objects(found, names)]
    assert kinds == [
        ("Subscription", "gpu-operator-certified"),
        ("ClusterServiceVersion", "gpu-operator-certified.v26.3.3"),
        ("OperatorGroup", "nvidia-gpu-operator-group"),
        ("ConfigMap", "time-slicing-config"),
        ("Namespace", "nvidia-gpu-operator"),
    ]
    foreign = dict(found, namespace=[{"metadata": {"labels": {}}}])
    assert "Namespace" not in [o["kind"] for o in gpu_operator.absent_objects(foreign, names)]


def test_overrides_wrapped_in_spec_are_refused():
    assert gpu_operator.overrides_problems({"driver": {"enabled": True}}) == []
    (msg,) = gpu_operator.overrides_problems({"spec": {"driver": {}}})
    assert "gpu_operator_cluster_policy_overrides" in msg and "not a 'spec' key" in msg


def test_absent_objects_after_a_helm_release_skip_olm():
    names = {"namespace": "nvidia-gpu-operator", "subscription": "s", "operator_group": "g",
             "config_map": "time-slicing-config", "olm": False}  # fmt: skip
    found = {"namespace": [{"metadata": {"labels": {"gpuops.cluster/owner": "gpu_operator"}}}]}
    kinds = [o["kind"] for o in gpu_operator.absent_objects(found, names)]
    assert kinds == ["ConfigMap", "Namespace"]


def node(name, os_id, version):
    """A GPU node as preflight's nfd_labels read gives it."""
    return {"name": name, "os_release": {"ID": os_id, "VERSION_ID": version} if os_id else {}}


K8S = {"openshift": False, "driver_owner": "auto", "helm_values": {}, "overrides": {}}
MIXED = {"policies": [], "gpu_nodes": [node("gpu-0", "ubuntu", "22.04"), node("gpu-1", "ubuntu", "24.04")]}
SAME = {"policies": [], "gpu_nodes": [node("gpu-0", "ubuntu", "22.04"), node("gpu-2", "ubuntu", "22.04")]}


def test_os_tags_as_the_operator_builds_them():
    assert gpu_operator.os_tag(node("n", "rhel", "9.4")["os_release"]) == "rhel9"
    assert gpu_operator.os_tag(node("n", "ubuntu", "24.04")["os_release"]) == "ubuntu24.04"
    assert gpu_operator.os_tag({}) == ""
    assert gpu_operator.os_pools(MIXED["gpu_nodes"]) == {"ubuntu22.04": ["gpu-0"], "ubuntu24.04": ["gpu-1"]}


def test_helm_values_carry_the_choices_and_leave_nfd_to_the_collection():
    result = gpu_operator.plan(dict(CHOICES, driver_version="580.126.20", time_slicing_replicas=2), SAME, K8S)
    assert result["problems"] == [] and result["driver_crd"] is False
    values = result["chart_values"]
    assert values["nfd"] == {"enabled": False}
    assert values["driver"]["nvidiaDriverCRD"] == {"enabled": False, "deployDefaultCR": True}
    assert {k: values["driver"][k] for k in ("repository", "image", "version", "kernelModuleType")} == {
        "repository": "nvcr.io/nvidia", "image": "driver", "version": "580.126.20", "kernelModuleType": "auto"}  # fmt: skip
    assert values["devicePlugin"] == {"config": {"name": "time-slicing-config", "default": "any"}}
    assert values["mig"] == {"strategy": "single"} and values["dcgmExporter"] == {"serviceMonitor": {"enabled": True}}
    # The user's chart values last; a null stays null (Helm then drops the chart's default of that key).
    user = dict(K8S, helm_values={"toolkit": {"env": [{"name": "X", "value": "1"}]}, "mig": None})
    values = gpu_operator.plan(CHOICES, SAME, user)["chart_values"]
    assert values["toolkit"] == {"env": [{"name": "X", "value": "1"}]} and values["mig"] is None


def test_auto_uses_nvidia_driver_objects_for_mixed_os_on_a_first_install_only():
    assert gpu_operator.plan(CHOICES, MIXED, K8S)["driver_crd"] is True
    assert gpu_operator.plan(CHOICES, SAME, K8S)["driver_crd"] is False
    # An installed operator keeps its mode: no switch that would replace every driver pod at once.
    installed = dict(MIXED, policies=[{"spec": {"driver": {"useNvidiaDriverCRD": False}}}])
    result = gpu_operator.plan(CHOICES, installed, K8S)
    assert result["driver_crd"] is False
    (msg,) = result["problems"]
    assert "2 OS releases (ubuntu22.04: gpu-0; ubuntu24.04: gpu-1)" in msg
    assert "gpu_operator_driver_owner: nvidiadriver" in msg and "gpuops_stack: manual" in msg
    # Said explicitly, it is the user's choice.
    assert gpu_operator.plan(CHOICES, installed, dict(K8S, driver_owner="nvidiadriver"))["problems"] == []
    (msg,) = gpu_operator.plan(CHOICES, MIXED, dict(K8S, driver_owner="clusterpolicy"))["problems"]
    assert "OS releases" in msg


def test_platform_mismatched_inputs_are_refused():
    (msg,) = gpu_operator.plan(CHOICES, SAME, dict(K8S, overrides={"driver": {"enabled": True}}))["problems"]
    assert "gpu_operator_cluster_policy_overrides" in msg and "gpu_operator_helm_values" in msg
    (msg,) = gpu_operator.plan(CHOICES, SAME, dict(K8S, helm_values={"nfd": {"enabled": True}}))["problems"]
    assert "remove the nfd key" in msg
    ocp = dict(K8S, openshift=True, driver_owner="nvidiadriver", helm_values={"driver": {}})
    problems = gpu_operator.plan(CHOICES, SAME, ocp)["problems"]
    assert len(problems) == 2 and "gpu_operator_driver_owner nvidiadriver is for Kubernetes" in problems[0]
    assert "gpu_operator_helm_values are Helm chart values" in problems[1]
    assert gpu_operator.plan(CHOICES, MIXED, dict(K8S, openshift=True))["problems"] == []


def test_the_exporter_collects_the_collections_counters_through_a_config_map():
    spec = policy(metrics_config_map="dcgm-exporter-metrics")["spec"]
    assert spec["dcgmExporter"] == {
        "enabled": True,
        "serviceMonitor": {"enabled": True},
        "config": {"name": "dcgm-exporter-metrics"},
    }
    assert "config" not in policy()["spec"]["dcgmExporter"]
    values = gpu_operator.plan(dict(CHOICES, metrics_config_map="m"), SAME, K8S)["chart_values"]
    assert values["dcgmExporter"]["config"] == {"name": "m"}
    names = {"namespace": "ns", "subscription": "s", "operator_group": "g", "config_map": ["a", "", "b"], "olm": False}
    assert [o["metadata"]["name"] for o in gpu_operator.absent_objects({}, names)] == ["a", "b"]


def test_a_missing_counters_file_is_named():
    settings = dict(K8S, counters_csv="/nope.csv", counters_csv_found=False)
    (msg,) = gpu_operator.plan(CHOICES, SAME, settings)["problems"]
    assert "gpu_operator_exporter_counters_csv /nope.csv is not a file" in msg
    assert gpu_operator.plan(CHOICES, SAME, dict(settings, openshift=True))["problems"] == [msg]
    assert gpu_operator.plan(CHOICES, SAME, dict(settings, counters_csv=""))["problems"] == []
