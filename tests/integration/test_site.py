# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""playbooks/site.yml, as `make demo` runs it, against the local cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import sys
import tarfile

import pytest
from ansible_env import engine_env
from conftest import (
    BUILD,
    PREFLIGHT_ONLY,
    assert_rerun_writes_nothing,
    extra_cluster,
    run_site,
    short_name,
    state_lines,
    task_results,
)
from inventory import differences, inventory
from kubernetes import client
from timeline_checks import (
    check_every_phase,
    check_scheduling,
    check_scheduling_gone,
    check_until_driver,
    local_inventory,
)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import control, olm  # noqa: E402

pytestmark = pytest.mark.integration
# A PEM block whose body is still there (the archive keeps only "-----BEGIN X----- <redacted> ...").
UNREDACTED_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----\s*\n[A-Za-z0-9+/=]{16,}")


def platform_fact(result):
    for task in result["plays"][0]["tasks"]:
        facts = task["hosts"]["localhost"].get("ansible_facts", {})
        if "preflight_platform" in facts:
            return facts["preflight_platform"]
    raise AssertionError("preflight_platform was never set")


def test_site_preflight_detects_the_platform_and_writes_nothing(cluster, tmp_path):
    assert os.path.isdir(BUILD)
    mark = cluster.audit.mark()
    # An existing report directory: creating one is the only change a first run may make.
    result = run_site(cluster, extra_vars=dict(PREFLIGHT_ONLY, gpuops_reports_dir=str(tmp_path)))
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


def test_site_stops_before_any_write_where_the_gpu_operator_runs(cluster, tmp_path):
    """The GPU Operator installed through OLM (the certified package, its ClusterPolicy): preflight names it and
    stops; nothing is written. Without the ClusterPolicy the Subscription alone is named too."""
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile (OLM)")
    from simopenshift import apis
    from simopenshift.kube import CRDS, NAMESPACES
    from simopenshift.testing import Client, wait_for
    from test_sim_olm import csv_phase, operator_group, subscription

    kube = Client(cluster.api)
    ns = "nvidia-gpu-operator"
    kube.create(NAMESPACES, {"metadata": {"name": ns}})
    try:
        operator_group(kube, ns, [ns])
        subscription(kube, ns, package="gpu-operator-certified", channel="v26.3", source="certified-operators")
        wait_for(
            lambda: csv_phase(kube, ns, "gpu-operator-certified.v26.3.3") == "Succeeded", 60, what="GPU Operator CSV"
        )
        wait_for(lambda: kube.get(CRDS, "clusterpolicies.nvidia.com"), 30, what="ClusterPolicy CRD")
        # The ClusterPolicy a user creates from the CSV's alm-examples (the real CRD refuses an empty spec).
        csv = kube.get(apis.CSVS, "gpu-operator-certified.v26.3.3", ns)
        examples = json.loads(csv["metadata"]["annotations"]["alm-examples"])
        policy = [e for e in examples if e["kind"] == "ClusterPolicy"][0]
        wait_for(lambda: kube.create(apis.CLUSTERPOLICIES, policy), 30, what="ClusterPolicy served")
        mark = cluster.audit.mark()
        out = run_site(cluster, extra_vars=dict(PREFLIGHT_ONLY, gpuops_reports_dir=str(tmp_path)), expect_rc=2)
        # The first failure is preflight's; site.yml's rescue then ends the run naming the state.
        msg = [r.get("msg") for dummy, r in task_results(out) if r.get("failed")][0]
        assert msg.startswith(
            "preflight: the NVIDIA GPU Operator already manages this cluster's GPUs (ClusterPolicy gpu-cluster-policy; "
            "Subscription nvidia-gpu-operator/gpu-operator-certified)."
        ), msg
        assert "remove the GPU Operator" in msg and "preflight_allow_gpu_operator" in msg
        assert cluster.audit.writes_since(mark) == []
        # The check can be lifted, for a ClusterPolicy whose operands are all disabled.
        out = run_site(
            cluster,
            extra_vars=dict(PREFLIGHT_ONLY, gpuops_reports_dir=str(tmp_path), preflight_allow_gpu_operator=True),
        )
        assert out["stats"]["localhost"]["failures"] == 0
    finally:
        kube.delete(apis.CLUSTERPOLICIES, "gpu-cluster-policy")
        kube.delete(NAMESPACES, ns)
        # Until the namespace is gone its Subscription still says the GPU Operator is there (the next test's
        # preflight would stop, rightly).
        wait_for(lambda: kube.get(NAMESPACES, ns) is None, 120, what="namespace %s gone" % ns)


