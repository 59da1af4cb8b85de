# -*- coding: utf-8 -*-
"""The filter and test plugins import their module_utils when a filter or test first runs, not when loaded.

ansible-core resolves any of the collection's filters (tests) by loading every filter (test) file and asking it
for its functions, in the forked worker of each task that names one (plugin_utils/lazy.py). Each check runs in a
new interpreter, with ansible-core's collection finder, as ansible-playbook loads them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
PREFIX = "ansible_collections.gpuops.cluster.plugins."

LOAD_ALL = """
import glob, json, os, sys, types
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[{build!r}])._install()
import importlib
found = {{}}
for kind, cls, method in (("filter", "FilterModule", "filters"), ("test", "TestModule", "tests")):
    for path in sorted(glob.glob(os.path.join({root!r}, "plugins", kind, "*.py"))):
        name = os.path.basename(path)[:-3]
        module = importlib.import_module("{prefix}" + kind + "." + name)
        found.update(getattr(getattr(module, cls)(), method)())
{then}
ran = sorted(n[len("{prefix}"):] for n, m in sys.modules.items()
             if n.startswith("{prefix}module_utils.") and type(m) is types.ModuleType and not hasattr(m, "__path__"))
print(json.dumps({{"ran": ran, "cryptography": "cryptography" in sys.modules, "count": len(found)}}))
"""


def run(then=""):
    code = LOAD_ALL.format(build=os.path.join(ROOT, ".build"), root=ROOT, prefix=PREFIX, then=then)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def test_loading_every_filter_and_test_file_runs_no_module_utils_but_errors():
    out = run()
    assert out["count"] > 60
    # errors.py is the exceptions the filters catch (no imports of its own); no other module may run at load
    # (packages, such as diagnose/ on the way to diagnose/match.py, are not modules of code).
    assert out["ran"] == ["module_utils.errors"]
    assert out["cryptography"] is False


@pytest.mark.parametrize(
    "call, module",
    [
        ("found['nfd_gpu_node_lines']({'gpu_nodes': []}, 'x')", "module_utils.nfd_role"),
        ("found['pem_info']('')", "module_utils.pem"),
        ("found['dns_label']('gpu-operator')", "module_utils.role_inputs"),
    ],
)
def test_a_filter_or_test_imports_its_module_utils_when_it_runs(call, module):
    out = run("result = " + call)
    assert module in out["ran"]
    assert out["cryptography"] is (module == "module_utils.pem")


def test_a_missing_module_is_an_import_error_naming_it():
    from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

    with pytest.raises(ImportError, match="module_utils.no_such_module"):
        lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.no_such_module")
