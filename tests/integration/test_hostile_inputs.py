# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Wrong values across the playbooks' variables, as people type them into an AWX survey or an inventory: each is
refused by its state's preflight before that state writes anything, with a message that names the variable and
says what it must be. One table, one playbook run (each case in a rescued block), the audit log read for writes,
server-side dry runs included; plus the playbook-level variables through site.yml itself."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from conftest import run_bad_inputs, run_site, task_results

pytestmark = pytest.mark.integration

NOT_A_PEM = "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n"
ENTITLED = {"entitlement_enabled": True, "entitlement_driver_build_mode": "entitlement"}
# What a refusal says besides the variable's name: what the value must be, or what to do instead.
FIX_WORDS = (
    "must",
    "one of",
    "is not",
    "not a ",
    "set ",
    "use ",
    "give ",
    "download",
    "needs",
    "instead",
    "remove",
    "unable to convert",
)

# (role, the wrong variables, the variable the message must name)
CASES = [
    # wrong types
    ("gpu_machineset", {"gpu_machineset_replicas": "three"}, "gpu_machineset_replicas"),
    ("nfd", {"nfd_wait_timeout": "soon"}, "nfd_wait_timeout"),
    ("device_plugin", {"device_plugin_time_slicing_replicas": "four"}, "device_plugin_time_slicing_replicas"),
    ("monitoring", {"monitoring_alert_gpu_temperature": "hot"}, "monitoring_alert_gpu_temperature"),
    ("gpu_validation", {"gpu_validation_metrics_port": "ninety"}, "gpu_validation_metrics_port"),
    ("container_toolkit", {"container_toolkit_cdi_enabled": "sometimes"}, "container_toolkit_cdi_enabled"),
    ("scheduling", {"scheduling_quotas": "team-a: 4"}, "scheduling_quotas"),
    ("gpu_operator", {"gpu_operator_cluster_policy_overrides": "driver: {enabled: false}"}, "gpu_operator_cluster_policy_overrides"),
    # out-of-range numbers
    ("gpu_machineset", {"gpu_machineset_replicas": -1}, "gpu_machineset_replicas"),
    ("device_plugin", {"device_plugin_time_slicing_replicas": 0}, "device_plugin_time_slicing_replicas"),
    ("container_toolkit", {"container_toolkit_wait_timeout": 0}, "container_toolkit_wait_timeout"),
    ("gpu_validation", {"gpu_validation_burnin_level": 7}, "gpu_validation_burnin_level"),
    ("scheduling", {"scheduling_priority_classes": [{"name": "too-high", "value": 2000000000}]}, "scheduling_priority_classes"),
    ("gpu_operator", {"gpu_operator_time_slicing_replicas": 0}, "gpu_operator_time_slicing_replicas"),
    # names that are not DNS names
    ("nfd", {"nfd_namespace": "NFD_Namespace"}, "nfd_namespace"),
    ("driver", {"driver_namespace": "GPU Driver"}, "driver_namespace"),
    ("device_plugin", {"device_plugin_config_map": "Plugin_Config"}, "device_plugin_config_map"),
    ("gpu_operator", {"gpu_operator_namespace": "GPU_Operator"}, "gpu_operator_namespace"),
    ("scheduling", {"scheduling_priority_classes": [{"name": "GPU High", "value": 1000}]}, "scheduling_priority_classes"),
    # registries with a scheme or a tag, and bad tags
    ("nfd", {"nfd_wait_timeout": 10, "nfd_wait_sleep": 30}, "nfd_wait_sleep"),
    ("driver", {"driver_image_registry": "quay.io/nvidia:v1"}, "driver_image_registry"),
    ("container_toolkit", {"container_toolkit_image_registry": "http://nvcr.io/nvidia"}, "container_toolkit_image_registry"),
    ("gpu_feature_discovery", {"gpu_feature_discovery_version": "v0.17.0 latest"}, "gpu_feature_discovery_version"),
    ("gpu_operator", {"gpu_operator_helm_repo_url": "helm.ngc.nvidia.com/nvidia"}, "gpu_operator_helm_repo_url"),
    # unknown states and choices
    ("gpu_machineset", {"gpu_machineset_state": "gone"}, "gpu_machineset_state"),
    ("driver", {"driver_build_mode": "magic"}, "driver_build_mode"),
    ("container_toolkit", {"container_toolkit_runtime": "docker"}, "container_toolkit_runtime"),
    ("device_plugin", {"device_plugin_mig_strategy": "all"}, "device_plugin_mig_strategy"),
    ("gpu_validation", {"gpu_validation_checks": ["vectoradd", "magic"]}, "gpu_validation_checks"),
    ("gpu_operator", {"gpu_operator_driver_owner": "both"}, "gpu_operator_driver_owner"),
    # paths, durations, keys
    ("container_toolkit", {"container_toolkit_driver_root": "run/nvidia/driver"}, "container_toolkit_driver_root"),
    ("gpu_feature_discovery", {"gpu_feature_discovery_sleep_interval": "sixty"}, "gpu_feature_discovery_sleep_interval"),
    ("monitoring", {"monitoring_counters_csv": "/no/such/counters.csv"}, "monitoring_counters_csv"),
    ("monitoring", {"monitoring_grafana_labels": {}}, "monitoring_grafana_labels"),
    ("monitoring", {"monitoring_node_selector": {"bad key!": "x"}}, "monitoring_node_selector"),
    # a taint without a valid effect, a taint key that is not a label key
    ("scheduling", {"scheduling_taint_effect": "NoRun"}, "scheduling_taint_effect"),
    ("scheduling", {"scheduling_taint_key": "nvidia.com/gpu!"}, "scheduling_taint_key"),
    # conflicting options, configs the upstream program would reject
    (
        "device_plugin",
        {"device_plugin_configs": {"a": {"version": "v1"}}, "device_plugin_default_config": "b"},
        "device_plugin_default_config",
    ),
    ("device_plugin", {"device_plugin_configs": {"a": {"version": "v2"}}, "device_plugin_default_config": "a"}, "device_plugin_configs"),
    ("scheduling", {"scheduling_quotas": [{"namespace": "default", "gpus": 2, "default_gpus": 2, "max_gpus": 1}]}, "max_gpus"),
    ("gpu_operator", {"gpu_operator_helm_values": {"driver": {}}}, "gpu_operator_helm_values"),
    # malformed PEM
    ("entitlement", dict(ENTITLED, entitlement_pem=NOT_A_PEM), "entitlement_pem"),
    ("entitlement", dict(ENTITLED, entitlement_pem_file="/no/such.pem"), "entitlement_pem_file"),
    # the platform's own
    ("preflight", {"preflight_min_kubernetes_minor": "twenty"}, "preflight_min_kubernetes_minor"),
]  # fmt: skip


