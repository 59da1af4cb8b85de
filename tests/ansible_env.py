# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The environment the integration tests and the benchmarks run ansible-playbook in.

``engine="mitogen"`` runs the same playbooks with Mitogen for Ansible's ``mitogen_linear`` strategy
(pinned in requirements-dev.txt): one warm Python per host, so a module task costs no new interpreter
and no fresh import of the kubernetes client (about 0.7 s of every module task with the default engine).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, ".build")
ENGINES = ("default", "mitogen")


def engine_env(engine="default"):
    """The variables that select the execution engine ('default': ansible-core's linear strategy)."""
    if engine == "default":
        return {}
    if engine != "mitogen":
        raise ValueError("engine must be one of {0}, got {1!r}".format(", ".join(ENGINES), engine))
    import ansible_mitogen  # pinned in requirements-dev.txt

    strategies = os.path.join(os.path.dirname(ansible_mitogen.__file__), "plugins", "strategy")
    return {"ANSIBLE_STRATEGY_PLUGINS": strategies, "ANSIBLE_STRATEGY": "mitogen_linear"}


def collection_env(kubeconfig, env=None, engine="default"):
    """os.environ plus this checkout's collection, JSON output and the cluster's kubeconfig.

    ``env`` overrides; a value of None removes the variable.
    """
    e = os.environ.copy()
    e.update(
        {
            "ANSIBLE_COLLECTIONS_PATH": BUILD,
            "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
            "ANSIBLE_CALLBACK_RESULT_FORMAT": "json",
            "ANSIBLE_LOCALHOST_WARNING": "false",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "false",
            "K8S_AUTH_KUBECONFIG": kubeconfig,
        }
    )
    e.update(engine_env(engine))
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


def run_tasks(kubeconfig, tasks, check=False, diff=False, env=None, extra_args=None, engine="default", timeout=900):
    """Run ``tasks`` as one play on localhost through ansible-playbook, for real.

    Returns (the parsed ansible.posix.json output, or None when it printed none; the CompletedProcess;
    wall seconds).
    """
    play = [{"name": "gpuops tasks", "hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    os.makedirs(BUILD, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False, dir=BUILD) as handle:
        json.dump(play, handle)
        path = handle.name
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        "localhost,",
        "-e",
        "ansible_connection=local",
        "-e",
        "ansible_python_interpreter={0}".format(sys.executable),
        path,
    ]
    cmd += ["--check"] if check else []
    cmd += ["--diff"] if diff else []
    cmd += extra_args or []
    started = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            env=collection_env(kubeconfig, env, engine),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=timeout,
            check=False,
        )
    finally:
        os.remove(path)
    wall = time.monotonic() - started
    out = proc.stdout.decode("utf-8", "replace")
    start = out.find("{")
    return (json.loads(out[start:]) if start >= 0 else None), proc, wall


def no_json_message(proc):
    """What to say when ansible-playbook printed no JSON."""
    return "ansible-playbook printed no JSON (rc={0}):\n{1}\n{2}".format(
        proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")[-2000:]
    )
