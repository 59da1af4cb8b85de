# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""site.yml on OpenShift 4.19, where RHCOS reports os-release ID=rhel, VERSION_ID=9.6 and the NFD operator's
CSV lists the NodeFeatureDiscovery second in its alm-examples: every state, from a GPU MachineSet scaled from
zero to validated GPUs, then a no-op re-run and the teardown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from conftest import assert_rerun_writes_nothing, run_site
from test_site import STATES, STEPS, gpu_leftovers, platform_fact

pytestmark = pytest.mark.integration

NS = "nvidia-gpu-driver"


def test_site_on_openshift_419_to_validated_gpus(ocp419_cluster, tmp_path):
    from kubernetes import client

    cluster = ocp419_cluster
    apps = client.AppsV1Api(cluster.api)
    core = client.CoreV1Api(cluster.api)
    reports = str(tmp_path)
    extra = {"gpuops_reports_dir": reports}
    try:
        first = run_site(cluster, extra_vars=extra)
        assert platform_fact(first)["openshift_version"].startswith("4.19"), platform_fact(first)
        with open(os.path.join(reports, "timeline.json")) as f:
            timeline = json.load(f)
        assert [s["state"] for s in timeline["states"]] == STATES
        assert timeline["nodes"], "no GPU node in the timeline"
        for row in timeline["nodes"]:
            assert all(row["steps"][k] for k in STEPS), row
        gpu_nodes = sorted(r["node"] for r in timeline["nodes"])
        for name in gpu_nodes:
            labels = core.read_node(name).metadata.labels
            assert labels["feature.node.kubernetes.io/system-os_release.ID"] == "rhel", name
            assert labels.get("nvidia.com/gpu.product"), (name, "GFD labels")  # GFD ran with the node-feature API off
        # The driver image of a RHEL 9.6 node carries the -rhel9.6 suffix; the toolkit configures CRI-O.
        drivers = apps.list_namespaced_daemon_set(NS, label_selector="app.kubernetes.io/component=nvidia-driver").items
        assert drivers and all(d.spec.template.spec.containers[0].image.endswith("-rhel9.6") for d in drivers), [
            d.spec.template.spec.containers[0].image for d in drivers
        ]
        toolkit = apps.read_namespaced_daemon_set("nvidia-container-toolkit-daemonset", NS)
        env = {e.name: e.value for e in toolkit.spec.template.spec.containers[0].env}
        assert env["RUNTIME"] == "crio", env
        with open(os.path.join(reports, "gpu-validation.json")) as f:
            report = json.load(f)
        assert report["failures"] == [] and report["summary"]["failed"] == 0, report["failures"]
        assert sorted(n["node"] for n in report["nodes"]) == gpu_nodes

        assert_rerun_writes_nothing(cluster, extra_vars=extra)
    finally:
        run_site(cluster, playbook="teardown.yml")
    assert gpu_leftovers(cluster) == []
