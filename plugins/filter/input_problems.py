# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Filter input_problems: the role inputs that break their rule (module_utils/role_inputs.py), one message each."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

role_inputs = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.role_inputs")


def input_problems(rules, role, values):
    if not isinstance(rules, dict):
        raise AnsibleFilterError("input_problems: the rules must be a dictionary variable -> rule")
    values = list(values)
    if len(values) != len(rules):
        raise AnsibleFilterError(
            "input_problems: give one value per rule, in the rules' order (query('ansible.builtin.vars', *rules))"
        )
    try:
        return role_inputs.input_problems(role, rules, dict(zip(rules, values)))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"input_problems": input_problems}
