# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The filters as playbooks use them (in a subprocess: importing controller code here would make
ansible.errors route the module tests' warnings to Display)."""

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
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible"),
        "localhost",
        "-c",
        "local",
        "-e",
        "ansible_python_interpreter=" + sys.executable,
        "-m",
        "ansible.builtin.debug",
        "-a",
        "msg={{ " + expr + " }}",
    ]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    out = json.loads(proc.stdout.decode())
    return out["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_state_range_filter():
    res = template("['a', 'b', 'c'] | gpuops.cluster.state_range('', 'b')")
    assert res["msg"] == ["a", "b"]


def test_state_range_filter_error_names_the_variable():
    res = template("['a', 'b'] | gpuops.cluster.state_range('', 'z')")
    assert res.get("failed") and "gpuops_until_state: 'z' is not a state" in res["msg"], res


def test_gpu_timeline_filter():
    res = template("[] | gpuops.cluster.gpu_timeline(nodes=[])")
    assert res["msg"]["nodes"] == [] and "(no GPU node yet)" in res["msg"]["table"]


def test_operand_pod_states_filter():
    res = template("[] | gpuops.cluster.operand_pod_states(['a'])")
    assert res["msg"][0]["state"] == "no pod", res
    res = template("{} | gpuops.cluster.operand_pod_states(['a'])")
    assert res.get("failed") and "expects a list" in res["msg"], res


def test_state_inputs_filter():
    res = template("['driver', 'nfd'] | gpuops.cluster.state_inputs({'driver_version': '570', 'nfd_x': 1})")
    assert [r["name"] for r in res["msg"]] == ["driver", "nfd"] and all(len(r["inputs"]) == 32 for r in res["msg"])
    res = template("'driver' | gpuops.cluster.state_inputs({})")
    assert res.get("failed") and "expects a list of state names" in res["msg"], res
