# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""lookup('gpuops.cluster.connection') and the fleet_summary filter as playbooks use them (in a subprocess, as the
other filter tests)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def template(expr, extra=None):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".build"), ANSIBLE_NOCOLOR="1")
    env["ANSIBLE_LOAD_CALLBACK_PLUGINS"] = "1"
    env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.builtin.json"
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible"), "localhost", "-c", "local"]
    cmd += ["-e", "ansible_python_interpreter=" + sys.executable]
    for key, value in (extra or {}).items():
        cmd += ["-e", json.dumps({key: value})]
    cmd += ["-m", "ansible.builtin.debug", "-a", "msg={{ " + expr + " }}"]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    out = json.loads(proc.stdout.decode())
    return out["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_the_connection_is_the_set_variables_templated_and_nothing_else():
    res = template("lookup('gpuops.cluster.connection')")
    assert res["msg"] == {}, res
    extra = {
        "gpuops_api_host": "https://{{ cluster_name }}.example:6443",
        "cluster_name": "east",
        "gpuops_api_key": "sha256~token",
        "gpuops_ca_cert": "/etc/ca.crt",
        "gpuops_validate_certs": True,
        "gpuops_context": "",
    }
    res = template("lookup('gpuops.cluster.connection')", extra)
    assert res["msg"] == {
        "host": "https://east.example:6443",
        "api_key": "sha256~token",
        "ca_cert": "/etc/ca.crt",
        "validate_certs": True,
    }, res


def test_terms_are_refused():
    res = template("lookup('gpuops.cluster.connection', 'kubeconfig')")
    assert res.get("failed") and "takes no terms" in res["msg"], res


def test_fleet_summary_filter():
    item = {"cluster": "a", "platform": {"kubernetes_version": "v1.33.1"}, "done_states": ["preflight"]}
    res = template("[item] | gpuops.cluster.fleet_summary", {"item": item})
    assert res["msg"]["converged"] == ["a"] and res["msg"]["table"][-1].startswith("1 cluster(s): 1 converged"), res
    res = template("[{}] | gpuops.cluster.fleet_summary")
    assert res.get("failed") and "needs 'cluster'" in res["msg"], res
