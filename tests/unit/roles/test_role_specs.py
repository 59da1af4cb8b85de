# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Every role's meta/argument_specs.yml documents exactly its defaults/main.yml (prometheus-community's check).

Also the role conventions the production profile cannot see: variables prefixed with the role name,
a type and description per option, the phase task files of a state role.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLES_DIR = os.path.join(ROOT, "roles")
ROLES = sorted(d for d in os.listdir(ROLES_DIR) if os.path.isdir(os.path.join(ROLES_DIR, d)))
# preflight is the detection state every role reuses; it has no objects to apply or remove.
PHASES = ("main", "preflight", "apply", "verify", "absent")
NO_PHASES = ("preflight",)


def load(role, *path):
    full = os.path.join(ROLES_DIR, role, *path)
    if not os.path.exists(full):
        return None
    with open(full) as f:
        return yaml.safe_load(f)


def templated(value):
    return isinstance(value, str) and "{{" in value


def test_roles_exist():
    assert "preflight" in ROLES


@pytest.mark.parametrize("role", ROLES)
def test_specs_and_defaults_have_the_same_keys(role):
    defaults = load(role, "defaults", "main.yml") or {}
    spec = (load(role, "meta", "argument_specs.yml") or {}).get("argument_specs", {}).get("main", {})
    options = spec.get("options") or {}
    assert sorted(set(defaults) - set(options)) == [], "defaults of {0} missing from argument_specs".format(role)
    assert sorted(set(options) - set(defaults)) == [], "argument_specs of {0} without a default".format(role)
    assert spec.get("short_description"), role


@pytest.mark.parametrize("role", ROLES)
def test_literal_defaults_match_the_spec(role):
    defaults = load(role, "defaults", "main.yml") or {}
    options = load(role, "meta", "argument_specs.yml")["argument_specs"]["main"].get("options") or {}
    wrong = {}
    for key, value in defaults.items():
        if templated(value):
            # A fallback to a collection-wide knob: the spec describes it instead of repeating it.
            continue
        if options[key].get("default") != value:
            wrong[key] = (value, options[key].get("default"))
    assert wrong == {}, "defaults/main.yml vs argument_specs default of {0}: {1}".format(role, wrong)


@pytest.mark.parametrize("role", ROLES)
def test_options_are_prefixed_typed_and_described(role):
    options = load(role, "meta", "argument_specs.yml")["argument_specs"]["main"].get("options") or {}
    for key, opt in options.items():
        assert key.startswith(role + "_"), "{0}: {1} lacks the role prefix".format(role, key)
        assert opt.get("type"), "{0}: {1} has no type".format(role, key)
        assert opt.get("description"), "{0}: {1} has no description".format(role, key)
        if opt.get("type") == "list":
            assert opt.get("elements"), "{0}: list {1} has no elements".format(role, key)


@pytest.mark.parametrize("role", [r for r in ROLES if r not in NO_PHASES])
def test_state_roles_have_every_phase(role):
    for phase in PHASES:
        assert os.path.exists(os.path.join(ROLES_DIR, role, "tasks", phase + ".yml")), "{0}: tasks/{1}.yml".format(
            role, phase
        )
    defaults = load(role, "defaults", "main.yml") or {}
    assert defaults.get(role + "_state") == "present", "{0}: {0}_state defaults to present".format(role)
    assert os.path.exists(os.path.join(ROLES_DIR, role, "README.md")), role
