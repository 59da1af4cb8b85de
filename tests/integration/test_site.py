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


def run_site(cluster, env=None, extra_vars=None, expect_rc=0):
    env = _collection_env(cluster, env)
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        os.path.join(ROOT, "inventories", "local"),
        os.path.join(ROOT, "playbooks", "site.yml"),
    ]
    for key, value in (extra_vars or {}).items():
        cmd += ["-e", "{0}={1}".format(key, value)]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, check=False)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == expect_rc, out[-3000:] + proc.stderr.decode()[-2000:]
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


def test_connection_is_set_once_through_the_action_group(cluster, tmp_path):
    """The role's tasks carry no kubeconfig/context: module_defaults on the collection's group reach them.

    No K8S_AUTH_KUBECONFIG and a HOME without ~/.kube/config: only gpuops_kubeconfig can connect.
    k8s_cluster_info is not in kubernetes.core's own k8s group, so this also proves our group lists it.
    """
    env = {"K8S_AUTH_KUBECONFIG": None, "KUBECONFIG": None, "HOME": str(tmp_path)}
    result = run_site(cluster, env=env, extra_vars={"gpuops_kubeconfig": cluster.kubeconfig})
    assert platform_fact(result)["kubernetes_version"] == "v1.34.10"

    # A context the kubeconfig lacks reaches the first module of the role, which names it.
    failed = run_site(
        cluster,
        env=env,
        extra_vars={"gpuops_kubeconfig": cluster.kubeconfig, "gpuops_context": "no-such-context"},
        expect_rc=2,
    )
    first = failed["plays"][0]["tasks"]
    messages = [t["hosts"]["localhost"].get("msg", "") for t in first if t["hosts"]["localhost"].get("failed")]
    assert messages and "no-such-context" in messages[0], messages

    # Without any connection setting the role cannot reach a cluster at all (nothing else is hidden).
    run_site(cluster, env=env, expect_rc=2)
