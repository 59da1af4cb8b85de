# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What a state of site.yml is given, digested: its variables and the collection's own files (pure; no controller
import, so that the state_inputs filter and the unit tests share it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

# Variables that steer the run, not what a state makes: changing them must not re-run a state.
RUN_CONTROL = frozenset(
    [
        "gpuops_from_state",
        "gpuops_until_state",
        "gpuops_target",
        "gpuops_reports_dir",
        "gpuops_ledger",
        "gpuops_ledger_namespace",
        "gpuops_ledger_name",
        "gpuops_marks",
        "gpuops_states",
        "gpuops_run_states",
        "gpuops_done_states",
        "gpuops_state_inputs",
        "gpuops_skip_states",
        "gpuops_timeline",
        "gpuops_failure",
        "gpuops_run_result",
        # The connection (lookup gpuops.cluster.connection): where the cluster is, not what a state makes; a rotated
        # token must not re-run every state, nor may it be digested.
        "gpuops_kubeconfig",
        "gpuops_context",
        "gpuops_api_host",
        "gpuops_api_key",
        "gpuops_ca_cert",
        "gpuops_validate_certs",
    ]
)
# How patient a state is (its waits), not what it makes: raising a timeout after a slow run must not re-run the state
# and rewrite the ledger (a fleet job re-run with a longer driver wait reported a change on every cluster).
PATIENCE_SUFFIXES = ("_wait_timeout", "_wait_sleep", "_build_timeout", "_drain_timeout", "_test_timeout")
# What of the collection a state's behaviour comes from (an upgrade, or a local edit, re-runs every state).
CONTENT = ("roles", "plugins", "playbooks", "meta", "galaxy.yml", "MANIFEST.json")
_content = []


def collection_digest(root=None):
    """sha256 over the collection's roles, plugins, playbooks and metadata (computed once per process)."""
    if root is None and _content:
        return _content[0]
    base = root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sha = hashlib.sha256()
    for entry in CONTENT:
        path = os.path.join(base, entry)
        files = [path] if os.path.isfile(path) else []
        for folder, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            files.extend(os.path.join(folder, n) for n in sorted(names) if not n.endswith((".pyc", ".pyo")))
        for name in files:
            sha.update(os.path.relpath(name, base).encode("utf-8") + b"\0")
            with open(name, "rb") as handle:
                sha.update(handle.read())
            sha.update(b"\0")
    value = sha.hexdigest()[:32]
    if root is None:
        _content.append(value)
    return value


def digest(value):
    """A short, stable sha256 of a JSON-able value (the ledger's digests too)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def inputs_of(state, variables, content):
    prefixes = ("gpuops_", state + "_")
    mine = dict(
        (k, v)
        for k, v in variables.items()
        if k.startswith(prefixes) and k not in RUN_CONTROL and not k.endswith(PATIENCE_SUFFIXES)
    )
    return digest({"content": content, "vars": mine})


def state_inputs(states, variables):
    if not isinstance(states, list) or not isinstance(variables, dict):
        raise GpuopsError("state_inputs: expects a list of state names and a dictionary of variables")
    content = collection_digest()
    return [{"name": s, "inputs": inputs_of(s, variables, content)} for s in states]
