# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""site.yml with gpuops_stack: operator on the simulated OpenShift: NVIDIA's certified GPU Operator through OLM
(Manual approval of the pinned CSV), a ClusterPolicy from its alm-examples with the collection's choices, the
collection's own states on top; zero writes on a re-run and in check mode; each stack refuses to run beside the
other; bad inputs refused before any write; teardown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import time

import pytest
from conftest import assert_rerun_writes_nothing, run_site, short_name, task_results
from faults import SiteRun
from rbac_checks import GPU_OPERATOR, Installer, forbidden, requests_of, unused_rules
from test_site import gpu_leftovers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis  # noqa: E402
from simopenshift.control import images_back, images_missing  # noqa: E402
from simopenshift.kube import CONFIGMAPS, DAEMONSETS, NAMESPACES, NODES, PODS  # noqa: E402
from simopenshift.testing import Client, wait_for  # noqa: E402

pytestmark = pytest.mark.integration
# Mitogen's engine (conftest.engine_of): the whole stack runs here many times over, and ansible-core's default engine
# runs it in test_site.py and test_site_kubernetes.py. README, Test suite.
ANSIBLE_ENGINE = "mitogen"

NS = "nvidia-gpu-operator"
OPERATOR = {"gpuops_stack": "operator"}
PLUGIN = "app=nvidia-device-plugin-daemonset"
READ_GPU_NODES = "Read the GPU nodes until each advertises its GPUs"
OLM_APPLY = "Apply the namespace, OperatorGroup and Subscription (Manual approval, starting at the pinned CSV)"
# The steps a converged cluster skips (the operator installed, the first apply wrote none of the OLM objects).
OLM_STEPS = (
    "Wait until OLM resolved the Subscription (its InstallPlan), or said it cannot",
    "Read the InstallPlans of the namespace",
    "Wait until the ClusterServiceVersion Succeeded or Failed",
    "Create the ClusterPolicy from the CSV's alm-examples (chosen by kind) with the collection's choices",
)


@pytest.fixture
def kube(cluster):
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile (OLM)")
    return Client(cluster.api)


def gpu_operator_steps(out):
    """The gpu_operator role's apply steps by short name (the last run of each), and the ClusterPolicy's action in its
    first k8s_ensure (None when it was not there)."""
    steps = {
        short_name(name): res for name, res in task_results(out) if name.startswith("gpuops.cluster.gpu_operator : ")
    }
    policy = [o["action"] for o in steps[OLM_APPLY].get("objects", []) if o["kind"] == "ClusterPolicy"]
    return steps, (policy or [None])[0]


def first_failure(out):
    """The first failure's message (site.yml's rescue then ends the run naming the state)."""
    return [r.get("msg") for dummy, r in task_results(out) if r.get("failed")][0]


def gpu_nodes(kube):
    return [n for n in kube.list(NODES)[0] if (n["metadata"].get("labels") or {}).get("nvidia.com/gpu.present")]