def test_every_wrong_value_is_refused_by_name_before_any_write(cluster):
    assert len(CASES) >= 40
    mark = cluster.audit.mark()
    out, failures = run_bad_inputs(cluster, [(role, bad) for role, bad, dummy in CASES])
    writes = cluster.audit.writes_since(mark, include_dry_run=True)
    assert writes == [], ([(w["verb"], w["uri"]) for w in writes], [str(m)[:200] for dummy, m in failures])
    assert len(failures) == len(CASES), [m for dummy, m in failures]
    wrong = []
    for (role, bad, var), (task, msg) in zip(CASES, failures):
        text = str(msg)
        if var not in text or not any(word in text.lower() for word in FIX_WORDS):
            wrong.append((role, bad, task, text[:300]))
    assert wrong == [], json.dumps(wrong, indent=1)


@pytest.mark.parametrize(
    "extra, var",
    [
        ({"gpuops_stack": "helm"}, "gpuops_stack"),
        ({"gpuops_from_state": "drivers"}, "gpuops_from_state"),
        ({"gpuops_from_state": "driver", "gpuops_until_state": "nfd"}, "gpuops_from_state"),
    ],
    ids=["stack", "unknown-state", "states-reversed"],
)
def test_the_playbook_level_variables_are_refused_by_site_yml(cluster, extra, var):
    mark = cluster.audit.mark()
    out = run_site(cluster, extra_vars=extra, expect_rc=2)
    failed = [str(r.get("msg")) for dummy, r in task_results(out) if r.get("failed")]
    assert failed and var in failed[0], failed
    assert cluster.audit.writes_since(mark, include_dry_run=True) == []
