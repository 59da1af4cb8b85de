# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Jinja tests over the collection's input rules (module_utils/role_inputs.py): one rule, one place."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

role_inputs = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.role_inputs")


def _rule(name):
    # The rule is read when the test runs: ansible-core asks every test file for its tests to resolve any one.
    def test(value, **rule):
        return role_inputs.RULES[name][0](value, rule)

    return test


class TestModule(object):
    def tests(self):
        return {
            name: _rule(name)
            for name in ("dns_label", "dns_subdomain", "registry", "image", "tag", "host_path", "whole", "url")
        }
