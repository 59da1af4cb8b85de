# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The gpu_validation role's input checks that no input rule covers (module_utils/role_inputs.py), in the words of
the role; the selectors and images as gpu_validate itself checks them (module_utils/validators.py). Pure: the filter
gpuops.cluster.gpu_validation_problems and the unit tests share it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils import validators
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.burnin import seconds as burnin_seconds

REPORT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
DRIVER_VERSION_RE = re.compile(r"^[0-9]{3,4}(\.[0-9]{1,3}){0,2}$")
SELECTORS = (
    ("gpu_validation_device_plugin_selector", "app=nvidia-device-plugin-daemonset"),
    ("gpu_validation_metrics_selector", "app=nvidia-dcgm-exporter"),
)


def _shown(value, limit=80):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _selector(value, allow_empty=False):
    if not isinstance(value, str):
        return False
    if value == "":
        return allow_empty
    try:
        validators.check_selector(value, "selector")
    except validators.GpuopsError:
        return False
    return True


def _image(value):
    return isinstance(value, str) and bool(validators.IMAGE_REF_RE.match(value))


def _text(value):
    return "" if value is None else str(value)


def _burnin_time(values, checks):
    """The burn-in must fit in gpu_validation_timeout (level and duration themselves are input rules)."""
    try:
        level = int(values.get("gpu_validation_burnin_level"))
        duration = int(values.get("gpu_validation_burnin_duration"))
        timeout = int(values.get("gpu_validation_timeout"))
    except (TypeError, ValueError):
        return []  # the input rules name a value that is not a number
    if not (isinstance(checks, list) and "burnin" in checks) or not 1 <= level <= 4:
        return []
    need = burnin_seconds(level, duration) + 60
    if timeout >= need:
        return []
    return [
        "gpu_validation: gpu_validation_timeout {0} is too short for a level {1} burn-in with "
        "gpu_validation_burnin_duration {2}: give at least {3}.".format(timeout, level, duration, need)
    ]


def gpu_validation_problems(values, all_checks):
    """One message per gpu_validation input that no input rule covers; ``values`` holds the role variables."""
    out = []
    checks = values.get("gpu_validation_checks")
    if not (isinstance(checks, list) and checks and all(c in all_checks for c in checks)):
        out.append(
            "gpu_validation: gpu_validation_checks must be a non-empty list of {0}, got {1}.".format(
                ", ".join(all_checks), _shown(checks)
            )
        )
    if not _selector(values.get("gpu_validation_driver_selector"), allow_empty=True):
        out.append(
            "gpu_validation: gpu_validation_driver_selector must be \"\" (the collection's and the GPU Operator's driver "
            "pods) or a label selector such as app.kubernetes.io/component=nvidia-driver."
        )
    for name, example in SELECTORS:
        if not _selector(values.get(name)):
            out.append("gpu_validation: {0} must be a label selector such as {1}.".format(name, example))
    reports_dir = values.get("gpu_validation_reports_dir")
    if not (isinstance(reports_dir, str) and reports_dir):
        out.append("gpu_validation: gpu_validation_reports_dir (gpuops_reports_dir) must be a directory path.")
    report_name = values.get("gpu_validation_report_name")
    if not (isinstance(report_name, str) and REPORT_NAME_RE.match(report_name)):
        out.append(
            "gpu_validation: gpu_validation_report_name must be a file base name (letters, digits, '.', '_', '-', no "
            "'/'), got {0}.".format(_shown(report_name))
        )
    for name in ("gpu_validation_vectoradd_image", "gpu_validation_nvidia_smi_image", "gpu_validation_burnin_image"):
        if not _image(values.get(name)):
            out.append(
                "gpu_validation: {0} must be an image reference, got {1}.".format(name, _shown(values.get(name)))
            )
    out.extend(_burnin_time(values, checks))
    version = _text(values.get("gpu_validation_driver_version"))
    if version and not DRIVER_VERSION_RE.match(version):
        out.append(
            "gpu_validation: gpu_validation_driver_version must be empty or a driver version such as 595.91.07 (or a "
            "branch such as 595), got {0}.".format(_shown(version, 40))
        )
    uid = _text(values.get("gpu_validation_run_as_user"))
    if not (uid == "auto" or (uid.isdigit() and int(uid) >= 1)):
        out.append(
            "gpu_validation: gpu_validation_run_as_user must be auto or a non-root UID (1 or more; the pods run with "
            "runAsNonRoot), got {0}.".format(_shown(uid, 40))
        )
    return out


def gpu_node_problems(gpu_nodes, expected, namespace, namespace_exists):
    """What the cluster lacks for a validation: GPU nodes labelled by NFD (at least one, ``expected`` when given), the
    GPU stack's namespace."""
    out = []
    expected = int(expected) if str(expected).strip().isdigit() else 0
    if not gpu_nodes or len(gpu_nodes) < expected:
        out.append(
            "gpu_validation: {0} GPU node(s) ({1}) carry an NFD NVIDIA PCI label{2}. Run the gpu_machineset, nfd and "
            "driver states first.".format(
                len(gpu_nodes),
                ", ".join(gpu_nodes) or "none",
                ", expected {0}".format(expected) if expected > 0 else "",
            )
        )
    if not namespace_exists:
        out.append(
            "gpu_validation: gpu_validation_namespace {0} does not exist, so the GPU stack is not deployed there: run "
            "the driver state first or set gpuops_gpu_namespace to the namespace of the operands.".format(namespace)
        )
    return out
