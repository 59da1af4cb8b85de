# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""site.yml on OpenShift 4.19, where RHCOS reports os-release ID=rhel, VERSION_ID=9.6 and the NFD operator's
CSV lists the NodeFeatureDiscovery second in its alm-examples: every state, from a GPU MachineSet scaled from
zero to validated GPUs, then a no-op re-run, validate.yml, diagnose.yml and the teardown; all of it as the
collection's least-privilege ServiceAccount (playbooks/rbac.yml), with its bearer token and no kubeconfig. The audit
log then shows no request refused and every rule of the installer's roles needed.

The first converge is an AWX job: ansible-runner in a private data directory laid out as AWX lays it out
(awx_job.py), the survey's answers as extra vars, the bearer-token credential's environment; its job events show
every state, its artifacts hold the timeline and the validation, and nothing the job shows (stdout, job events) holds the token.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


import pytest
from awx_job import dump, run_job
from conftest import assert_rerun_writes_nothing, check_burn_in, run_site, state_lines
from rbac_checks import AUTOSCALING, DRIVER_ROLLOUT, OPENSHIFT_ALWAYS, Installer
from test_site import STATES, STEPS, gpu_leftovers

pytestmark = pytest.mark.integration
# Mitogen's engine (conftest.engine_of): the whole stack runs here many times over, and ansible-core's default engine
# runs it in test_site.py and test_site_kubernetes.py. README, Test suite.
ANSIBLE_ENGINE = "mitogen"

NS = "nvidia-gpu-driver"


def test_site_on_openshift_419_to_validated_gpus(ocp419_cluster, tmp_path, monkeypatch):
    from kubernetes import client

    cluster = ocp419_cluster
    apps = client.AppsV1Api(cluster.api)
    core = client.CoreV1Api(cluster.api)
    reports = str(tmp_path)
    # The survey's answers (strings, as the re-runs give them with -e: the ledger digests what a run is given),
    # the job template's extra vars; the GPU MachineSet with its MachineAutoscaler and the ClusterAutoscaler).
    extra = {
        "gpuops_stack": "manual",
        "driver_version": "595.91.07",
        "gpuops_reports_dir": reports,
        "gpu_machineset_autoscaling": "true",
        "gpu_machineset_cluster_autoscaler": "true",
    }
    installer = Installer(cluster, run_site)
    as_installer = installer.env
    monkeypatch.delenv("K8S_AUTH_KUBECONFIG", raising=False)  # the job has the credential's variables only
    try:
        job = run_job(tmp_path, cluster, installer.token, "site.yml", extra)
        assert job.ok, job.tail()
        started = job.task_names()
        for number, state in enumerate(STATES, 1):
            assert "State {0} - {1}".format(number, state) in started, dump(job)
        facts = [
            e["event_data"]["res"].get("ansible_facts", {}) for e in job.events if e.get("event") == "runner_on_ok"
        ]
        platform = [f["preflight_platform"] for f in facts if "preflight_platform" in f][0]
        assert platform["openshift_version"].startswith("4.19"), platform
        assert len(autoscalers(cluster)) == 2, autoscalers(cluster)  # the MachineAutoscaler and the ClusterAutoscaler
        shown = job.everything_shown()
        assert len(shown) > 10000 and installer.token not in shown
        artifacts = job.artifacts()
        timeline = artifacts["gpuops_timeline"]
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
        report = artifacts["gpuops_validation"]
        assert report["passed"] is True and report["failures"] == [], report["failures"]
        assert sorted(report["nodes"]) == gpu_nodes and all(report["nodes"].values()), report["nodes"]

        installer.record_grants()
        assert_rerun_writes_nothing(cluster, extra_vars=extra, env=as_installer, user=installer.username)
        # The validation alone, forced, with the burn-in (DCGM's diagnostics on every GPU, a day-two check), as the
        # installer: its pods pass admission (SCC, Pod Security) and RBAC like the other validation pods.
        check_burn_in(cluster, extra, reports, gpu_nodes, env=as_installer)
        run_site(cluster, playbook="diagnose.yml", extra_vars=extra, env=as_installer)
        check_driver_upgrade(cluster, gpu_nodes, extra, as_installer, installer.username)
    finally:
        try:
            run_site(cluster, playbook="teardown.yml", env=as_installer)
        finally:
            installer.remove()
    assert gpu_leftovers(cluster) == []
    assert autoscalers(cluster) == []
    # The paths this run took too: OpenShift's (ServiceMonitors, NodeFeatureRules), the autoscaling objects and the
    # driver rollout.
    installer.assert_least_privilege("openshift", paths=OPENSHIFT_ALWAYS + AUTOSCALING + DRIVER_ROLLOUT)


def autoscalers(cluster):
    """The MachineAutoscalers of the GPU MachineSets and the ClusterAutoscaler (teardown removes them)."""
    from kubernetes import client

    custom = client.CustomObjectsApi(cluster.api)
    group = "autoscaling.openshift.io"
    out = [
        m["metadata"]["name"]
        for m in custom.list_namespaced_custom_object(group, "v1beta1", "openshift-machine-api", "machineautoscalers")[
            "items"
        ]
    ]
    return out + [
        c["metadata"]["name"] for c in custom.list_cluster_custom_object(group, "v1", "clusterautoscalers")["items"]
    ]


def check_driver_upgrade(cluster, gpu_nodes, extra, as_installer, user):
    """A new driver_version on OpenShift, as the installer: a new image for each kernel (the Driver Toolkit's build),
    rolled onto the GPU nodes one at a time, each validated before it serves again; then a re-run writes nothing."""
    from kubernetes import client

    apps = client.AppsV1Api(cluster.api)
    newer = dict(extra, driver_version="580.95.05")
    out = run_site(cluster, extra_vars=newer, env=as_installer)
    lines = state_lines(out)
    assert any(line.startswith("ledger: runs driver") for line in lines), lines
    table = [line.split() for line in lines if " upgraded " in line and line.split()[0] in gpu_nodes]
    assert sorted(row[0] for row in table) == gpu_nodes, lines
    assert all("595.91.07" in row[2] and "580.95.05" in row[3] for row in table), table
    drivers = apps.list_namespaced_daemon_set(NS, label_selector="app.kubernetes.io/component=nvidia-driver").items
    images = [d.spec.template.spec.containers[0].image for d in drivers]
    assert drivers and all("580.95.05" in i and i.endswith("-rhel9.6") for i in images), images
    assert all(d.status.number_ready == d.status.desired_number_scheduled >= 1 for d in drivers), images
    assert_rerun_writes_nothing(cluster, extra_vars=newer, env=as_installer, user=user)
