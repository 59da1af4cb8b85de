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


def test_input_problems_filter_pairs_values_with_rules_in_order_and_refuses_misuse():
    rules = "{'a': 'dns_label', 'b': 'tag'}"
    assert template(rules + " | gpuops.cluster.input_problems('r', ['ok', 'v1'])")["msg"] == []
    res = template(rules + " | gpuops.cluster.input_problems('r', ['ok', 'v 1'])")
    assert res["msg"] == ["r: b must be an image tag such as v0.20.0, got v 1."], res
    res = template(rules + " | gpuops.cluster.input_problems('r', ['ok'])")
    assert res.get("failed") and "one value per rule" in res["msg"], res
    res = template("{'a': 'dns'} | gpuops.cluster.input_problems('r', ['x'])")
    assert res.get("failed") and "unknown input rule 'dns'" in res["msg"], res
    res = template("'GPU' is gpuops.cluster.dns_label")
    assert res["msg"] is False, res


def test_gpu_timeline_filter_takes_the_nfd_workers_with_the_pods(monkeypatch):
    """An nfd-worker pod among the pods: the labelling time when nfd-master's entry moved past the driver."""
    label = "feature.node.kubernetes.io/pci-10de.present"
    node = {
        "metadata": {
            "name": "gpu-a",
            "labels": {label: "true"},
            "creationTimestamp": "2026-11-23T10:00:00Z",
            "managedFields": [
                {
                    "manager": "nfd-master",
                    "operation": "Update",
                    "time": "2026-11-23T10:05:00Z",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:" + label: {}, "f:nvidia.com/gpu.product": {}}}},
                }
            ],
        },
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-23T10:00:30Z"}]},
    }

    def pod(labels, ready_at):
        return {
            "metadata": {"name": "p", "labels": labels},
            "spec": {"nodeName": "gpu-a"},
            "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ready_at}]},
        }

    pods = [
        pod({"app.kubernetes.io/component": "nvidia-driver"}, "2026-11-23T10:02:00Z"),
        pod({"app": "nfd-worker"}, "2026-11-23T10:00:50Z"),
    ]
    monkeypatch.setenv("TIMELINE_NODES", json.dumps([node]))
    monkeypatch.setenv("TIMELINE_PODS", json.dumps(pods))
    res = template(
        "[] | gpuops.cluster.gpu_timeline(nodes=lookup('ansible.builtin.env', 'TIMELINE_NODES') | from_json, "
        "pods=lookup('ansible.builtin.env', 'TIMELINE_PODS') | from_json)"
    )
    row = res["msg"]["nodes"][0]
    assert row["steps"]["nfd_labelled"] == "2026-11-23T10:00:50+00:00", res
    assert row["sources"] == {"nfd_labelled": "nfd-worker Ready"}
    assert (row["seconds"]["nfd"], row["seconds"]["driver"]) == (20.0, 70.0)


def test_failure_signatures_filter():
    line = "ERROR: The Nouveau kernel driver is currently in use by your system."
    res = template("['noise', '" + line + "'] | gpuops.cluster.failure_signatures('driver_log')")
    assert [f["signature"] for f in res["msg"]] == ["nouveau_in_use"] and res["msg"][0]["evidence"] == line, res
    assert template("'noise' | gpuops.cluster.failure_signatures")["msg"] == []
    res = template("['x'] | gpuops.cluster.failure_signatures('driver')")
    assert res.get("failed") and "failure_signatures: where: must be one of" in res["msg"], res
    res = template("{'text': 'x'} | gpuops.cluster.failure_signatures")
    assert res.get("failed") and "expects log lines" in res["msg"], res
