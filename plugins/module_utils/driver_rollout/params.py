# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_rollout's options, checked before anything is read or written."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.args import checked_params, module_spec, wait_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate import params as validate_params
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import CHECKS
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import check_dns_label, check_dns_subdomain

# GPU Operator ClusterPolicy driver.upgradePolicy defaults: podDeletion.timeoutSeconds 300, maxParallelUpgrades 1.
DRAIN_TIMEOUT = 300
# The driver's startup budget of the driver role (GPU Operator startup probe 60 s + 120 x 10 s).
WAIT_TIMEOUT = 1260
VALIDATE_CHECKS = ["allocatable", "driver", "vectoradd"]
# gpu_validate options the rollout sets itself: one node's driver pods, pinned to a cordoned node.
OWN_VALIDATE_OPTIONS = ("checks", "node_names", "node_selector", "namespace", "driver_namespace", "driver_selector",
                        "pin", "fail_on_error", "previous_record", "record_config_map", "force", "settle_timeout",
                        "report_json", "report_junit", "report_markdown")  # fmt: skip


def argument_spec():
    return module_spec(
        wait_spec(),
        namespace=dict(type="str", required=True),
        driver_selector=dict(type="str", default="app.kubernetes.io/component=nvidia-driver"),
        node_names=dict(type="list", elements="str"),
        max_unavailable=dict(type="raw", default=1),
        canary=dict(type="int", default=1),
        drain_timeout=dict(type="int", default=DRAIN_TIMEOUT),
        delete_after_timeout=dict(type="bool", default=False),
        validate=dict(type="bool", default=True),
        validate_checks=dict(type="list", elements="str", choices=list(CHECKS), default=list(VALIDATE_CHECKS)),
        validate_options=dict(type="dict", default={}),
        verify_checks=dict(type="list", elements="str", choices=list(CHECKS), default=[]),
        assume_outdated=dict(type="bool", default=False),
    )


def check_params(params):
    """The config, or a GpuopsError naming the option and the fix."""
    cfg = dict(params)
    check_dns_label(params["namespace"], "namespace", "namespace")
    for name in params.get("node_names") or []:
        check_dns_subdomain(name, "node_names", "node name")
    if params["canary"] < 0:
        raise GpuopsError("must be 0 (no canary) or the number of nodes rolled first, alone", param="canary")
    if params["drain_timeout"] < 1:
        raise GpuopsError("must be a number of seconds (1 or more): how long evictions may wait", param="drain_timeout")
    cfg["wait_timeout"] = WAIT_TIMEOUT if params.get("wait_timeout") is None else params["wait_timeout"]
    if cfg["wait_timeout"] < 10:
        raise GpuopsError(
            "must be at least 10 seconds: the time a node's new driver and operands have to become ready",
            param="wait_timeout",
        )
    if cfg["wait_sleep"] < 1:
        raise GpuopsError("must be at least 1 second", param="wait_sleep")
    own = sorted(set(params.get("validate_options") or {}) & set(OWN_VALIDATE_OPTIONS))
    if own:
        raise GpuopsError(
            "sets {0}, which the rollout sets itself (the node, its driver pods, pin nodeName); "
            "leave {1} out".format(", ".join(own), "it" if len(own) == 1 else "them"),
            param="validate_options",
        )
    unknown = sorted(set(params.get("validate_options") or {}) - set(validate_params.argument_spec()))
    if unknown:
        raise GpuopsError(
            "has {0}, not an option of gpuops.cluster.gpu_validate".format(", ".join(unknown)),
            param="validate_options",
        )
    if params["validate"] and not params["validate_checks"]:
        raise GpuopsError("is empty: list gpu_validate checks, or set validate: false", param="validate_checks")
    validation_params(cfg, ["node-check"])  # its errors now, before any write
    if params["verify_checks"]:
        verify_params(cfg, ["node-check"])
    return cfg


def validation_params(cfg, node_names, checks=None, pin="nodeName", checks_param="validate_checks"):
    """gpu_validate's parameters for the nodes of one wave (pinned by nodeName: they are cordoned): its argument
    spec (types, choices, defaults) over validate_options and the rollout's own settings, then gpu_validate's own
    rules."""
    params = dict(cfg.get("validate_options") or {})
    params.update(
        checks=list(cfg["validate_checks"] if checks is None else checks),
        node_names=list(node_names),
        namespace=cfg["namespace"],
        driver_namespace=cfg["namespace"],
        driver_selector=cfg["driver_selector"],
        pin=pin,
        fail_on_error=False,
    )
    params, errors = checked_params(validate_params.argument_spec(), params)
    if errors:
        raise GpuopsError(
            "{0} (as gpuops.cluster.gpu_validate reads it)".format("; ".join(errors)),
            param="validate_options",
        )
    try:
        validate_params.validate_params(params)
    except GpuopsError as exc:
        raise GpuopsError(
            "{0} (as gpuops.cluster.gpu_validate reads it)".format(exc),
            param=checks_param if exc.param == "checks" else "validate_options",
        )
    return params


def verify_params(cfg, node_names):
    """gpu_validate's parameters for verify_checks on every GPU node after the rollout: the nodes are back in
    service, so the pods are placed by node affinity, as gpu_validate places them by default."""
    return validation_params(cfg, node_names, cfg["verify_checks"], "affinity", "verify_checks")
