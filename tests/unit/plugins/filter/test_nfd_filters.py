# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The nfd role's filters as its tasks call them (in a subprocess, as test_timeline_filters.py explains); what they
decide is tested in tests/unit/plugins/module_utils/test_nfd_role.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from test_timeline_filters import template


def test_nfd_filters_load_and_answer():
    res = template(
        "{'inputs': {'nfd_namespace': '', 'nfd_expected_gpu_nodes': -1, 'nfd_wait_timeout': 600, 'nfd_wait_sleep': 5,"
        " 'nfd_image_registry': 'registry.k8s.io/nfd', 'nfd_image_name': 'node-feature-discovery',"
        " 'nfd_version': 'v0.19.0'} | gpuops.cluster.nfd_input_problems('node-feature-discovery', false, ['a', 'b']),"
        " 'olm': {} | gpuops.cluster.nfd_olm_inputs('', {'namespace': 'n', 'package': 'nfd',"
        " 'catalog_source': 'c', 'catalog_source_namespace': 'm'}),"
        " 'expected': [] | gpuops.cluster.nfd_expected_gpu_nodes(2, false),"
        " 'lines': {} | gpuops.cluster.nfd_gpu_node_lines('x')}"
    )
    msg = res["msg"]
    assert msg["inputs"][0].startswith("nfd: nfd_expected_gpu_nodes '-1' must be a whole number >= 0"), res
    assert msg["olm"]["problems"][0].startswith("nfd: nfd_catalog_source 'c' is not a CatalogSource in m"), res
    assert msg["expected"] == {"count": 2, "source": "nfd_expected_gpu_nodes"}, res
    assert msg["lines"] == ["nfd: 0 GPU node(s) labelled (expected None, from x); kernels: none"], res


def test_nfd_filters_refuse_what_is_not_a_dictionary():
    res = template("'x' | gpuops.cluster.nfd_unlabelled({}, {})")
    assert res.get("failed") and "nfd_unlabelled: expects a dictionary, got str" in res["msg"], res