def test_operator_mode_converges_on_top_of_the_collections_states(cluster, kube, tmp_path):
    """Every run with only the least-privilege installer's token (playbooks/rbac.yml): OLM grants the operator's
    own ClusterRole, so the installer needs only the OLM objects and the ClusterPolicy."""
    from ansible_collections.gpuops.cluster.plugins.module_utils import access

    extra = dict(OPERATOR, gpuops_reports_dir=str(tmp_path))
    installer = Installer(cluster, run_site)
    env = installer.env
    try:
        # Check mode on a cluster without the operator: nothing written, and it says what it would subscribe to.
        mark = cluster.audit.mark()
        out = run_site(cluster, extra_vars=extra, extra_args=["--check"], env=env)
        assert cluster.audit.writes_since(mark) == []
        notes = [r.get("msg", "") for name, r in task_results(out) if "Stop when the ClusterPolicy" in name]
        assert any(
            "would subscribe to gpu-operator-certified/v26.3 from certified-operators" in n for n in notes
        ), notes

        out = run_site(cluster, extra_vars=extra, env=env)
        states = [s["state"] for s in json.load(open(os.path.join(str(tmp_path), "timeline.json")))["states"]]
        assert states == [
            "preflight", "gpu_machineset", "nfd", "gpu_operator", "monitoring", "scheduling", "gpu_validation"
        ]  # fmt: skip
        sub = kube.get(apis.SUBSCRIPTIONS, "gpu-operator-certified", NS)
        assert sub["spec"]["installPlanApproval"] == "Manual"
        assert sub["spec"]["startingCSV"] == sub["status"]["installedCSV"] == "gpu-operator-certified.v26.3.3"
        plan = kube.get(apis.INSTALLPLANS, sub["status"]["installPlanRef"]["name"], NS)
        assert plan["spec"]["approved"] is True
        policy = kube.get(apis.CLUSTERPOLICIES, "gpu-cluster-policy")
        assert policy["status"]["state"] == "ready"
        # The alm-example's fields stay; the collection's choices are merged in.
        assert policy["spec"]["operator"]["use_ocp_driver_toolkit"] is True
        assert policy["spec"]["mig"]["strategy"] == "single"
        nodes = gpu_nodes(kube)
        assert nodes and all(int(n["status"]["allocatable"].get("nvidia.com/gpu", 0)) > 0 for n in nodes)
        names = {d["metadata"]["name"] for d in kube.list(DAEMONSETS, NS)[0]}
        assert any(n.startswith("nvidia-driver-daemonset-4") for n in names), names
        # Monitoring on top of the operator's exporter: it collects the collection's counters (the ConfigMap named in
        # dcgmExporter.config, which the alerts need), and the alerts and dashboards are in the operator's namespace.
        assert policy["spec"]["dcgmExporter"]["config"] == {"name": "dcgm-exporter-metrics"}
        exporter = kube.get(DAEMONSETS, "nvidia-dcgm-exporter", NS)["spec"]["template"]["spec"]["containers"][0]
        assert {"name": "DCGM_EXPORTER_COLLECTORS", "value": "/etc/dcgm-exporter/dcgm-metrics.csv"} in exporter["env"]
        assert (
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"
            in kube.get(CONFIGMAPS, "dcgm-exporter-metrics", NS)["data"]["dcgm-metrics.csv"]
        )
        assert kube.get(apis.PROMETHEUSRULES, "gpuops-gpu-alerts", NS) is not None
        assert kube.get(DAEMONSETS, "nvidia-dcgm-exporter", "nvidia-gpu-driver") is None
        said = [r.get("msg", "") for name, r in task_results(out) if "Check every GPU node is monitored" in name]
        assert any("the GPU Operator's DCGM exporter serves" in str(m) for m in said), said
        # The collection's states on top: the GPU taint (scheduling) and the validation report.
        assert all(any(t["key"] == "nvidia.com/gpu" for t in n["spec"].get("taints") or []) for n in nodes)
        with open(os.path.join(str(tmp_path), "gpu-validation.json")) as handle:
            report = json.load(handle)
        assert report["failures"] == [] and sorted(r["node"] for r in report["nodes"]) == sorted(
            n["metadata"]["name"] for n in nodes
        )

        assert_rerun_writes_nothing(cluster, extra_vars=extra, env=env, user=installer.username)
        check_node_without_gpus_is_waited_for(cluster, kube, tmp_path, extra, env)

        # Time-slicing through the ClusterPolicy: the ConfigMap, devicePlugin.config, and the GPUs advertised twice.
        before = {n["metadata"]["name"]: int(n["status"]["allocatable"]["nvidia.com/gpu"]) for n in nodes}
        out = run_site(cluster, extra_vars=dict(extra, gpu_operator_time_slicing_replicas=2), env=env)
        # The operator installed: the ClusterPolicy went with the OLM objects; that apply also wrote the time-slicing
        # ConfigMap (one of its objects other than the ClusterPolicy), so the OLM steps ran as on a first install, and
        # the ClusterPolicy's own apply found it written.
        steps, action = gpu_operator_steps(out)
        assert action == "updated", steps[OLM_APPLY]
        assert not any(steps[name].get("skipped") for name in OLM_STEPS), [steps[n] for n in OLM_STEPS]
        assert [o["action"] for o in steps[OLM_STEPS[-1]]["objects"]] == ["unchanged"], steps[OLM_STEPS[-1]]
        policy = kube.get(apis.CLUSTERPOLICIES, "gpu-cluster-policy")
        assert policy["spec"]["devicePlugin"]["config"] == {"name": "time-slicing-config", "default": "any"}

        def doubled():
            now = {
                n["metadata"]["name"]: int(n["status"]["allocatable"].get("nvidia.com/gpu", 0)) for n in gpu_nodes(kube)
            }
            return now == {k: 2 * v for k, v in before.items()}

        wait_for(doubled, 120, what="GPUs advertised twice (time-slicing)")

        # The manual stack refuses to run beside the operator, before any write.
        mark = cluster.audit.mark()
        out = run_site(cluster, extra_vars={"gpuops_reports_dir": str(tmp_path)}, expect_rc=2, env=env)
        assert "the NVIDIA GPU Operator already manages this cluster's GPUs" in first_failure(out)
        assert "gpuops_stack: operator" in first_failure(out)
        assert cluster.audit.writes_since(mark) == []
    finally:
        try:
            run_site(cluster, playbook="teardown.yml", extra_vars=OPERATOR, env=env)
        finally:
            installer.remove()
    assert kube.get(apis.CLUSTERPOLICIES, "gpu-cluster-policy") is None
    wait_for(lambda: kube.get(NAMESPACES, NS) is None, 120, what="namespace %s gone" % NS)
    assert gpu_leftovers(cluster) == []
    # No request refused by RBAC, and each rule only this mode needs was used.
    events = installer.events()
    assert events and forbidden(events) == []
    own = [r for r in access.rules_for("openshift") if set(r["states"]) <= {"gpu_operator", "teardown"}]
    assert own and unused_rules(own, requests_of(events)) == []
    # and the rules marked for this mode each allowed some request no other rule does (removing one fails the run).
    installer.assert_least_privilege("openshift", paths=GPU_OPERATOR, only_paths=True)