def test_connection_is_set_once_through_the_action_group(cluster, tmp_path):
    """The role's tasks carry no kubeconfig/context: module_defaults on the collection's group reach them.

    No K8S_AUTH_KUBECONFIG and a HOME without ~/.kube/config: only gpuops_kubeconfig can connect.
    platform_info is the collection's own module, so this also proves our group lists it.
    """
    env = {"K8S_AUTH_KUBECONFIG": None, "KUBECONFIG": None, "HOME": str(tmp_path)}
    result = run_site(cluster, env=env, extra_vars=dict(PREFLIGHT_ONLY, gpuops_kubeconfig=cluster.kubeconfig))
    assert platform_fact(result)["kubernetes_version"] == "v1.34.10"

    # A context the kubeconfig lacks reaches the first module of the role, which names it.
    failed = run_site(
        cluster,
        env=env,
        extra_vars=dict(PREFLIGHT_ONLY, gpuops_kubeconfig=cluster.kubeconfig, gpuops_context="no-such-context"),
        expect_rc=2,
    )
    first = failed["plays"][0]["tasks"]
    messages = [t["hosts"]["localhost"].get("msg", "") for t in first if t["hosts"]["localhost"].get("failed")]
    assert messages and "no-such-context" in messages[0], messages

    # Without any connection setting the role cannot reach a cluster at all (nothing else is hidden).
    run_site(cluster, env=env, extra_vars=PREFLIGHT_ONLY, expect_rc=2)


STATES = [
    "preflight",
    "gpu_machineset",
    "entitlement",
    "nfd",
    "driver",
    "container_toolkit",
    "device_plugin",
    "gpu_feature_discovery",
    "monitoring",
    "scheduling",
    "gpu_validation",
]
# nfd_labelled is not among them: NFD's master writes GFD's labels later under the same manager, which moves
# the time the API keeps for the GPU label past the driver's Ready (the timeline then says unknown).
STEPS = ("machine_created", "node_ready", "driver_ready", "toolkit_ready", "allocatable", "validated")


def ran_tasks(result):
    return [t["task"]["name"] for t in result["plays"][0]["tasks"]]


def test_site_rejects_an_unknown_state_before_any_request(cluster):
    mark = cluster.audit.mark()
    out = run_site(cluster, extra_vars={"gpuops_from_state": "toolkit"}, expect_rc=2)
    msgs = [
        t["hosts"]["localhost"].get("msg", "")
        for t in out["plays"][0]["tasks"]
        if t["hosts"]["localhost"].get("failed")
    ]
    assert msgs and "gpuops_from_state: 'toolkit' is not a state" in msgs[0], msgs
    assert cluster.audit.writes_since(mark) == []


def test_site_check_mode_on_a_fresh_cluster_runs_to_the_end_and_writes_nothing(cluster, tmp_path):
    mark = cluster.audit.mark()
    out = run_site(cluster, extra_vars={"gpuops_reports_dir": str(tmp_path)}, extra_args=["--check"])
    assert cluster.audit.writes_since(mark) == []
    names = ran_tasks(out)
    assert "Timeline - keep it" in names  # the timeline module ran (it only reads)
    # Every state ran its role (each says what it would do, or why it is skipped).
    text = "\n".join(state_lines(out))
    for state in STATES[1:]:
        assert state + ":" in text, (state, text[-3000:])
    assert not os.path.exists(os.path.join(str(tmp_path), "timeline.json"))


