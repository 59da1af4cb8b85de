# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""machineset_clone parameters: what the argument spec cannot check, and the plan the runner works from.

The spec does types, choices, ``mutually_exclusive`` (source / all_workers),
``required_if`` (instance_type with state=present) and the taint suboptions.
Left here: rules on values (non-blank strings, at least / at most), label and
name syntax, and the rules that hang on a boolean being *true* (the spec
counts ``all_workers: false`` as given).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.args import wait_params
from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    GpuopsError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.model import (
    DEFAULT_NAMESPACE,
    PROVIDERS,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.names import (
    DEFAULT_NAME_PATTERN,
    name_problem,
    pattern_fields,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.providers import check_provider_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import (
    check_labels,
    label_key_problem,
    label_value_problem,
    normalize_label_value,
)

MIN_WAIT_TIMEOUT = 10


def check_taints(taints):
    """Normalized taints (key, value, effect) or GpuopsError naming the bad one.

    Types, the required key and the effect choices are the argument spec's.
    """
    if taints is None:
        return None
    result, seen = [], set()
    for index, taint in enumerate(taints):
        where = "taints[{0}]".format(index)
        key, effect = taint.get("key"), taint.get("effect")
        problem = label_key_problem(key)
        if problem:
            raise GpuopsError("invalid taint key '{0}': {1}.".format(key, problem), param=where)
        item = {"key": key, "effect": effect}
        value = taint.get("value")
        if value not in (None, ""):
            value = normalize_label_value(value)
            problem = label_value_problem(value)
            if problem:
                raise GpuopsError("invalid value for taint '{0}': {1}.".format(key, problem), param=where)
            item["value"] = value
        if (key, effect) in seen:
            raise GpuopsError("taint {0}:{1} is listed twice.".format(key, effect), param="taints")
        seen.add((key, effect))
        result.append(item)
    return result


def check_annotations(annotations):
    result = {}
    for key, value in (annotations or {}).items():
        problem = label_key_problem(key)
        if problem:
            raise GpuopsError("invalid annotation key '{0}': {1}.".format(key, problem), param="annotations")
        if value is None:
            raise GpuopsError("annotation '{0}' has no value; give a string.".format(key), param="annotations")
        result[key] = normalize_label_value(value)
    return result


def _check_selection(params):
    """Which sources / names: the rules that depend on all_workers being true."""
    source, all_workers, name = params.get("source"), params.get("all_workers"), params.get("name")
    if source is not None and not source.strip():
        raise GpuopsError("is empty; give the name of a worker MachineSet.", param="source")
    if params.get("state") == "absent":
        if not (source or all_workers or name):
            raise GpuopsError(
                "state=absent needs name, source or all_workers to know which GPU MachineSets to remove.",
                param="name",
            )
        return
    if not source and not all_workers:
        raise GpuopsError("give source (a MachineSet name) or all_workers=true.", param="source")
    instance_type = params.get("instance_type")
    if not instance_type or not instance_type.strip():
        raise GpuopsError(
            "is required with state=present (e.g. g4dn.xlarge, Standard_NC4as_T4_v3, a2-highgpu-1g).",
            param="instance_type",
        )


def _check_wait(params):
    """(timeout, sleep): sleep at least 1s; with wait, a timeout long enough for a machine to boot."""
    sleep = params.get("wait_sleep")
    if sleep is None or sleep < 1:
        raise GpuopsError("must be at least 1 second, got {0}.".format(sleep), param="wait_sleep")
    timeout, sleep = wait_params("machineset_clone", params)
    if params.get("wait") and timeout < max(sleep, MIN_WAIT_TIMEOUT):
        raise GpuopsError(
            "{0}s is too small: a cloud machine takes minutes to boot and join; give at least {1}s "
            "(900 is typical on AWS).".format(timeout, max(sleep, MIN_WAIT_TIMEOUT)),
            param="wait_timeout",
        )
    return timeout, sleep


def _check_metadata(params):
    labels = check_labels(params.get("labels"), "labels", allow_remove=False)
    if labels.get(MANAGED_BY_LABEL, MANAGED_BY) != MANAGED_BY:
        raise GpuopsError(
            "'{0}' marks the MachineSets this module owns; do not set it.".format(MANAGED_BY_LABEL), param="labels"
        )
    return {
        "labels": labels,
        "node_labels": check_labels(params.get("node_labels"), "node_labels", allow_remove=True),
        "annotations": check_annotations(params.get("annotations")),
        "taints": check_taints(params.get("taints")),
    }


def _check_provider_spec(provider_spec):
    for info in PROVIDERS.values():
        if info["field"] in provider_spec:
            raise GpuopsError(
                "sets {0}; give the instance type in instance_type instead.".format(info["field"]),
                param="provider_spec",
            )
    check_provider_spec(provider_spec)
    return provider_spec


def validate_params(params):
    """Everything that can be checked before talking to the API, as the plan the runner follows."""
    _check_selection(params)
    name = params.get("name")
    if name is not None:
        problem = name_problem(name)
        if problem:
            raise GpuopsError("{0}.".format(problem), param="name")
    pattern = params.get("name_pattern") or DEFAULT_NAME_PATTERN
    pattern_fields(pattern)
    replicas = params.get("replicas")
    if replicas is None or replicas < 0:
        raise GpuopsError("must be 0 or more, got {0}.".format(replicas), param="replicas")
    timeout, sleep = _check_wait(params)
    instance_type = params.get("instance_type")
    plan = {
        "state": params.get("state") or "present",
        "namespace": params.get("namespace") or DEFAULT_NAMESPACE,
        "source": params.get("source"),
        "all_workers": bool(params.get("all_workers")),
        "zones": params.get("zones") or None,
        "name": name,
        "name_pattern": pattern,
        "instance_type": instance_type.strip() if instance_type else None,
        "replicas": replicas,
        "provider_spec": _check_provider_spec(params.get("provider_spec") or {}),
        "allow_unknown": bool(params.get("allow_unknown_instance_type")),
        "validate": bool(params.get("validate_instance_type")),
        "aws_profile": params.get("aws_profile"),
        "aws_endpoint_url": params.get("aws_endpoint_url"),
        "capacity_annotations": params.get("capacity_annotations") is not False,
        "wait": bool(params.get("wait")),
        "wait_timeout": timeout,
        "wait_sleep": sleep,
    }
    plan.update(_check_metadata(params))
    return plan
