# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The driver role's filters as the role calls them (in a subprocess, as test_timeline_filters.py does: importing
controller code here would reroute the module tests' warnings). Their logic: module_utils/test_driver_role.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def template(expr):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".build"), ANSIBLE_NOCOLOR="1")
    env["ANSIBLE_LOAD_CALLBACK_PLUGINS"] = "1"
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.builtin.json"
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible"), "localhost", "-c", "local"]
    cmd += ["-e", "ansible_python_interpreter=" + sys.executable, "-m", "ansible.builtin.debug"]
    cmd += ["-a", json.dumps({"msg": "{{ " + expr + " }}"})]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    return json.loads(proc.stdout.decode())["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_driver_filters():
    res = template(
        "[ 'auto' | gpuops.cluster.driver_mode({'openshift': false}, '4.9.9') ]"
        " + [ [{'name': 'n', 'gpu': true, 'kernel_version': none}] | gpuops.cluster.driver_problems("
        "{'version': 'latest', 'precompiled_version': '595', 'build_name': 'b', 'mode': 'runtime-compiled',"
        " 'platform': {'openshift': false}, 'kernel_label': 'k', 'gpu_labels': [], 'check_mode': false}) ]"
        " + [ {'strategy': 'precompiled', 'images': {}, 'kernels': {}, 'stale': []} | gpuops.cluster.driver_build_lines(false) ]"
        " + [ {'objects': [{'name': 'd', 'action': 'created'}], 'pruned': [], 'ready': true}"
        " | gpuops.cluster.driver_rollout_lines([]) ]"
        " + [ {'nodes': [{'node': 'n', 'passed': false, 'failures': ['f']}]}"
        " | gpuops.cluster.driver_node_failures([{'name': 'n', 'kernel_version': 'k1'}], []) ]"
        " + [ {'strategy': 'precompiled'} | gpuops.cluster.driver_result({}, [], [], 'ns') ]"
    )
    mode, problems, build, rollout, failures, result = res["msg"]
    assert mode == "runtime-compiled"
    assert [p.split(" must be")[0].split(" carry")[0] for p in problems] == [
        "driver: driver_version",
        "driver: GPU node(s) n",
        "driver: GPU node(s) n",
    ]
    assert build == ["driver: precompiled, 0 kernel(s)"] and rollout == ["d: created"]
    assert failures == ["driver: node n (kernel k1): f"]
    assert result["mode"] == "precompiled" and result["ready"] is True and "validated_nodes" not in result


def test_driver_filters_refuse_what_is_not_a_result():
    res = template("'auto' | gpuops.cluster.driver_mode('openshift', '4.9.9')")
    assert res.get("failed") and "driver_mode: expects a dictionary, got str" in res["msg"], res
