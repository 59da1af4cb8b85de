# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters of the nfd role: its checks, where OLM stands, and its messages (module_utils/nfd_role.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

nfd_role = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.nfd_role")


def _mapping(value, name):
    if not isinstance(value, dict):
        raise AnsibleFilterError("{0}: expects a dictionary, got {1}".format(name, type(value).__name__))
    return value


def nfd_input_problems(values, namespace, openshift, default_namespaces):
    return nfd_role.input_problems(_mapping(values, "nfd_input_problems"), namespace, openshift, default_namespaces)


def nfd_olm_inputs(found, channel, settings):
    return nfd_role.olm_inputs(_mapping(found, "nfd_olm_inputs"), channel, settings)


def nfd_olm_outcome(read, settings, channel, check_mode=False):
    return nfd_role.olm_outcome(_mapping(read, "nfd_olm_outcome"), settings, channel, check_mode)


def nfd_unlabelled(read, settings, expected, instance=""):
    return nfd_role.unlabelled(_mapping(read, "nfd_unlabelled"), settings, expected, instance)


def nfd_gpu_node_lines(result, expected_from):
    return nfd_role.gpu_node_lines(_mapping(result, "nfd_gpu_node_lines"), expected_from)


def nfd_expected_gpu_nodes(machinesets, configured, openshift):
    return nfd_role.expected_gpu_nodes(machinesets, configured, openshift)


class FilterModule(object):
    def filters(self):
        return {
            "nfd_input_problems": nfd_input_problems,
            "nfd_olm_inputs": nfd_olm_inputs,
            "nfd_olm_outcome": nfd_olm_outcome,
            "nfd_unlabelled": nfd_unlabelled,
            "nfd_gpu_node_lines": nfd_gpu_node_lines,
            "nfd_expected_gpu_nodes": nfd_expected_gpu_nodes,
        }
