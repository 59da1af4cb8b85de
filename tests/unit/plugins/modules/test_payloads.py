# -*- coding: utf-8 -*-
"""What Ansible packs into a module's AnsiballZ payload: every module_utils file its imports reach, found and compiled
on the controller once per module and run (about 3 ms a file), and unpacked in every module process. The modules that
write through k8s_ensure's present path carry none of k8s_ensure's followers.

Built by ansible-core's own ``recursive_finder``, as ``modify_module`` builds a payload.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

MODULES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "modules"))
# What only k8s_ensure's followers (and the operand pods' report) need.
FOLLOWER_FILES = (
    "ensure/followers.py",
    "driver_build/runner.py",
    "driver_rollout/runner.py",
    "nfd/runner.py",
    "node_taints.py",
    "dry_run.py",
)
# Run in a new interpreter: the plugin loader it initialises installs Ansible's collection finder process-wide.
FINDER = """
import datetime, io, json, sys, zipfile
from ansible.plugins.loader import init_plugin_loader
from ansible.executor.module_common import recursive_finder
from ansible._internal._datatag._tags import Origin
from ansible._internal._ansiballz._builder import ExtensionManager
init_plugin_loader()
name, path = sys.argv[1:]
data = open(path, 'rb').read()
zf = zipfile.ZipFile(io.BytesIO(), 'w')
recursive_finder(name, 'ansible_collections.gpuops.cluster.plugins.modules.' + name, Origin(path=path).tag(data), zf,
                 datetime.datetime(2020, 1, 1), ExtensionManager.create(task_vars={}))
print(json.dumps(zf.namelist()))
"""
UTILS = "ansible_collections/gpuops/cluster/plugins/module_utils/"


def run_python(code, *args, **kwargs):
    """The JSON that ``code`` prints, run in a new interpreter (``env`` in kwargs)."""
    proc = subprocess.run(
        [sys.executable, "-c", code] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, **kwargs
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    return json.loads(proc.stdout.decode())


def payload_files(name):
    """The collection's module_utils files (relative to module_utils/) in the payload of module ``name``."""
    names = run_python(FINDER, name, os.path.join(MODULES, name + ".py"))
    return set(n[len(UTILS) :] for n in names if n.startswith(UTILS))


def test_k8s_ensure_carries_its_followers():
    files = payload_files("k8s_ensure")
    assert set(FOLLOWER_FILES) <= files
    assert {"ensure/task.py", "ensure/runner.py", "gpu_validate/runner.py"} <= files


@pytest.mark.parametrize("name", ["state_ledger", "gpu_validate"])
def test_a_module_writing_through_the_present_path_carries_no_follower(name):
    files = payload_files(name)
    assert "ensure/runner.py" in files
    assert not files & set(FOLLOWER_FILES + ("ensure/task.py",))


def test_platform_info_carries_the_ledger_it_asks_and_none_of_k8s_ensures_followers():
    files = payload_files("platform_info")
    assert {"follow.py", "ledger.py"} <= files
    assert not files & set(FOLLOWER_FILES + ("ensure/task.py", "gpu_validate/runner.py"))


def test_machineset_clone_carries_the_reads_it_follows_with_and_none_of_k8s_ensures_followers():
    files = payload_files("machineset_clone")
    assert {"follow.py", "k8s_read.py", "machineset/runner.py"} <= files
    assert not files & set(FOLLOWER_FILES + ("ensure/task.py", "ensure/runner.py", "gpu_validate/runner.py"))


def test_gpu_timeline_carries_the_ledger_it_records_and_none_of_k8s_ensures_followers():
    files = payload_files("gpu_timeline")
    assert {"follow.py", "ledger.py", "ensure/runner.py"} <= files
    assert not files & set(FOLLOWER_FILES + ("ensure/task.py", "gpu_validate/runner.py"))


def test_state_ledger_carries_no_validation():
    assert not [f for f in payload_files("state_ledger") if f.startswith(("gpu_validate/", "diagnose/"))]


# What a module process compiles is what it imports: AnsiballZ has no bytecode, and Python 3.11's zipimport compiles
# each module twice (python/cpython#141276). These are imported only on the path that needs them.
ON_DEMAND = ("access", "diagnose.signatures", "diagnose.match", "gpu_validate.podrun", "gpu_validate.pods")
IMPORTS = """
import json, sys
import ansible_collections.gpuops.cluster.plugins.modules.{0}
prefix = 'ansible_collections.gpuops.cluster.plugins.module_utils.'
print(json.dumps(sorted(m[len(prefix):] for m in sys.modules if m.startswith(prefix))))
"""


def imported_at_start(name):
    """The collection's module_utils that importing module ``name`` loads, in a new interpreter."""
    build = os.path.abspath(os.path.join(MODULES, "..", "..", ".build"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([build] + sys.path))
    return set(run_python(IMPORTS.format(name), env=env))


@pytest.mark.parametrize("name", ["k8s_ensure", "k8s_read", "operand_pods", "state_ledger"])
def test_a_module_imports_the_403_describer_signatures_and_validation_pods_only_when_used(name):
    loaded = imported_at_start(name)
    assert "common" in loaded
    assert not loaded & set(ON_DEMAND)


def test_the_on_demand_imports_are_in_the_payload():
    # Imported inside functions, still found by recursive_finder: the payload has them when the path is taken.
    files = payload_files("k8s_ensure")
    assert {"access.py", "diagnose/match.py", "diagnose/signatures.py"} <= files