def gpu_leftovers(cluster):
    """GPU MachineSets (ours), their Machines and Nodes, and nodes advertising GPUs."""
    inv = inventory(cluster.api)
    left = [k for k, v in inv.get("MachineSet", {}).items() if v["labels"].get("gpuops.cluster/owner")]
    left += [k for k, v in inv.get("Machine", {}).items() if "-gpu-" in k]
    left += [k for k, v in inv.get("Node", {}).items() if v["gpu_resources"] or "-gpu-" in k]
    return left


@pytest.fixture(scope="module")
def fresh_cluster(request):
    """An OpenShift cluster as fresh: the inventory before site.yml is the fresh cluster's.

    The worker's shared OpenShift cluster, put back to its seed state before this file if another file used it
    (conftest.py, cluster_reset.py); this file's earlier tests write nothing. Under GPUOPS_TEST_PROFILE=kubernetes,
    an OpenShift cluster of its own.
    """
    if os.environ.get("GPUOPS_TEST_PROFILE", "openshift") == "openshift":
        yield request.getfixturevalue("cluster")
    else:
        with extra_cluster("site", "openshift") as c:
            yield c


def diagnose(cluster, reports, archive, expect_rc=0, extra_args=None):
    extra = {"gpuops_reports_dir": reports, "gpuops_diagnose_archive": archive}
    if expect_rc:
        extra["gpuops_diagnose_fail"] = "true"
    return state_lines(
        run_site(cluster, playbook="diagnose.yml", extra_vars=extra, expect_rc=expect_rc, extra_args=extra_args)
    )


def check_diagnose(cluster, reports):
    """diagnose.yml on the converged cluster: every GPU node ok, nothing written to the cluster, the archive holds what
    a support case needs and no secret, check mode writes no archive; then two levers, each named on its node."""
    with open(os.path.join(reports, "gpu-validation.json")) as f:
        gpu_nodes = sorted(n["node"] for n in json.load(f)["nodes"])
    mark = cluster.audit.mark()
    archive = os.path.join(reports, "case.tar.gz")
    lines = diagnose(cluster, reports, archive)
    assert cluster.audit.writes_since(mark) == []
    assert "GPU nodes: {0} (0 with a problem, 0 with a warning, {0} ok)".format(len(gpu_nodes)) in lines, lines
    assert "archive: " + archive in lines, lines
    with tarfile.open(archive) as tar:
        members = dict((m.name.split("/", 1)[1], tar.extractfile(m).read().decode()) for m in tar.getmembers())
    for name in ["summary.txt", "summary.md", "summary.json", "cluster/ledger.json", "cluster/events.json",
                 "cluster/daemonsets.json", "cluster/validation-record.json", "reports/timeline.json",
                 "reports/gpu-validation.json"] + ["nodes/%s.json" % n for n in gpu_nodes]:  # fmt: skip
        assert name in members, (name, sorted(members))
    logs = [m for m in members if m.startswith("logs/")]
    assert any("/nvidia-driver" in m or "driver" in m for m in logs) and len(logs) >= 4 * len(gpu_nodes), logs
    assert [n["node"] for n in json.loads(members["summary.json"])] == gpu_nodes
    assert not [m for m, text in members.items() if UNREDACTED_PEM.search(text)]
    # Check mode: the same table, no archive.
    dry = os.path.join(reports, "dry.tar.gz")
    assert "archive: not written (check mode)" in diagnose(cluster, reports, dry, extra_args=["--check"])
    assert not os.path.exists(dry) and cluster.audit.writes_since(mark) == []

    # Levers: one node's DCGM exporter loses its host engine, another node's kubelet stops. With one GPU node both
    # are that node's, and a kubelet that stopped reports nothing more of its pods (the simulator freezes such a
    # node): the kubelet stops only once the exporter's crash shows, or a loaded machine can freeze it first.
    crashed, stopped = gpu_nodes[0], gpu_nodes[-1]
    control.exporter_down(cluster.api, crashed)
    core = client.CoreV1Api(cluster.api)

    def exporter_crashed():
        pods = core.list_pod_for_all_namespaces(
            field_selector="spec.nodeName=" + crashed, label_selector="app.kubernetes.io/component=dcgm-exporter"
        ).items
        return pods and not any(all(c.ready for c in p.status.container_statuses or []) for p in pods)

    control.wait_for(exporter_crashed, 60, what="the exporter on {0} not ready".format(crashed))
    control.break_node(cluster.api, stopped)
    seen = {}
    try:

        def named():
            try:
                out = diagnose(cluster, reports, archive, expect_rc=2)
            except AssertionError as exc:
                seen["last"] = str(exc)[-3000:]
                return None  # not yet a problem on any node
            text = "\n".join(out)
            seen["last"] = text
            ok = "dcgm_remote_hostengine_unreachable" in text and "node_not_ready_kubelet_stopped" in text
            return out if ok else None

        try:
            lines = control.wait_for(named, 120, interval=1, what="diagnose names both levers")
        except AssertionError as exc:
            raise AssertionError("%s; diagnose's last answer:\n%s" % (exc, seen.get("last")))
    finally:
        control.exporter_up(cluster.api, crashed)
        control.repair_node(cluster.api, stopped)
    block = "\n".join(lines)
    broken = sorted({crashed, stopped})  # one node when the cluster has one GPU node
    assert "{0} with a problem".format(len(broken)) in block, lines
    # Each cause under its own node (the text from a node's header to the next one's).
    starts = sorted((block.index(node + " [problem]"), node) for node in broken)
    sections = dict(
        (node, block[at : (starts[i + 1][0] if i + 1 < len(starts) else len(block))])
        for i, (at, node) in enumerate(starts)
    )
    assert "dcgm_remote_hostengine_unreachable" in sections[crashed], block
    assert "node_not_ready_kubelet_stopped" in sections[stopped], block
    assert any(line.startswith("{0} GPU node(s) with a problem: ".format(len(broken))) for line in lines), lines
    control.wait_for(lambda: control.node_is_ready(cluster.api, stopped), 60, what=stopped + " Ready again")


