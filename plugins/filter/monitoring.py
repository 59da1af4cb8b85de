# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the monitoring role (module_utils/monitoring.py): counters, RuntimeClass, inputs, failures, label owner."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

_monitoring = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.monitoring")


def monitoring_counter_metrics(text):
    if text is not None and not isinstance(text, str):
        raise AnsibleFilterError("monitoring_counter_metrics: expects the counters CSV as text")
    return _monitoring.counter_metrics(text)


def monitoring_runtime_class(gpu_nodes, runtime_class, cdi_enabled, openshift):
    if not isinstance(gpu_nodes, list):
        raise AnsibleFilterError("monitoring_runtime_class: expects the GPU nodes (nfd_labels) as a list")
    return _monitoring.exporter_runtime_class(gpu_nodes, runtime_class, bool(cdi_enabled), bool(openshift))


def monitoring_problems(values, metrics, alert_metrics, counters_found, namespace_missing=False):
    if not isinstance(values, dict):
        raise AnsibleFilterError("monitoring_problems: expects the role's variables as a dictionary")
    return _monitoring.monitoring_problems(
        values, list(metrics or []), list(alert_metrics or []), bool(counters_found), bool(namespace_missing)
    )


def monitoring_failures(not_ready, endpoint_nodes, gpu_nodes, metric_failures, namespace, service, port, app):
    if not isinstance(not_ready, list) or not isinstance(endpoint_nodes, list):
        raise AnsibleFilterError("monitoring_failures: expects operand_pods' not_ready and endpoint_nodes as lists")
    return _monitoring.monitoring_failures(
        not_ready, endpoint_nodes, list(gpu_nodes or []), list(metric_failures or []), namespace, service, port, app
    )


def monitoring_label_set_by(objects, manager, label):
    if not isinstance(objects, list):
        raise AnsibleFilterError("monitoring_label_set_by: expects the objects k8s_info read as a list")
    return bool(objects) and _monitoring.label_set_by(objects[0], manager, label)


class FilterModule(object):
    def filters(self):
        return {
            "monitoring_counter_metrics": monitoring_counter_metrics,
            "monitoring_runtime_class": monitoring_runtime_class,
            "monitoring_problems": monitoring_problems,
            "monitoring_failures": monitoring_failures,
            "monitoring_label_set_by": monitoring_label_set_by,
        }
