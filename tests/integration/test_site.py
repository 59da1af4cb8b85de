# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""playbooks/site.yml, as `make demo` runs it, against the local cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
from conftest import BUILD, ROOT, _collection_env

pytestmark = pytest.mark.integration


def run_site(cluster):
    env = _collection_env(cluster)
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        os.path.join(ROOT, "inventories", "local"),
        os.path.join(ROOT, "playbooks", "site.yml"),
    ]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, check=False)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, out[-3000:] + proc.stderr.decode()[-2000:]
    return json.loads(out[out.find("{") :])


def platform_fact(result):
    for task in result["plays"][0]["tasks"]:
        facts = task["hosts"]["localhost"].get("ansible_facts", {})
        if "preflight_platform" in facts:
            return facts["preflight_platform"]
    raise AssertionError("preflight_platform was never set")


def test_site_preflight_detects_the_platform_and_writes_nothing(cluster):
    assert os.path.isdir(BUILD)
    mark = cluster.audit.mark()
    result = run_site(cluster)
    platform = platform_fact(result)
    assert platform["kubernetes_version"] == "v1.34.10"
    if cluster.profile == "openshift":
        assert platform["openshift"] is True
        assert platform["cloud"] == "AWS" and platform["region"].strip() == "us-east-2"
        assert platform["infrastructure_name"]
    else:
        assert platform["openshift"] is False and platform["cloud"] == "none"
    stats = result["stats"]["localhost"]
    assert stats["failures"] == 0 and stats["changed"] == 0
    assert cluster.audit.writes_since(mark) == []
