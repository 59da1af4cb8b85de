# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Evaluate a role's preflight and render its manifests with Ansible's own Templar, no cluster needed.

The oracle tests must feed upstream code exactly what a role renders, and must not re-implement the rendering.
This runs the role's own files through ansible-core's Templar (the engine ansible-playbook uses):

- variables: the role's defaults/main.yml and vars/main.yml, loaded as Ansible loads them (trusted templates), then
  the caller's inputs (extra vars, which win over both);
- the role's meta/argument_specs.yml first, as ansible-core validates it before the role's first task;
- tasks/preflight.yml in order: every ``set_fact`` is evaluated (task ``vars`` and ``when`` included), every
  ``assert`` is checked (the first false one is the role's refusal, with its rendered ``fail_msg``); ``debug`` tasks
  and the platform detection (skipped: ``preflight_platform`` is given) do nothing; a task that reads the cluster
  (``register:``) gets the caller's stand-in for its result, by register name, and an unknown one is an error, so a
  new cluster read in the role shows up here instead of being guessed;
- the manifests: the ``definitions`` expression of tasks/apply.yml (``lookup('ansible.builtin.template', ...) |
  from_yaml_all``), evaluated as is with the role's templates directory as the search path.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader
from ansible.template import Templar, trust_as_template

# What ansible-playbook does at start: the plugin loader finds ansible.builtin's lookups and filters (and, through
# ANSIBLE_COLLECTIONS_PATH, this collection's).
init_plugin_loader()

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLES = os.path.join(ROOT, "roles")
# Modules that only print: nothing to evaluate.
NO_OP_ACTIONS = {"ansible.builtin.debug", "debug"}
SET_FACT = {"ansible.builtin.set_fact", "set_fact"}
ASSERT = {"ansible.builtin.assert", "assert"}
INCLUDE_ROLE = {"ansible.builtin.include_role", "include_role"}
SHARED_STATE = {"name": "gpuops.cluster.preflight", "tasks_from": "state.yml"}
# The argument spec keys ansible-core's role validation hands to ArgumentSpecValidator (descriptions are docs).
SPEC_KEYS = ("type", "elements", "choices", "required", "options", "no_log", "aliases")
TASK_KEYWORDS = {
    "name",
    "when",
    "vars",
    "register",
    "tags",
    "loop",
    "loop_control",
    "failed_when",
    "changed_when",
    "check_mode",
    "no_log",
}


class Refused(Exception):
    """The role's preflight stopped: ``message`` is the rendered fail_msg of the assert that failed."""

    def __init__(self, task, message):
        super(Refused, self).__init__(message)
        self.task = task
        self.message = message


def _trust(value):
    """Caller inputs are plain data; only strings become templates (as extra vars do)."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {k: _trust(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_trust(v) for v in value]
    return value


def _action(task):
    actions = [k for k in task if k not in TASK_KEYWORDS]
    if len(actions) != 1:
        raise AssertionError("cannot tell the action of task %r: %r" % (task.get("name"), actions))
    return actions[0]


def _conditions(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


class RoleRun(object):
    """One role's preflight evaluated with ``inputs``; ``facts`` holds every variable afterwards."""

    def __init__(self, role, inputs, results, check_mode=False):
        self.role = role
        self.path = os.path.join(ROLES, role)
        self.loader = DataLoader()
        facts = {}
        for rel in ("defaults/main.yml", "vars/main.yml"):
            facts.update(self.loader.load_from_file(os.path.join(self.path, rel), trusted_as_template=True) or {})
        # The vars of tasks/main.yml's blocks are in scope for the phase files they import.
        for task in self.loader.load_from_file(os.path.join(self.path, "tasks", "main.yml"), trusted_as_template=True):
            facts.update(task.get("vars") or {} if "block" in task else {})
        facts.update(_trust(dict(inputs)))
        facts.setdefault("ansible_check_mode", check_mode)
        self.facts = facts
        self.results = dict(results)

    def templar(self, extra=None):
        variables = dict(self.facts)
        variables.update(extra or {})
        return Templar(loader=self.loader, variables=variables)

    def validate_arguments(self):
        """What ansible-core does before a role's first task: its meta/argument_specs.yml (entry point main) over the
        role's variables; raises Refused with ansible's message."""
        specs = self.loader.load_from_file(os.path.join(self.path, "meta", "argument_specs.yml"))
        options = specs["argument_specs"]["main"].get("options") or {}
        spec = {name: {k: v for k, v in opt.items() if k in SPEC_KEYS} for name, opt in options.items()}
        templar = self.templar()
        provided = {name: templar.template(self.facts[name]) for name in options if name in self.facts}
        result = ArgumentSpecValidator(spec).validate(provided)
        if result.error_messages:
            raise Refused(
                "Validating arguments against arg spec main",
                "Validation of arguments failed:\n" + "\n".join(result.error_messages),
            )

    def preflight(self):
        """Evaluate the argument spec, then tasks/preflight.yml; raises Refused at the first failing check."""
        self.validate_arguments()
        tasks = self.loader.load_from_file(os.path.join(self.path, "tasks", "preflight.yml"), trusted_as_template=True)
        for task in tasks:
            self._run(task)
        return self.facts

    def _run(self, task):
        action = _action(task)
        templar = self.templar(task.get("vars"))
        if not all(templar.evaluate_conditional(c) for c in _conditions(task.get("when"))):
            return
        if action in SET_FACT:
            # set_fact templates all its values against the variables before the task, then sets them.
            new = {k: templar.template(v) for k, v in task[action].items()}
            self.facts.update(new)
        elif action in ASSERT:
            args = task[action]
            for that in _conditions(args.get("that")):
                if not templar.evaluate_conditional(that):
                    raise Refused(
                        task.get("name"), templar.template(args.get("fail_msg", args.get("msg", "assert failed")))
                    )
        elif action in INCLUDE_ROLE and task[action] == SHARED_STATE:
            # The shared state prologue (the platform, the GPU nodes once per run): its facts are inputs.
            missing = [f for f in ("preflight_platform", "preflight_gpu_nodes") if f not in self.facts]
            if missing:
                raise AssertionError("%s: give %s as inputs (roles/preflight/tasks/state.yml)" % (self.role, missing))
        elif action in NO_OP_ACTIONS or action in INCLUDE_ROLE:
            # Any other include is one the oracle does not know.
            if action in INCLUDE_ROLE:
                raise AssertionError(
                    "%s: task %r includes a role; give its facts as inputs" % (self.role, task.get("name"))
                )
        elif "register" in task:
            name = task["register"]
            if name not in self.results:
                raise AssertionError(
                    "%s: task %r (%s) reads the cluster into %s: give a stand-in result"
                    % (self.role, task.get("name"), action, name)
                )
            self.facts[name] = self.results[name]
        else:
            raise AssertionError(
                "%s: task %r (%s) is neither evaluated nor stood in for" % (self.role, task.get("name"), action)
            )

    def manifests(self):
        """The objects tasks/apply.yml hands to k8s_ensure (its `definitions` expression, evaluated as written)."""
        tasks = self.loader.load_from_file(os.path.join(self.path, "tasks", "apply.yml"), trusted_as_template=True)
        for task in tasks:
            args = task.get(_action(task))
            if isinstance(args, dict) and "definitions" in args:
                templar = self.templar({"ansible_search_path": [self.path]})
                return [obj for obj in templar.template(args["definitions"]) if obj]
        raise AssertionError("%s: tasks/apply.yml has no `definitions` task" % self.role)


def render(role, inputs, results, check_mode=False):
    """(facts after preflight, manifests): raises Refused when the preflight refuses the inputs."""
    run = RoleRun(role, inputs, results, check_mode=check_mode)
    run.preflight()
    return run.facts, run.manifests()


def find(manifests, kind, name=None):
    out = [m for m in manifests if m.get("kind") == kind and (name is None or m["metadata"]["name"] == name)]
    if len(out) != 1:
        raise AssertionError("expected one %s %s, found %d" % (kind, name or "", len(out)))
    return out[0]


def container(obj, name):
    for c in obj["spec"]["template"]["spec"]["containers"]:
        if c["name"] == name:
            return c
    raise AssertionError("no container %s in %s" % (name, obj["metadata"]["name"]))


def env_of(ctr):
    return {e["name"]: e.get("value") for e in ctr.get("env") or []}