def check_a_failure_drops_the_ledgers_records(cluster, reports):
    """Something no ledger record shows breaks - a quota someone else put in the validation namespace (not ours, so
    not read) - and the nodes are re-validated (gpu_validation_force): the run, whose states the ledger all skips,
    fails in gpu_validation and drops the records; the next run runs every state, saying why, writes nothing but
    the ledger, and records again."""
    core = client.CoreV1Api(cluster.api)
    namespace, ledger = "nvidia-gpu-driver", ("gpuops-state-ledger", "kube-system")
    core.create_namespaced_resource_quota(namespace, {"metadata": {"name": "freeze"}, "spec": {"hard": {"pods": "0"}}})
    try:
        failed = run_site(
            cluster, extra_vars={"gpuops_reports_dir": reports, "gpu_validation_force": "true"}, expect_rc=2
        )
    finally:
        core.delete_namespaced_resource_quota("freeze", namespace)
    lines = state_lines(failed)
    assert "ledger: skipped, unchanged since their last good run: " + ", ".join(STATES[1:-1]) in lines, lines
    said = [line for line in lines if line.startswith("gpu_validation failed (")]
    assert said and said[-1].endswith("The ledger dropped its records: the next run runs every state."), lines
    data = core.read_namespaced_config_map(*ledger).data
    assert list(data) == ["last-failure"], data
    assert json.loads(data["last-failure"])["state"] == "gpu_validation"

    mark = cluster.audit.mark()
    rerun = run_site(cluster, extra_vars={"gpuops_reports_dir": reports})
    lines = state_lines(rerun)
    runs = [line for line in lines if line.startswith("ledger: runs ")]
    assert runs[0].startswith("ledger: runs gpu_machineset: its record was dropped because the run of "), lines
    assert "failed in gpu_validation" in runs[0] and len(runs) == len(STATES) - 2, runs
    writes = [(w["verb"], w["resource"], w["name"]) for w in cluster.audit.writes_since(mark)]
    assert [w for w in writes if w[1:] != ("configmaps", ledger[0])] == [] and writes, writes
    recorded = core.read_namespaced_config_map(*ledger).data
    assert "last-failure" not in recorded

    # A refusal in a state's preflight (a bad driver input) keeps the records and writes nothing at all.
    mark = cluster.audit.mark()
    refused = run_site(
        cluster, extra_vars={"gpuops_reports_dir": reports, "driver_namespace": "Not_A_Namespace"}, expect_rc=2
    )
    lines = state_lines(refused)
    said = [line for line in lines if line.startswith("driver failed (")]
    assert said and said[-1].endswith(
        "The ledger kept its records: the run stopped before the state wrote anything."
    ), lines
    assert cluster.audit.writes_since(mark) == [] and core.read_namespaced_config_map(*ledger).data == recorded


