# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The container_toolkit and gpu_feature_discovery filters as the roles call them (in a subprocess, as
test_timeline_filters.py does: importing controller code here would reroute the module tests' warnings)."""

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


def test_container_toolkit_filters():
    res = template(
        "[ ['a_x', 'a_y'] | gpuops.cluster.container_toolkit_host_files(['/etc/x', 'y']) ]"
        " + [ [{'name': 'n', 'gpu': true, 'container_runtime': 'cri-o://1.29'}]"
        " | gpuops.cluster.container_toolkit_plan('auto', false, 'ns', {'skipped': true}, false, ['l']) ]"
        " + [ [{'node': 'n', 'pod': None, 'state': 'no pod'}] | gpuops.cluster.container_toolkit_not_ready({}, 'crio', 'ds') ]"
    )
    files, plan, lines = res["msg"]
    assert files == [
        "container_toolkit: a_x and a_y must be absolute host paths of a file (no '..', no trailing '/'), got y."
    ]
    assert plan["runtime"] == "crio" and plan["problems"] == [] and plan["namespace_exists"] is True, plan
    assert lines[0].startswith("container_toolkit: node n (runtime unknown, toolkit configured for crio): no ds pod")


def test_gpu_feature_discovery_filters():
    settings = (
        "{'namespace': 'ns', 'node_feature_api': 'auto', 'config_map': '', 'config_default': '', 'plugin_default': 'default',"
        " 'cdi_enabled': true, 'runtime_class': 'nvidia'}"
    )
    res = template(
        "['maybe' | gpuops.cluster.gpu_feature_discovery_inputs('auto', '')]"
        " + [[{'item': {'kind': 'Namespace', 'name': 'ns'}, 'resources': [{}]}]"
        " | gpuops.cluster.gpu_feature_discovery_plan([{'name': 'n', 'gpu': true}], "
        + settings
        + ", true, false, ['l'])]"
        " + [[{'name': 'n', 'gpu': true, 'gfd': {}}] | gpuops.cluster.gpu_feature_discovery_labels]"
        " + [[{'node': 'n', 'pod': None, 'ready': false}] | gpuops.cluster.gpu_feature_discovery_unlabelled('false', true, 'gfd')]"
        # No read made (both skipped): the answers of the skipped register are none.
        " + [none | gpuops.cluster.gpu_feature_discovery_plan([{'name': 'n', 'gpu': true}], "
        + settings
        + ", true, false, ['l'])]"
    )
    assert isinstance(res["msg"], list), res
    inputs, plan, labels, lines, unread = res["msg"]
    assert unread["namespace_exists"] is True and unread["problems"] == [] and unread["config_map"] == "", unread
    assert inputs[0].startswith(
        "gpu_feature_discovery: gpu_feature_discovery_node_feature_api must be auto, true or false"
    )
    assert plan["api"] == "false" and plan["config_map"] == "" and plan["problems"] == [], plan
    assert labels["missing"] == ["n"] and labels["nodes"] == {}, labels
    assert lines == [
        "gpu_feature_discovery: node n: no nvidia.com/gpu.product, gpu.count, gpu.memory and cuda driver labels; "
        "no gfd pod (check the node selector and tolerations)"
    ]
