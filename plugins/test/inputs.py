# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Jinja tests over the collection's input rules (module_utils/role_inputs.py): one rule, one place."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import role_inputs


def _rule(name):
    check = role_inputs.RULES[name][0]
    return lambda value, **rule: check(value, rule)


class TestModule(object):
    def tests(self):
        return {
            name: _rule(name)
            for name in ("dns_label", "dns_subdomain", "registry", "image", "tag", "host_path", "whole", "url")
        }