def check_node_without_gpus_is_waited_for(cluster, kube, tmp_path, extra, env):
    """A GPU node advertising nothing while the ClusterPolicy reads ready (as after a new device plugin config: the
    policy's status has no observedGeneration, and a restarted plugin registers again seconds later) is looked at
    again until it advertises, not named at the first look."""
    node = gpu_nodes(kube)[0]["metadata"]["name"]
    (pod,) = [p for p in kube.list(PODS, NS, label_selector=PLUGIN)[0] if p["spec"].get("nodeName") == node]
    run = SiteRun(
        cluster,
        tmp_path,
        "plugin-gap",
        at=["gpu_operator::" + READ_GPU_NODES],
        extra_args=["-e", json.dumps(dict(extra, gpuops_ledger=False, gpu_operator_wait_sleep=2))],
        env=env,
    )
    assert run.wait_held(0), run.text()[-3000:]
    # The plugin's new pod cannot start (its image is not in the registry yet): the node advertises no GPU.
    images_missing(cluster.api, node, [pod["spec"]["containers"][0]["image"]])
    try:
        kube.delete(PODS, pod["metadata"]["name"], NS)
        wait_for(lambda: not int(kube.get(NODES, node)["status"]["allocatable"].get("nvidia.com/gpu", 0)), 60,
                 what="node %s advertising no GPU" % node)  # fmt: skip
        run.release(0)
        time.sleep(6)  # three looks (gpu_operator_wait_sleep 2 s); the first came a second after the release
    finally:
        images_back(cluster.api, node)
    rc = run.wait(600)
    result = run.result()
    assert rc == 0 and result and result["stats"]["localhost"]["failures"] == 0, run.text()[-3000:]
    (read,) = [r for name, r in task_results(result) if name.endswith(READ_GPU_NODES)]
    assert read["attempts"] > 1, read.get("attempts")
    # Every state checked its objects (ledger off) on the converged cluster: OLM had nothing to do, so the
    # ClusterPolicy went, unchanged, with the OLM objects and the OLM steps were skipped.
    steps, action = gpu_operator_steps(result)
    assert action == "unchanged", steps[OLM_APPLY]
    assert all(steps[name].get("skipped") for name in OLM_STEPS), [steps[n] for n in OLM_STEPS]


def test_operator_mode_refuses_beside_the_manual_stack_and_bad_inputs(cluster, kube):
    # A DaemonSet as the collection's driver state labels its own (k8s_ensure's owner labels).
    ns = "gpuops-manual-stack"
    kube.create(NAMESPACES, {"metadata": {"name": ns}})
    labels = {"app.kubernetes.io/managed-by": "gpuops.cluster", "gpuops.cluster/owner": "driver", "app": "x"}
    spec = {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": labels},
            "spec": {"nodeSelector": {"no-such": "node"}, "containers": [{"name": "c", "image": "busybox"}]}}}  # fmt: skip
    kube.create(DAEMONSETS, {"metadata": {"name": "nvidia-driver-x", "namespace": ns, "labels": labels}, "spec": spec})
    only = dict(OPERATOR, gpuops_from_state="gpu_operator", gpuops_until_state="gpu_operator")
    try:
        mark = cluster.audit.mark()
        out = run_site(cluster, extra_vars=only, expect_rc=2)
        msg = first_failure(out)
        assert (
            "this collection's own GPU stack runs on this cluster (DaemonSet gpuops-manual-stack/nvidia-driver-x)"
            in msg
        )
        assert "teardown.yml with gpuops_stack: manual" in msg
        assert cluster.audit.writes_since(mark) == []
    finally:
        kube.delete(NAMESPACES, ns)
    wait_for(lambda: kube.get(NAMESPACES, ns) is None, 60, what="namespace gone")
    for key, value, needle in (
        ("gpu_operator_channel", "v99.1", "gpu_operator: gpu_operator_channel 'v99.1' is not offered by package"),
        (
            "gpu_operator_catalog_source",
            "nope",
            "gpu_operator: gpu_operator_catalog_source 'nope' is not a CatalogSource",
        ),
        ("gpu_operator_time_slicing_replicas", 0, "gpu_operator: gpu_operator_time_slicing_replicas must be a whole"),
        ("gpu_operator_namespace", "GPU_Operator", "gpu_operator: gpu_operator_namespace must be a DNS-1123 label"),
        (
            "gpu_operator_driver_repository",
            "https://nvcr.io/nvidia",
            "gpu_operator_driver_repository (gpuops_image_registry)",
        ),
        ("gpu_operator_cluster_policy_overrides", {"spec": {"gds": {"enabled": True}}}, "not a 'spec' key"),
        ("gpu_operator_mig_strategy", "all", "gpu_operator_mig_strategy"),
        ("gpuops_stack", "helm", "gpuops_stack 'helm' is not a stack"),
    ):
        mark = cluster.audit.mark()
        out = run_site(cluster, extra_vars=only, extra_args=["-e", json.dumps({key: value})], expect_rc=2)
        assert needle in first_failure(out), (key, first_failure(out))
        assert cluster.audit.writes_since(mark) == [], key