def test_site_converges_each_state_then_a_rerun_writes_nothing(fresh_cluster, tmp_path):
    cluster = fresh_cluster
    reports = str(tmp_path)
    before = inventory(cluster.api)
    inv = local_inventory()
    try:
        # To the driver only: the timeline's nfd phase is the time of nfd-master's managedFields entry.
        run_site(cluster, extra_vars={"gpuops_reports_dir": reports, "gpuops_until_state": "driver"})
        check_until_driver(cluster, reports)
        # Then every state (the ledger skips the four that ran): every phase has a time, and the local
        # inventory's GPU taint, PriorityClasses and tenant quota are in place.
        first = run_site(cluster, extra_vars={"gpuops_reports_dir": reports})
        check_scheduling(cluster, check_every_phase(cluster, reports), inv)
        with open(os.path.join(reports, "timeline.json")) as f:
            timeline = json.load(f)
        assert [s["state"] for s in timeline["states"]] == STATES
        assert all(s["seconds"] is not None for s in timeline["states"])
        assert timeline["nodes"], "no GPU node in the timeline"
        for row in timeline["nodes"]:
            assert all(row["steps"][k] for k in STEPS), row
            assert row["seconds"]["total"] > 0, row
        assert first["stats"]["localhost"]["failures"] == 0
        # Every GPU node validated: the reports of the last state, and its table in the output.
        with open(os.path.join(reports, "gpu-validation.json")) as f:
            report = json.load(f)
        assert report["failures"] == [] and report["summary"]["failed"] == 0, report["failures"]
        assert sorted(n["node"] for n in report["nodes"]) == sorted(r["node"] for r in timeline["nodes"])
        for ext in ("xml", "md"):
            assert os.path.getsize(os.path.join(reports, "gpu-validation." + ext)) > 0

        # The re-run: the ledger skips every state that changed nothing since the first run; gpu_validation
        # still checks every GPU node.
        second = assert_rerun_writes_nothing(cluster, extra_vars={"gpuops_reports_dir": reports})
        lines = state_lines(second)
        assert "ledger: skipped, unchanged since their last good run: " + ", ".join(STATES[1:-1]) in lines, lines
        assert not any(line.startswith("ledger: runs") for line in lines), lines
        # preflight's module run read the GPU stack's namespace: gpu_validation's check that it exists starts none.
        ns_reads = [
            res for name, res in task_results(second) if name.endswith("gpu_validation : Read the GPU stack namespace")
        ]
        assert len(ns_reads) == 1 and ns_reads[0].get("skipped"), ns_reads
        assert platform_fact(second)["gpu_namespace"] == {"name": "nvidia-gpu-driver", "exists": True}
        # The ledger was asked in preflight's module run: its own task started no module ...
        asked = [res for name, res in task_results(second) if name.startswith("Ask the ledger")]
        assert len(asked) == 1 and asked[0].get("skipped"), asked
        # ... which it does in a run that starts after preflight, with the same answer.
        later = run_site(cluster, extra_vars={"gpuops_reports_dir": reports, "gpuops_from_state": "monitoring"})
        asked = [res for name, res in task_results(later) if name.startswith("Ask the ledger")]
        assert len(asked) == 1 and asked[0].get("skip") == ["monitoring", "scheduling"], asked
        assert "ledger: skipped, unchanged since their last good run: monitoring, scheduling" in state_lines(later)
        # Every state's own no-op path, under Mitogen (ENGINE=mitogen, the documented accelerator), with the
        # ledger off: every state runs, and still nothing is written.
        third = assert_rerun_writes_nothing(
            cluster, env=engine_env("mitogen"), extra_vars={"gpuops_reports_dir": reports, "gpuops_ledger": "false"}
        )
        lines = state_lines(third)
        assert "ledger: runs gpu_machineset: forced (gpuops_ledger is off)" in lines, lines
        assert not any(line.startswith("ledger: skipped") for line in lines), lines
        # The states' own tasks (the run's own tasks, around the states, are the same in both).
        state_tasks = [
            len([t for t in r["plays"][0]["tasks"] if "/roles/" in t["task"]["path"]]) for r in (second, third)
        ]
        assert state_tasks[1] > 3 * state_tasks[0], state_tasks
        # Reads whose answer the run already has start no module: GFD's of the namespace the driver state made
        # and of the ConfigMap the device plugin's state, without a config, pruned; the plugin's of the nodes'
        # config labels, which select nothing without a config.
        reads = [
            res
            for name, res in task_results(third)
            if short_name(name).startswith(
                ("Read the GPU stack namespace and the sharing", "Read the nodes that select a plugin")
            )
        ]
        assert len(reads) == 2 and all(res.get("skipped") for res in reads), reads

        # Something a state made is deleted: that state runs again (and the states after it), the earlier
        # ones stay skipped, and the object is back.
        apps = client.AppsV1Api(cluster.api)
        plugin = apps.list_daemon_set_for_all_namespaces(label_selector="gpuops.cluster/owner=device_plugin").items[0]
        apps.delete_namespaced_daemon_set(plugin.metadata.name, plugin.metadata.namespace)
        fourth = run_site(cluster, extra_vars={"gpuops_reports_dir": reports})
        lines = state_lines(fourth)
        gone = "ledger: runs device_plugin: DaemonSet {0}/{1} is gone".format(
            plugin.metadata.namespace, plugin.metadata.name
        )
        assert gone in lines, lines
        assert "ledger: skipped, unchanged since their last good run: " + ", ".join(STATES[1:6]) in lines, lines
        again = apps.read_namespaced_daemon_set(plugin.metadata.name, plugin.metadata.namespace)
        assert again.metadata.uid != plugin.metadata.uid
        check_a_failure_drops_the_ledgers_records(cluster, reports)
        assert_rerun_writes_nothing(cluster, extra_vars={"gpuops_reports_dir": reports})
        check_diagnose(cluster, reports)
    finally:
        run_site(cluster, playbook="teardown.yml")
    # Teardown returns the cluster to what it was before site.yml.
    check_scheduling_gone(cluster, inv)
    assert gpu_leftovers(cluster) == []
    # OLM never deletes the CRDs of an operator it removes (nor does the collection, roles/nfd/README.md): the NFD
    # operator's stay, as on a real cluster.
    olm_crds = set(crd for dummy, crds in olm.NFD_OWNED_CRDS for crd in crds)
    left = [
        line
        for line in differences(before, inventory(cluster.api))
        if not (line.endswith(": left behind") and line.split(" ", 1)[1][1 : -len(": left behind")] in olm_crds)
    ]
    assert left == [], "\n".join(left)
    # A second teardown changes nothing.
    mark = cluster.audit.mark()
    again = run_site(cluster, playbook="teardown.yml")
    assert again["stats"]["localhost"]["changed"] == 0
    assert cluster.audit.writes_since(mark) == []
