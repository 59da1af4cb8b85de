# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the gpu_feature_discovery role, over module_utils/gpu_feature_discovery.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

_gfd = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.gpu_feature_discovery")

SETTINGS = (
    "namespace",
    "node_feature_api",
    "config_map",
    "config_default",
    "plugin_default",
    "cdi_enabled",
    "runtime_class",
)


def _list(value, what):
    if not isinstance(value, list):
        raise AnsibleFilterError("{0}: expects a list, got {1}".format(what, type(value).__name__))
    return value


def gpu_feature_discovery_inputs(node_feature_api, config_map, config_default):
    return _gfd.input_problems(node_feature_api, config_map, config_default)


def gpu_feature_discovery_plan(reads, nodes, settings, openshift, check_mode, gpu_labels):
    missing = [key for key in SETTINGS if key not in (settings or {})]
    if missing:
        raise AnsibleFilterError("gpu_feature_discovery_plan: settings lack {0}".format(", ".join(missing)))
    return _gfd.plan(
        None if reads is None else _list(reads, "gpu_feature_discovery_plan"),
        _list(nodes, "gpu_feature_discovery_plan"),
        settings,
        openshift,
        check_mode,
        gpu_labels,
    )


def gpu_feature_discovery_labels(nodes):
    return _gfd.label_summary(_list(nodes, "gpu_feature_discovery_labels"))


def gpu_feature_discovery_unlabelled(states, api, openshift, daemonset):
    return _gfd.unlabelled_lines(_list(states, "gpu_feature_discovery_unlabelled"), api, openshift, daemonset)


class FilterModule(object):
    def filters(self):
        return {
            "gpu_feature_discovery_inputs": gpu_feature_discovery_inputs,
            "gpu_feature_discovery_plan": gpu_feature_discovery_plan,
            "gpu_feature_discovery_labels": gpu_feature_discovery_labels,
            "gpu_feature_discovery_unlabelled": gpu_feature_discovery_unlabelled,
        }
