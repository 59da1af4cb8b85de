# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filters over OLM objects that nfd and gpu_operator share: alm_example and alm_kinds (a custom resource from a CSV's
alm-examples, chosen by kind) and olm_steady (whether the OLM waits have nothing to do)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

olm = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.olm")


def alm_example(alm_examples, kind, overrides=None, namespace=None, api_group=None):
    try:
        return olm.alm_example(alm_examples, kind, overrides=overrides, namespace=namespace, api_group=api_group)
    except olm.AlmExampleError as exc:
        raise AnsibleFilterError("alm_example: {0}".format(exc))


def alm_kinds(alm_examples):
    try:
        return olm.example_kinds(alm_examples)
    except olm.AlmExampleError as exc:
        raise AnsibleFilterError("alm_kinds: {0}".format(exc))


def olm_steady(objects, installed, kind):
    if objects is not None and not isinstance(objects, list):
        raise AnsibleFilterError(
            "olm_steady: expects the objects of a k8s_ensure result (a list), got {0}".format(type(objects).__name__)
        )
    return olm.olm_steady(objects, installed, kind)


class FilterModule(object):
    def filters(self):
        return {"alm_example": alm_example, "alm_kinds": alm_kinds, "olm_steady": olm_steady}
