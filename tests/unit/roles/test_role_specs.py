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
import re

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLES_DIR = os.path.join(ROOT, "roles")
ROLES = sorted(d for d in os.listdir(ROLES_DIR) if os.path.isdir(os.path.join(ROLES_DIR, d)))
# preflight is the detection state every role reuses; it has no objects to apply or remove. rbac is run once, by a
# cluster admin, before any state: the identity the states run as.
PHASES = ("main", "preflight", "apply", "verify", "absent")
NO_PHASES = ("preflight", "rbac")


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


def _tasks(entries):
    """Tasks of a task file, a block's own tasks counted, the block itself not (it is structure, not work)."""
    count = 0
    for entry in entries or []:
        if isinstance(entry, dict) and "block" in entry:
            count += _tasks(entry["block"]) + _tasks(entry.get("rescue")) + _tasks(entry.get("always"))
        elif isinstance(entry, dict):
            count += 1
    return count


def _files(pattern_dirs, suffix=".yml"):
    for top in pattern_dirs:
        for base, dummy, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith(suffix):
                    yield os.path.join(base, name)


def test_roles_are_short_pages():
    """Issue 18's gates: at most 20 tasks per role on average, preflight YAML under 800 lines, no Jinja accumulator
    program in task files (logic lives in filters over module_utils) and no inline noqa in any YAML."""
    counts = {}
    for role in ROLES:
        folder = os.path.join(ROLES_DIR, role, "tasks")
        counts[role] = sum(_tasks(load(role, "tasks", name)) for name in os.listdir(folder) if name.endswith(".yml"))
    assert sum(counts.values()) / float(len(counts)) <= 20, counts
    preflight = 0
    for role in ROLES:
        for name in os.listdir(os.path.join(ROLES_DIR, role, "tasks")):
            if name.startswith("preflight"):
                with open(os.path.join(ROLES_DIR, role, "tasks", name)) as f:
                    preflight += len(f.read().splitlines())
    assert preflight < 800, preflight
    for path in _files(["roles", "playbooks", "molecule"]):
        with open(path) as f:
            text = f.read()
        assert "noqa" not in text, path
        if os.sep + "tasks" + os.sep in path or os.sep + "playbooks" + os.sep in path:
            assert ".append(" not in text and ".update(" not in text, "{0}: a Jinja accumulator program".format(path)


def _readme_defaults(role):
    """(variable, default as the role's README table gives it) of every '| `var` | `default` |' row."""
    path = os.path.join(ROLES_DIR, role, "README.md")
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return re.findall(r"^\| `([a-z0-9_]+)` \| `([^`]*)` \|", handle.read(), re.M)


@pytest.mark.parametrize("role", ROLES)
def test_readme_defaults_are_the_argument_specs(role):
    """A role README's variables table says the default the argument spec has (the driver's said RollingUpdate
    and 600 s long after the role moved to OnDelete and 1260 s)."""
    options = (load(role, "meta", "argument_specs.yml") or {}).get("argument_specs", {}).get("main", {}).get(
        "options"
    ) or {}
    wrong = []
    for var, text in _readme_defaults(role):
        if var not in options:
            wrong.append("{0}: not an option of the role".format(var))
            continue
        default = options[var].get("default")
        # A default that follows another variable is written '<variable>, else <value>' in the spec.
        if isinstance(default, str) and default.endswith(", else " + text):
            continue
        if default != text and default != yaml.safe_load(text):
            wrong.append("{0}: README says {1!r}, the argument spec {2!r}".format(var, text, default))
    assert wrong == [], "roles/{0}/README.md: {1}".format(role, "; ".join(wrong))
