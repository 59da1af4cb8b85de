# -*- coding: utf-8 -*-
"""monitoring (module_utils of the role's filters): counters, the exporter's RuntimeClass, the inputs no rule covers,
why a GPU node is not monitored, and who set the namespace label."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.cluster.plugins.module_utils.monitoring import (
    counter_metrics,
    exporter_runtime_class,
    label_set_by,
    monitoring_failures,
    monitoring_problems,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.operand_pods import ready_endpoint_nodes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
ALERTS = ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"]
GOOD = {
    "monitoring_counters_csv": "/x/dcgm-counters.csv",
    "monitoring_grafana_labels": {"grafana_dashboard": "1"},
    "monitoring_alert_driver_daemonsets": "nvidia-driver-.*",
    "monitoring_namespace": "nvidia-gpu-driver",
}


def test_counter_metrics_skip_comments_blanks_and_labels():
    text = "# Format\n\nDCGM_FI_DEV_GPU_TEMP, gauge, t\n  DCGM_FI_DEV_XID_ERRORS ,gauge, x\nDCGM_FI_DRIVER_VERSION, label, v\n"
    assert counter_metrics(text) == ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS"]
    assert counter_metrics("") == [] and counter_metrics(None) == []


def test_the_role_counters_hold_every_alert_metric():
    with open(os.path.join(ROOT, "roles", "monitoring", "files", "dcgm-counters.csv")) as f:
        metrics = counter_metrics(f.read())
    assert set(ALERTS) <= set(metrics) and "DCGM_FI_PROF_SM_ACTIVE" not in metrics


def test_runtime_class_is_dropped_only_for_crio_without_cdi():
    crio = [{"name": "a", "gpu": True, "container_runtime": "cri-o://1.29.1"}]
    containerd = [{"name": "a", "gpu": True, "container_runtime": "containerd://1.7.2"}]
    unknown = [{"name": "a", "gpu": True, "container_runtime": None}]
    assert exporter_runtime_class(crio, "nvidia", True, True) == "nvidia"
    assert exporter_runtime_class(crio, "nvidia", False, False) == ""
    assert exporter_runtime_class(containerd, "nvidia", False, True) == "nvidia"
    # No runtime known: OpenShift means CRI-O.
    assert exporter_runtime_class(unknown, "nvidia", False, True) == ""
    assert exporter_runtime_class([], "nvidia", False, False) == "nvidia"
    # A node that is no GPU node does not count.
    assert exporter_runtime_class([dict(crio[0], gpu=False)], "nvidia", False, False) == "nvidia"


def test_good_inputs_have_no_problem():
    assert monitoring_problems(GOOD, ALERTS, ALERTS, True) == []


def test_each_bad_input_is_named():
    problems = monitoring_problems(
        dict(GOOD, monitoring_grafana_labels={}, monitoring_alert_driver_daemonsets='a"b'), ALERTS, ALERTS, True
    )
    assert problems == [
        "monitoring: monitoring_grafana_labels must be a non-empty dictionary (the Grafana sidecar's label selector, "
        'e.g. grafana_dashboard: "1").',
        "monitoring: monitoring_alert_driver_daemonsets must be a regular expression of driver DaemonSet names without "
        'double quotes, got a"b.',
    ]
    (missing,) = monitoring_problems(GOOD, [], ALERTS, False)
    assert missing == (
        "monitoring: monitoring_counters_csv must be a counters CSV file on the controller, got /x/dcgm-counters.csv "
        "(no such file)."
    )
    (few,) = monitoring_problems(GOOD, ALERTS[:1], ALERTS, True)
    assert few.startswith(
        "monitoring: monitoring_counters_csv /x/dcgm-counters.csv does not collect DCGM_FI_DEV_XID_ERRORS, "
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, which the alerts read"
    )
    (gone,) = monitoring_problems(GOOD, ALERTS, ALERTS, True, namespace_missing=True)
    assert gone.startswith("monitoring: monitoring_namespace nvidia-gpu-driver does not exist: the driver role")


def failures(not_ready=(), slices=(), gpu_nodes=("gpu-0", "gpu-1"), metric_failures=()):
    return monitoring_failures(
        list(not_ready),
        ready_endpoint_nodes(list(slices)),
        list(gpu_nodes),
        list(metric_failures),
        "nvidia-gpu-driver",
        "nvidia-dcgm-exporter",
        9400,
        "nvidia-dcgm-exporter",
    )


def endpoints(*nodes, **kwargs):
    ready = kwargs.get("ready", True)
    return {"endpoints": [{"nodeName": n, "conditions": {"ready": ready}} for n in nodes]}


def test_a_node_without_a_ready_pod_comes_first_with_its_cause():
    not_ready = [
        {"node": "gpu-0", "pod": None, "state": "no pod"},
        {"node": "gpu-1", "pod": "e-x", "state": "Running, not ready (restarts 0)"},
    ]
    assert failures(not_ready, [endpoints("gpu-0")], metric_failures=["gpu-0: no metrics"]) == [
        "monitoring: node gpu-0: no exporter pod (DaemonSet nvidia-dcgm-exporter does not select it: check its NFD GPU "
        "label, taints against monitoring_tolerations, monitoring_node_selector)",
        "monitoring: node gpu-1: pod e-x not ready: Running, not ready (restarts 0) (GET /health on :9400 fails)",
    ]
    (line,) = failures([{"node": "gpu-1", "pod": "e-y", "state": "ImagePullBackOff: x"}])
    assert line == "monitoring: node gpu-1: pod e-y not ready: ImagePullBackOff: x"


def test_then_a_node_without_a_ready_endpoint_then_metrics():
    (line,) = failures(slices=[endpoints("gpu-0"), endpoints("gpu-1", ready=False), {"endpoints": None}])
    assert line.startswith(
        "monitoring: Service nvidia-gpu-driver/nvidia-dcgm-exporter: no ready endpoint on GPU node(s) gpu-1"
    )
    assert line.endswith("check the Service selector app=nvidia-dcgm-exporter and the EndpointSlice controller.")
    both = [endpoints("gpu-0", "gpu-1")]
    assert failures(slices=both) == []
    assert failures(slices=both, metric_failures=["gpu-1: metrics a; b"]) == ["monitoring: node gpu-1: metrics a; b"]


def test_the_label_is_removed_only_when_the_role_set_it():
    def ns(*entries):
        return {"metadata": {"managedFields": list(entries)}}

    mine = {"manager": "me", "fieldsV1": {"f:metadata": {"f:labels": {"f:openshift.io/cluster-monitoring": {}}}}}
    other = dict(mine, manager="someone")
    assert label_set_by(ns(mine), "me", "openshift.io/cluster-monitoring")
    assert not label_set_by(ns(other), "me", "openshift.io/cluster-monitoring")
    assert not label_set_by(ns({"manager": "me", "fieldsV1": {"f:metadata": {"f:labels": {}}}}), "me", "x")
    assert not label_set_by({}, "me", "x") and not label_set_by(None, "me", "x")
