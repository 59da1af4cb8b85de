# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The entitlement and gpu_machineset filters as the roles call them (in a subprocess, as test_timeline_filters.py
does: importing controller code here would reroute the module tests' warnings). Their logic:
module_utils/test_entitlement.py and module_utils/test_gpu_machineset.py."""

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


def test_the_role_filters_in_one_run():
    calls = {
        "skip": "{'openshift': false} | gpuops.cluster.entitlement_skip_reason('present', true, 'auto', '4.9')",
        "problems": "{'entitlement_enabled': 'maybe'} | gpuops.cluster.entitlement_problems(skip=true)",
        "pool": "[{'metadata': {'name': 'master'}}] | gpuops.cluster.entitlement_pool('auto')",
        "plan": "{'name': 'worker', 'object': {}} | gpuops.cluster.entitlement_plan('absent')",
        "rollout": "{} | gpuops.cluster.entitlement_rollout_problems('worker')",
        "lines": "[{'kind': 'MachineConfig', 'name': 'a', 'action': 'created'}] | gpuops.cluster.entitlement_lines(true)",
        "gm_skip": "{'openshift': true, 'cloud': 'AWS'} | gpuops.cluster.gpu_machineset_skip_reason(['AWS'])",
        "gm_plan": "{'msg': 'no workers'} | gpuops.cluster.gpu_machineset_plan({'gpu_machineset_zones': []})",
        "gm_result": "[{'name': 'ms', 'gpu': {}}] | gpuops.cluster.gpu_machineset_result([])",
        "gm_lines": "[] | gpuops.cluster.gpu_machineset_lines([{'kind': 'K', 'name': 'n', 'action': 'created'}], 'x')",
        "gm_verify": "[{'name': 'ms'}] | gpuops.cluster.gpu_machineset_verify_problems([], [], [], 'x')",
    }
    res = template("{" + ", ".join("'{0}': {1}".format(k, v) for k, v in calls.items()) + "}")
    got = res.get("msg")
    assert isinstance(got, dict), res
    assert got["skip"].startswith("plain Kubernetes has no Machine Config Operator")
    assert got["problems"] == ["entitlement: entitlement_enabled must be auto, true or false (got maybe)."]
    assert got["pool"]["name"] == "master" and got["pool"]["names"] == ["master"]
    assert got["plan"] == "entitlement: remove the entitlement from pool worker (? machines, maxUnavailable 1 (unset))"
    assert got["rollout"][0].startswith("entitlement: MachineConfigPool worker: not Updated")
    assert got["lines"] == ["entitlement: MachineConfig a: would be created"]
    assert got["gm_skip"] == ""
    assert got["gm_plan"]["problems"] == ["gpu_machineset: gpu_machineset_instance_type: no workers"]
    assert got["gm_result"] == [
        {"name": "ms", "zone": None, "instance_type": None, "replicas": None, "gpus_per_node": None, "nodes": []}
    ]
    assert got["gm_lines"] == ["gpu_machineset: K n created"]
    assert got["gm_verify"] == ["MachineSet ms: not found"]


def test_a_bad_argument_names_the_filter():
    res = template("'worker' | gpuops.cluster.entitlement_plan('present')")
    assert res.get("failed") and "entitlement_plan: expects a dictionary" in res["msg"], res
