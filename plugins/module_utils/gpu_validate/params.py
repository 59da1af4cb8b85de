# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate parameters: the argument spec, and the checks it cannot express.

The spec carries the choices, types and the toleration suboptions; by hand
remain what needs a look at the value (names, image references, selectors,
report paths) or at another option (a check that needs a selector).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.args import (
    module_spec,
    node_selection_spec,
    wait_params,
    wait_spec,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.burnin import seconds as burnin_seconds
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    CHECKS,
    DEFAULT_CHECKS,
    DEFAULT_TOLERATIONS,
    GFD_COUNT,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.record import parse_record
from ansible_collections.gpuops.cluster.plugins.module_utils.reports import check_report_path
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import (
    check_dns_label,
    check_dns_subdomain,
    check_image,
    check_selector,
)

MIN_TIMEOUT = 10
DRIVER_VERSION_RE = re.compile(r"^[0-9]{3,4}(\.[0-9]{1,3}){0,2}$")
# The labels of the NVIDIA GPU Operator's pods (assets/state-*/*daemonset.yaml); the collection's roles label
# theirs the same way. Driver pods: the component label, which the operator's precompiled (per-kernel)
# DaemonSets keep while their app label changes.
DRIVER_SELECTOR = "app.kubernetes.io/component=nvidia-driver"
# Without driver_selector the driver pods are those of either selector (one label selector cannot OR two keys):
# the component label (the collection's driver role, GPU Operator v23.9 and later, also on its precompiled and
# OpenShift driver-toolkit DaemonSets) and the app label of every GPU Operator driver DaemonSet
# (assets/state-driver/0500_daemonset.yaml).
DRIVER_SELECTORS = (DRIVER_SELECTOR, "app=nvidia-driver-daemonset")
DEVICE_PLUGIN_SELECTOR = "app=nvidia-device-plugin-daemonset"
METRICS_SELECTOR = "app=nvidia-dcgm-exporter"
REPORTS = (("json", "report_json"), ("junit", "report_junit"), ("markdown", "report_markdown"))

TOLERATION_SPEC = dict(
    key=dict(type="str", no_log=False),
    operator=dict(type="str", choices=["Equal", "Exists"], default="Equal"),
    value=dict(type="str"),
    effect=dict(type="str", choices=["NoSchedule", "PreferNoSchedule", "NoExecute"]),
    tolerationSeconds=dict(type="int"),
)


# DCGM 4.6.0, the host engine image of the GPU Operator v26.7.0 (deployments/gpu-operator/values.yaml, dcgm:).
BURNIN_IMAGE = "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04"


def argument_spec():
    return module_spec(
        wait_spec(timeout_aliases=["timeout"], sleep_aliases=["poll_interval"]),
        node_selection_spec(names_aliases=["nodes"]),
        checks=dict(type="list", elements="str", choices=list(CHECKS), default=list(DEFAULT_CHECKS)),
        namespace=dict(type="str", default="nvidia-gpu-operator"),
        driver_namespace=dict(type="str"),
        driver_selector=dict(type="str"),
        device_plugin_selector=dict(type="str", default=DEVICE_PLUGIN_SELECTOR),
        expected_gpus=dict(type="int"),
        driver_version=dict(type="str"),
        vectoradd_image=dict(type="str", default="nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubi8"),
        nvidia_smi_image=dict(type="str", default="nvcr.io/nvidia/cuda:12.5.0-base-ubi8"),
        burnin_image=dict(type="str", default=BURNIN_IMAGE),
        burnin_level=dict(type="int", default=2, choices=[1, 2, 3, 4]),
        burnin_duration=dict(type="int", default=60),
        tolerations=dict(
            type="list",
            elements="dict",
            options=copy.deepcopy(TOLERATION_SPEC),
            required_if=[("operator", "Equal", ["key"])],
        ),
        pin=dict(type="str", default="affinity", choices=["affinity", "nodeName"]),
        run_as_user=dict(type="int"),
        service_account=dict(type="str"),
        priority_class_name=dict(type="str"),
        runtime_class_name=dict(type="str"),
        image_pull_secrets=dict(type="list", elements="str", no_log=False),
        parallel=dict(type="int", default=16),
        metrics_namespace=dict(type="str"),
        metrics_selector=dict(type="str", default=METRICS_SELECTOR),
        metrics_via=dict(type="str", default="pod", choices=["pod", "service"]),
        metrics_service=dict(type="str", default="nvidia-dcgm-exporter"),
        metrics_port=dict(type="int", default=9400),
        metrics_path=dict(type="str", default="/metrics"),
        report_json=dict(type="path"),
        report_junit=dict(type="path"),
        report_markdown=dict(type="path"),
        fail_on_error=dict(type="bool", default=True),
        settle_timeout=dict(type="int", default=0),
        previous_record=dict(type="dict"),
        record_config_map=dict(type="str"),
        record_definition=dict(type="dict"),
        force=dict(type="bool", default=False),
    )


def record_definition(definition, cfg):
    """record_definition: the record's ConfigMap (without data), checked against record_config_map and namespace."""
    if definition is None:
        return None
    meta = definition.get("metadata") or {}
    where = "{0}/{1}".format(cfg["namespace"], cfg["record_config_map"])
    if not cfg["record_config_map"]:
        raise GpuopsError(
            "needs record_config_map: the ConfigMap the record is read from is the one it is written to",
            param="record_definition",
        )
    if definition.get("kind") != "ConfigMap" or (definition.get("apiVersion") or "v1") != "v1":
        raise GpuopsError("must be a v1 ConfigMap (the record is its data)", param="record_definition")
    if meta.get("name") != cfg["record_config_map"] or (meta.get("namespace") or cfg["namespace"]) != cfg["namespace"]:
        raise GpuopsError(
            "names {0}/{1}, but the record is read from {2}: give the same ConfigMap".format(
                meta.get("namespace") or cfg["namespace"], meta.get("name"), where
            ),
            param="record_definition",
        )
    if "data" in definition:
        raise GpuopsError("must not hold data: the module writes the record there", param="record_definition")
    return dict(definition, metadata=dict(meta, namespace=cfg["namespace"]))


def tolerations_of(tolerations):
    """The pods' tolerations (the spec checked keys, operator and effect)."""
    if tolerations is None:
        return copy.deepcopy(DEFAULT_TOLERATIONS)
    for i, tol in enumerate(tolerations):
        if tol.get("operator") == "Exists" and tol.get("value"):
            raise GpuopsError(
                "entry {0}: operator Exists takes no value; drop value or use operator Equal".format(i),
                param="tolerations",
            )
    return [dict((k, v) for k, v in tol.items() if v is not None) for tol in tolerations]


def _checks(params):
    checks = params.get("checks")
    checks = list(DEFAULT_CHECKS if checks is None else checks)
    if not checks:
        raise GpuopsError("is empty; choose from {0}".format(", ".join(CHECKS)), param="checks")
    return [c for c in CHECKS if c in checks]


def _namespaces(params, cfg):
    cfg["namespace"] = check_dns_label(params.get("namespace"), "namespace", "namespace name")
    for key in ("driver_namespace", "metrics_namespace"):
        cfg[key] = check_dns_label(params.get(key) or cfg["namespace"], key, "namespace name")


def _node_names(params):
    names = params.get("node_names")
    if names is None:
        return None
    if not names:
        raise GpuopsError("is empty; list node names or leave it unset", param="node_names")
    for name in names:
        check_dns_subdomain(to_text(name), "node_names", "node name")
    return list(names)


def _selectors(params, cfg):
    for key in ("device_plugin_selector", "metrics_selector"):
        cfg[key] = check_selector(params.get(key), key)
    given = params.get("driver_selector")
    cfg["driver_selector"] = check_selector(given, "driver_selector") if given and to_text(given).strip() else None
    cfg["driver_selectors"] = [cfg["driver_selector"]] if cfg["driver_selector"] else list(DRIVER_SELECTORS)
    if "metrics" in cfg["checks"] and cfg["metrics_via"] == "pod" and not cfg["metrics_selector"]:
        raise GpuopsError(
            "is needed by the metrics check with metrics_via: pod (e.g. {0})".format(METRICS_SELECTOR),
            param="metrics_selector",
        )


# Checks that only read (no pod started), which settle_timeout may repeat.
READ_ONLY_CHECKS = ("allocatable", "driver")


def _wait(params, cfg):
    timeout, sleep = wait_params("gpu_validate", params)
    if params.get("wait_sleep") is not None:
        sleep = params["wait_sleep"]
    if timeout < MIN_TIMEOUT:
        raise GpuopsError(
            "{0}s is too short: a validation pod must be scheduled, pull its image and run; give at least {1} "
            "(300 is sensible on real clusters, where the CUDA image pull alone takes a minute)".format(
                timeout, MIN_TIMEOUT
            ),
            param="wait_timeout",
        )
    if sleep < 1 or sleep > timeout:
        raise GpuopsError("must be between 1 and wait_timeout ({0})".format(timeout), param="wait_sleep")
    cfg["wait_timeout"], cfg["wait_sleep"] = timeout, sleep


def _numbers(params, cfg):
    expected = params.get("expected_gpus")
    if expected is not None and expected < 1:
        raise GpuopsError(
            "must be 1 or more (or unset to read {0} from each node)".format(GFD_COUNT), param="expected_gpus"
        )
    cfg["expected_gpus"] = expected
    cfg["run_as_user"] = params.get("run_as_user")
    if cfg["run_as_user"] is not None and cfg["run_as_user"] < 1:
        raise GpuopsError("must be a non-root UID (1 or more); the pods run with runAsNonRoot", param="run_as_user")
    port = params.get("metrics_port")
    if port is None or not 1 <= port <= 65535:
        raise GpuopsError("must be a TCP port (1-65535)", param="metrics_port")
    cfg["metrics_port"] = port
    cfg["parallel"] = 16 if params.get("parallel") is None else params["parallel"]
    if not 1 <= cfg["parallel"] <= 100:
        raise GpuopsError("must be between 1 and 100", param="parallel")


def _pod_options(params, cfg):
    defaults = {"burnin_image": BURNIN_IMAGE}
    for key in ("vectoradd_image", "nvidia_smi_image", "burnin_image"):
        cfg[key] = check_image(to_text(params.get(key) or defaults.get(key, "")), key)
    cfg["tolerations"] = tolerations_of(params.get("tolerations"))
    cfg["pin"] = params.get("pin") or "affinity"
    for key in ("priority_class_name", "runtime_class_name", "service_account"):
        cfg[key] = check_dns_subdomain(params[key], key) if params.get(key) else None
    cfg["image_pull_secrets"] = list(params.get("image_pull_secrets") or [])
    version = params.get("driver_version")
    if version and not DRIVER_VERSION_RE.match(version):
        raise GpuopsError(
            "{0!r} is not a driver version such as 550.90.07 or branch 550".format(version), param="driver_version"
        )
    cfg["driver_version"] = version


def _metrics(params, cfg):
    cfg["metrics_path"] = "/" + to_text(params.get("metrics_path") or "/metrics").lstrip("/")
    cfg["metrics_via"] = params.get("metrics_via") or "pod"
    service = params.get("metrics_service")
    cfg["metrics_service"] = check_dns_label(service, "metrics_service", "service name") if service else None


def _burnin(params, cfg):
    """The burn-in's level and stress duration, and a wait long enough for them (before any pod is made)."""
    cfg["burnin_level"] = params.get("burnin_level") or 2
    cfg["burnin_duration"] = 60 if params.get("burnin_duration") is None else params["burnin_duration"]
    if not 10 <= cfg["burnin_duration"] <= 86400:
        raise GpuopsError(
            "must be between 10 and 86400 seconds (each of DCGM's stress tests runs this long at level 3 and 4)",
            param="burnin_duration",
        )
    if "burnin" not in cfg["checks"]:
        return
    others = [c for c in cfg["checks"] if c in ("vectoradd", "nvidia_smi")]
    if others and cfg.get("pin") == "nodeName":
        # All pods are made at once; bound past the scheduler, the kubelet would refuse whichever finds the GPUs
        # taken (OutOfnvidia.com/gpu). With affinity the scheduler holds the burn-in until the others finished.
        raise GpuopsError(
            "nodeName cannot run burnin with {0}: the burn-in takes every GPU of the node. Use pin: affinity (the "
            "default), or run burnin in a task of its own".format(", ".join(others)),
            param="pin",
        )
    need = burnin_seconds(cfg["burnin_level"], cfg["burnin_duration"])
    if cfg["wait_timeout"] < need + 60:
        raise GpuopsError(
            "{0}s is too short for a level {1} burn-in (about {2}s with burnin_duration {3}): give at least {4}".format(
                cfg["wait_timeout"], cfg["burnin_level"], need, cfg["burnin_duration"], need + 60
            ),
            param="wait_timeout",
        )


def validate_params(params):
    """Check every parameter before anything is read or written; return the config."""
    cfg = {"checks": _checks(params)}
    _namespaces(params, cfg)
    cfg["node_selector"] = dict((to_text(k), to_text(v)) for k, v in (params.get("node_selector") or {}).items())
    cfg["node_names"] = _node_names(params)
    _metrics(params, cfg)
    _selectors(params, cfg)
    _numbers(params, cfg)
    _pod_options(params, cfg)
    _wait(params, cfg)
    _burnin(params, cfg)
    cfg["fail_on_error"] = params.get("fail_on_error", True)
    cfg["settle_timeout"] = params.get("settle_timeout") or 0
    if cfg["settle_timeout"] < 0:
        raise GpuopsError("must be 0 (read once) or a number of seconds", param="settle_timeout")
    if cfg["settle_timeout"] and set(cfg["checks"]) - set(READ_ONLY_CHECKS):
        raise GpuopsError(
            "applies to the read-only checks ({0}) only: run the pod checks in a task of their own".format(
                ", ".join(READ_ONLY_CHECKS)
            ),
            param="settle_timeout",
        )
    previous = params.get("previous_record")
    cfg["previous_record"] = None if previous is None else parse_record(previous)
    cfg["record_config_map"] = params.get("record_config_map") or None
    if cfg["record_config_map"]:
        if previous is not None:
            raise GpuopsError(
                "and previous_record are mutually exclusive: give the record, or the ConfigMap that holds it",
                param="record_config_map",
            )
        check_dns_subdomain(cfg["record_config_map"], "record_config_map", "ConfigMap name")
    cfg["record_definition"] = record_definition(params.get("record_definition"), cfg)
    cfg["force"] = bool(params.get("force"))
    cfg["reports"] = {}
    for fmt, key in REPORTS:
        path = check_report_path(params.get(key), key)
        if path:
            cfg["reports"][fmt] = path
    return cfg
