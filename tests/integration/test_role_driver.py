# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The driver role on the simulated clusters.

OpenShift 4.16 (the shared ``cluster``): one GPU MachineSet and NFD made by hand, then the role: check mode on
the fresh cluster (zero writes), converge (one Driver Toolkit build, one DaemonSet per kernel, Ready, validated),
a no-op re-run (zero writes), bad inputs (each named in preflight, zero writes), a failed build (named with its
reason and log tail), a driver pod crash-looping after a kernel change (named with node, pod and cause), a
kernel upgrade (exactly one new build and one new DaemonSet, the old one pruned and reported), absent twice.
OpenShift 4.19 (``ocp419_cluster``, os-release ID=rhel): the Driver Toolkit tag and ``-rhel9.6`` image per node.
Kubernetes (``k8s_cluster``, bare Ubuntu GPU nodes): one precompiled DaemonSet per kernel, Ready.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import uuid

import pytest
from conftest import changed_tasks, failed_message, run_bad_inputs, run_role, task_results

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog, control, testing  # noqa: E402
from simopenshift.kube import DAEMONSETS, NAMESPACES, NODES, PODS, Resource, labels_of  # noqa: E402
from simopenshift.testing import (  # noqa: E402
    Client,
    clone_machineset,
    delete_machineset,
    node_label,
    ready_nodes_of,
    start_nfd_worker,
    stop_nfd_worker,
    wait_for,
    worker_machinesets,
)

pytestmark = pytest.mark.integration
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")

NS = "nvidia-gpu-driver"
NFD = "feature.node.kubernetes.io/"
KERNEL_LABEL = NFD + "kernel-version.full"
OLD_KERNEL = catalog.release_build("4.16").kernel  # 5.14.0-427.22.1.el9_4.x86_64, RHCOS 416.94...
NEW_KERNEL = "5.14.0-427.50.1.el9_4.x86_64"  # RHCOS 417.94.202409121747-0 (data/rhcos-builds.csv)
# A kernel no Driver Toolkit of the cluster carries: its build fails (DockerBuildFailed).
ORPHAN_KERNEL = "5.14.0-427.99.1.el9_4.x86_64"
NFD_CR = "nfd-instance"
NFD_NS = "openshift-nfd"
FAST = {"driver_wait_timeout": 10}


# The platform preflight detected on each cluster, handed to later runs as site.yml does (preflight runs once per
# play, the states reuse its fact): the first run of the role on a cluster detects it for real.
PLATFORMS = {}


def driver(cluster, role_vars=None, check=False):
    """Run the driver role; the platform fact of the first run on this cluster is reused by the next ones."""
    role_vars = dict(role_vars or {})
    if cluster.workdir in PLATFORMS:
        role_vars["preflight_platform"] = PLATFORMS[cluster.workdir]
    out = run_role(cluster, "driver", role_vars, check=check)
    for name, res in task_results(out):
        platform = (res.get("ansible_facts") or {}).get("preflight_platform")
        if name.endswith("Record the detected platform for later states") and platform:
            PLATFORMS[cluster.workdir] = platform
    return out


def nfd_cr(prune):
    return {
        "apiVersion": apis.NODEFEATUREDISCOVERIES.api_version,
        "kind": "NodeFeatureDiscovery",
        "metadata": {"name": NFD_CR, "namespace": NFD_NS},
        "spec": {
            "operand": {"image": "registry.redhat.io/openshift4/ose-node-feature-discovery-rhel9:v4.16"},
            # The labels go with the CR when the test removes it (the cluster is left as found).
            "prunerOnDelete": prune,
        },
    }


VALIDATE = "gpuops.cluster.driver : Validate the driver on every GPU node"
ROLLOUT = "gpuops.cluster.driver : Replace outdated driver pods node by node (cordon, evict GPU pods, reload, validate, uncordon)"
DAEMONSETS_TASK = (
    "gpuops.cluster.driver : Ensure the driver DaemonSets (one per kernel; those of kernels no node runs are pruned)"
)


def ran(out):
    return [name for name, res in task_results(out) if not res.get("skipped")]


def daemonsets_task(out):
    """The result of the DaemonSets' k8s_ensure (its followers: the rollout or the driver check)."""
    return [res for name, res in task_results(out) if name == DAEMONSETS_TASK][-1]


def driver_daemonsets(kube):
    return {
        d["metadata"]["name"]: d
        for d in kube.list(DAEMONSETS, NS)[0]
        if labels_of(d).get("app.kubernetes.io/component") == "nvidia-driver"
    }


def builds(kube):
    return sorted(b["metadata"]["name"] for b in kube.list(apis.BUILDS, NS)[0])


def writes(cluster, mark, dry_runs=False):
    return cluster.audit.writes_since(mark, include_dry_run=dry_runs)


def driver_result(out):
    """The last driver_result fact the run set."""
    found = None
    for _name, res in task_results(out):
        facts = res.get("ansible_facts") or {}
        if "driver_result" in facts:
            found = facts["driver_result"]
        for item in res.get("results") or []:
            if "driver_result" in (item.get("ansible_facts") or {}):
                found = item["ansible_facts"]["driver_result"]
    return found


def debug_lines(out, task):
    for name, res in task_results(out):
        if name.endswith(" : " + task):
            msg = res.get("msg")
            return msg if isinstance(msg, list) else [msg]
    return []


def drop_nfd_cr(kube, prune):
    """Delete the NodeFeatureDiscovery CR (its labels go with it when ``prune``) and wait for its operands to go."""
    if kube.get(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS) is None:
        return
    kube.patch(apis.NODEFEATUREDISCOVERIES, NFD_CR, {"spec": {"prunerOnDelete": prune}}, NFD_NS)
    kube.delete(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS)
    wait_for(lambda: kube.get(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS) is None, 30, what="NFD CR gone")
    wait_for(lambda: not kube.list(DAEMONSETS, NFD_NS)[0], 30, what="nfd-worker gone")


@pytest.fixture(scope="module")
def gpu(cluster):
    """One g4dn.xlarge GPU node (tainted) labelled by the simulated NFD operator; removed afterwards.

    The NodeFeatureDiscovery CR is this module's (another one is put back afterwards): the crash-loop test stops
    NFD with the labels kept, as a real nfd-worker that has not relabelled a rebooted node yet.
    """
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile")
    kube = Client(cluster.api)
    source = worker_machinesets(kube)[0]
    ms = "%s-gpu-drv-%s" % (source["metadata"]["name"].rsplit("-worker-", 1)[0], uuid.uuid4().hex[:4])
    clone_machineset(
        kube,
        source,
        ms,
        "g4dn.xlarge",
        replicas=1,
        node_labels={"node-role.kubernetes.io/gpu": ""},
        taints=[{"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"}],
    )
    saved = kube.get(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS)
    try:
        (node,) = ready_nodes_of(kube, ms, 1, timeout=90)
        name = node["metadata"]["name"]
        if saved is not None:
            drop_nfd_cr(kube, prune=bool((saved.get("spec") or {}).get("prunerOnDelete")))
        testing.ensure_namespace(kube, NFD_NS)
        kube.create(apis.NODEFEATUREDISCOVERIES, nfd_cr(prune=False))
        wait_for(lambda: node_label(kube, name, KERNEL_LABEL) == OLD_KERNEL, 60, what="NFD kernel label")
        yield kube, name
    finally:
        if kube.get(NAMESPACES, NS) is not None or driver_daemonsets(kube):
            driver(cluster, {"driver_state": "absent"})
        delete_machineset(kube, ms)
        drop_nfd_cr(kube, prune=True)
        if saved is not None:
            kube.create(
                apis.NODEFEATUREDISCOVERIES,
                {
                    "apiVersion": saved["apiVersion"],
                    "kind": saved["kind"],
                    "metadata": {"name": NFD_CR, "namespace": NFD_NS},
                    "spec": saved.get("spec") or {},
                },
            )


# (variables, start of the message). Choices are refused by the role's argument specs (include_role validates
# them before any task); everything else by preflight's asserts, with the variable named after "driver: ".
ARGSPEC = "Validation of arguments failed:\nvalue of "
BAD_INPUTS = [
    ({"driver_version": "latest"}, "driver: driver_version must be"),
    ({"driver_namespace": "GPU_Driver"}, "driver: driver_namespace must be"),
    ({"driver_image_registry": "NVCR.io/nvidia:580"}, "driver: driver_image_registry"),
    ({"driver_precompiled_version": "r580"}, "driver: driver_precompiled_version must be"),
    ({"driver_build_timeout": 30}, "driver: driver_build_timeout must be"),
    ({"driver_wait_timeout": 0}, "driver: driver_wait_timeout must be"),
    ({"driver_build_mode": "entitlement"}, "driver: driver_build_mode entitlement needs the cluster-wide entitlement"),
    ({"driver_build_mode": "magic"}, ARGSPEC + "driver_build_mode must be one of"),
    ({"driver_update_strategy": "Sometimes"}, ARGSPEC + "driver_update_strategy must be one of"),
]
PREFLIGHT_STOPS = ("Stop on a bad driver input", "Check the entitlement exists (entitlement mode)")


def test_bad_inputs_fail_in_preflight_with_zero_writes(cluster, gpu):
    """Each bad input alone, in one playbook (one rescued block per input): named in preflight, nothing written."""
    mark = cluster.audit.mark()
    out, failures = run_bad_inputs(cluster, [("driver", bad) for bad, _msg in BAD_INPUTS])
    assert len(failures) == len(BAD_INPUTS), failures
    for (name, msg), (bad, expected) in zip(failures, BAD_INPUTS):
        assert msg.startswith(expected), (bad, msg)
        assert name.endswith(PREFLIGHT_STOPS) or msg.startswith(ARGSPEC), (bad, name)
    # Every role run stopped in preflight: no apply task ran.
    ran = [name for name, _res in task_results(out)]
    assert [n for n in ran if "Stop on a bad driver input" in n]
    assert not [n for n in ran if "Ensure the driver" in n or "Build (or name)" in n], ran
    assert writes(cluster, mark, dry_runs=True) == []


def test_check_mode_on_fresh_cluster_then_converge_and_noop(cluster, gpu):
    kube, node = gpu
    assert kube.get(NAMESPACES, NS) is None

    mark = cluster.audit.mark()
    out = driver(cluster, check=True)
    assert failed_message(out) is None
    said = " ".join(str(m) for m in debug_lines(out, "Say what the state would do (check mode)"))
    assert "would create namespace %s" % NS in said and OLD_KERNEL in said
    assert writes(cluster, mark, dry_runs=True) == []

    out = driver(cluster, FAST)
    assert failed_message(out) is None
    # A first run has nothing to roll: the DaemonSets' module run validated the driver (its gpu_validate follower),
    # so neither the rollout nor the verify step started a module.
    assert VALIDATE not in ran(out) and ROLLOUT not in ran(out), ran(out)
    checked = daemonsets_task(out)["gpu_validate"]
    assert checked["passed"] is True and [n["node"] for n in checked["nodes"]] == [node], checked
    assert "driver_rollout" not in daemonsets_task(out)
    daemonsets = driver_daemonsets(kube)
    assert len(daemonsets) == 1
    (ds,) = daemonsets.values()
    assert ds["metadata"]["annotations"]["gpuops.cluster/kernel"] == OLD_KERNEL
    spec = ds["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {KERNEL_LABEL: OLD_KERNEL}
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert [t["matchExpressions"][0]["key"] for t in terms] == [
        NFD + "pci-10de.present",
        NFD + "pci-0302_10de.present",
        NFD + "pci-0300_10de.present",
    ]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
    assert spec["priorityClassName"] == "system-node-critical" and spec["hostPID"] is True
    assert spec["containers"][0]["securityContext"]["privileged"] is True
    # A running driver is never replaced by the DaemonSet controller (GPU Operator: OnDelete).
    assert ds["spec"]["updateStrategy"]["type"] == "OnDelete"
    image = spec["containers"][0]["image"]
    assert image.endswith(":595.91.07-%s-rhcos4.16" % OLD_KERNEL)
    assert image.startswith(catalog.INTERNAL_REGISTRY + "/%s/nvidia-gpu-driver:" % NS)
    # The built image carries the modules: the pod loads them, with the type they were built with, and the
    # GSP firmware is reachable by the host kernel.
    container = spec["containers"][0]
    assert container["command"] == ["nvidia-driver"] and container["args"] == ["load"]
    env = dict((e["name"], e.get("value")) for e in container["env"])
    assert env["KERNEL_MODULE_TYPE"] == "open" and env["DRIVER_VERSION"] == "595.91.07"
    mounts = dict((m["name"], m["mountPath"]) for m in container["volumeMounts"])
    assert mounts["nv-firmware"] == "/lib/firmware"
    assert mounts["firmware-search-path"] == "/sys/module/firmware_class/parameters/path"
    # The build: FROM NVIDIA's driver image, modules compiled on the Driver Toolkit of the node's RHCOS build.
    (bc,) = kube.list(apis.BUILDCONFIGS, NS)[0]
    strategy = bc["spec"]["strategy"]["dockerStrategy"]
    assert strategy["from"] == {"kind": "DockerImage", "name": "nvcr.io/nvidia/driver:595.91.07-rhcos4.16"}
    args = dict((a["name"], a["value"]) for a in strategy["buildArgs"])
    assert args["DTK_IMAGE"] == catalog.dtk_image("416.94.202406172220-0") and args["KERNEL_MODULE_TYPE"] == "open"
    assert len(builds(kube)) == 1
    # Privileged SCC for the service account (OpenShift).
    role = kube.get(ROLES, "nvidia-driver-privileged-scc", NS)
    assert role["rules"][0]["resourceNames"] == ["privileged"] and role["rules"][0]["verbs"] == ["use"]
    pods = [p for p in kube.list(PODS, NS)[0] if p["spec"].get("nodeName") == node]
    assert pods and all(c["ready"] for p in pods for c in p["status"]["containerStatuses"])
    result = driver_result(out)
    assert result["ready"] is True and result["mode"] == "driver-toolkit"
    assert result["kernels"][OLD_KERNEL]["nodes"] == [node]
    assert result["kernels"][OLD_KERNEL]["image"] == image

    mark = cluster.audit.mark()
    out = driver(cluster, FAST)
    assert failed_message(out) is None
    assert changed_tasks(out) == []
    assert writes(cluster, mark) == []
    # The re-run: the rollout (nothing to roll) ran in the DaemonSets' module run and validated the driver there
    # (verify_checks): no module of its own, no gpu_validate.
    assert ROLLOUT not in ran(out) and VALIDATE not in ran(out), ran(out)
    rolled = daemonsets_task(out)["driver_rollout"]
    assert rolled["waves"] == [] and rolled["msg"].startswith("nothing to roll: 1 GPU node(s) current"), rolled
    assert rolled["verify"]["passed"] is True and "gpu_validate" not in daemonsets_task(out)
    assert driver_result(out)["ready"] is True


def test_failed_build_is_named_with_reason_and_log_tail(cluster, gpu):
    kube, node = gpu
    # Same RHCOS build (so the same Driver Toolkit tag), another kernel: the DTK kernel does not match.
    control.upgrade_kernel(cluster.api, node, ORPHAN_KERNEL, rhcos_build="416.94.202406172220-0")
    try:
        wait_for(lambda: node_label(kube, node, KERNEL_LABEL) == ORPHAN_KERNEL, 30, what="NFD relabel")
        before = set(driver_daemonsets(kube))
        out = driver(cluster, FAST)
        msg = failed_message(out)
        assert msg.startswith("driver: 1 of 1 driver build(s) failed"), msg
        assert "nvidia-gpu-driver-%s" % ORPHAN_KERNEL.replace("_", "-")[:20] in msg
        assert "DockerBuildFailed" in msg and "make: *** /lib/modules/%s/build" % ORPHAN_KERNEL in msg
        # Stopped before the DaemonSets: nothing pruned, nothing added.
        assert set(driver_daemonsets(kube)) == before
    finally:
        control.upgrade_kernel(cluster.api, node, OLD_KERNEL)
        wait_for(lambda: node_label(kube, node, KERNEL_LABEL) == OLD_KERNEL, 30, what="NFD relabel back")


def test_crash_loop_named_then_kernel_upgrade_gives_one_build_and_one_daemonset(cluster, gpu):
    kube, node = gpu
    old_builds = set(builds(kube))
    (old_ds,) = [n for n, d in driver_daemonsets(kube).items() if OLD_KERNEL in str(d["metadata"]["annotations"])]

    # NFD stops (labels stay, as with the real operator), the node reboots into a new kernel: the driver pod built
    # for the old kernel restarts on the new one and crash-loops while the labels still say the old kernel.
    drop_nfd_cr(kube, prune=False)
    control.upgrade_kernel(cluster.api, node, NEW_KERNEL)

    def crashing():
        pods = [p for p in kube.list(PODS, NS)[0] if p["spec"].get("nodeName") == node]
        states = [
            (c.get("state") or {}).get("waiting", {}).get("reason")
            for p in pods
            for c in p["status"].get("containerStatuses") or []
        ]
        return "CrashLoopBackOff" in states

    wait_for(crashing, 30, what="driver pod crash-looping on the new kernel")
    out = driver(cluster, FAST)
    # The rollout had nothing to roll (the pod is of the current template) and its driver check found the node.
    assert ROLLOUT in ran(out) and VALIDATE not in ran(out), ran(out)
    msg = failed_message(out)
    assert msg.startswith(
        "driver: node %s (kernel %s; the NFD kernel label is stale: the node runs %s)" % (node, OLD_KERNEL, NEW_KERNEL)
    ), msg
    assert "CrashLoopBackOff" in msg and "pod %s-" % old_ds in msg and "node runs %s" % NEW_KERNEL in msg
    assert set(builds(kube)) == old_builds

    # NFD back: the node is labelled with its real kernel; the role adds exactly one build and one DaemonSet.
    testing.ensure_namespace(kube, NFD_NS)
    kube.create(apis.NODEFEATUREDISCOVERIES, nfd_cr(prune=True))
    wait_for(lambda: node_label(kube, node, KERNEL_LABEL) == NEW_KERNEL, 60, what="NFD relabels the new kernel")
    out = driver(cluster, FAST)
    assert failed_message(out) is None
    new_builds = set(builds(kube)) - old_builds
    assert len(new_builds) == 1 and NEW_KERNEL.replace("_", "-")[:20] in next(iter(new_builds))
    daemonsets = driver_daemonsets(kube)
    assert old_ds not in daemonsets  # no node runs the old kernel: pruned
    (new_ds,) = daemonsets
    assert daemonsets[new_ds]["metadata"]["annotations"]["gpuops.cluster/kernel"] == NEW_KERNEL
    pods = [
        p
        for p in kube.list(PODS, NS)[0]
        if p["spec"].get("nodeName") == node and not p["metadata"].get("deletionTimestamp")
    ]
    assert [p["metadata"]["name"].rsplit("-", 1)[0] for p in pods] == [new_ds]
    assert all(c["ready"] for c in pods[0]["status"]["containerStatuses"])
    result = driver_result(out)
    assert result["pruned_kernels"] == [OLD_KERNEL]
    assert OLD_KERNEL in result["stale_builds"] and ORPHAN_KERNEL in result["stale_builds"]
    assert list(result["kernels"]) == [NEW_KERNEL] and result["kernels"][NEW_KERNEL]["action"] == "built"
    shown = " ".join(debug_lines(out, "Show the rollout and the pruned kernels"))
    assert "pruned: DaemonSet of kernel %s" % OLD_KERNEL in shown
    stale = " ".join(debug_lines(out, "Show the image per kernel and the stale builds"))
    assert "stale build for kernel (no GPU node runs it; kept" in stale and OLD_KERNEL in stale


def test_absent_removes_everything_and_twice_changes_nothing(cluster, gpu):
    kube, _node = gpu
    out = driver(cluster, {"driver_state": "absent"})
    assert failed_message(out) is None
    assert kube.get(NAMESPACES, NS) is None
    assert not [d for d in kube.list(DAEMONSETS)[0] if labels_of(d).get("gpuops.cluster/owner") == "driver"]
    mark = cluster.audit.mark()
    out = driver(cluster, {"driver_state": "absent"})
    assert failed_message(out) is None
    assert changed_tasks(out) == []
    assert writes(cluster, mark) == []


def test_openshift_419_driver_toolkit_tag_and_rhel_image(ocp419_cluster):
    kube = Client(ocp419_cluster.api)
    build = catalog.release_build("4.19")
    source = worker_machinesets(kube)[0]
    ms = "%s-gpu-drv419" % source["metadata"]["name"].rsplit("-worker-", 1)[0]
    if kube.get(apis.MACHINESETS, ms, apis.MACHINE_API_NS) is None:
        clone_machineset(
            kube,
            source,
            ms,
            "g4dn.xlarge",
            replicas=1,
            node_labels={"node-role.kubernetes.io/gpu": ""},
            taints=[{"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"}],
        )
    (node,) = ready_nodes_of(kube, ms, 1, timeout=90)
    name = node["metadata"]["name"]
    if kube.get(apis.NODEFEATUREDISCOVERIES, NFD_CR, NFD_NS) is None:
        testing.ensure_namespace(kube, NFD_NS)
        kube.create(apis.NODEFEATUREDISCOVERIES, nfd_cr(prune=True))
    wait_for(lambda: node_label(kube, name, NFD + "system-os_release.ID") == "rhel", 60, what="NFD labels (ID=rhel)")
    assert node_label(kube, name, NFD + "system-os_release.VERSION_ID") == "9.6"

    out = driver(ocp419_cluster, FAST)
    assert failed_message(out) is None
    ds = next(
        d
        for d in driver_daemonsets(kube).values()
        if d["metadata"]["annotations"]["gpuops.cluster/kernel"] == build.kernel
    )
    image = ds["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image.endswith(":595.91.07-%s-rhel9.6" % build.kernel), image
    bcs = [
        b for b in kube.list(apis.BUILDCONFIGS, NS)[0] if build.kernel.replace("_", "-")[:20] in b["metadata"]["name"]
    ]
    assert [b["spec"]["strategy"]["dockerStrategy"]["from"]["name"] for b in bcs] == [
        "nvcr.io/nvidia/driver:595.91.07-rhel9.6"
    ]
    assert [dict((a["name"], a["value"]) for a in b["spec"]["strategy"]["dockerStrategy"]["buildArgs"])["DTK_IMAGE"]
            for b in bcs] == [catalog.dtk_image("9.6.20250925-0")]  # fmt: skip
    result = driver_result(out)
    assert result["ready"] is True and name in result["kernels"][build.kernel]["nodes"]
    pods = [p for p in kube.list(PODS, NS)[0] if p["spec"].get("nodeName") == name]
    assert pods and all(c["ready"] for p in pods for c in p["status"]["containerStatuses"])


K8S_KERNELS = {"5.15.0-119-generic": "ubuntu22.04", "6.8.0-45-generic": "ubuntu24.04"}


def test_kubernetes_precompiled_daemonset_per_kernel(k8s_cluster):
    kube = Client(k8s_cluster.api)
    ns = "nfd-drv-" + uuid.uuid4().hex[:4]
    start_nfd_worker(kube, ns)
    gpu_nodes = []
    try:

        def labelled():
            nodes = [
                n
                for n in kube.list(NODES)[0]
                if labels_of(n).get(KERNEL_LABEL) in K8S_KERNELS
                and any(
                    labels_of(n).get(NFD + g + ".present") == "true"
                    for g in ("pci-10de", "pci-0302_10de", "pci-0300_10de")
                )
            ]
            return nodes if len(nodes) >= 2 else None

        gpu_nodes = [n["metadata"]["name"] for n in wait_for(labelled, 60, what="NFD labels on the two GPU nodes")]
        assert sorted({labels_of(kube.get(NODES, n))[KERNEL_LABEL] for n in gpu_nodes}) == sorted(K8S_KERNELS)
        # OpenShift build modes are refused on plain Kubernetes, in preflight, with nothing written.
        mark = k8s_cluster.audit.mark()
        out = driver(k8s_cluster, {"driver_build_mode": "driver-toolkit"})
        assert failed_message(out).startswith("driver: driver_build_mode driver-toolkit builds on OpenShift")
        assert writes(k8s_cluster, mark, dry_runs=True) == []

        # Precompiled images stay an option (published Ubuntu kernels only).
        out = driver(k8s_cluster, dict(FAST, driver_build_mode="precompiled"))
        assert failed_message(out) is None
        daemonsets = driver_daemonsets(kube)
        kernels = {d["metadata"]["annotations"]["gpuops.cluster/kernel"]: d for d in daemonsets.values()}
        assert sorted(kernels) == sorted(K8S_KERNELS)
        for kernel, os_tag in K8S_KERNELS.items():
            image = kernels[kernel]["spec"]["template"]["spec"]["containers"][0]["image"]
            assert image == "nvcr.io/nvidia/driver:595-%s-%s" % (kernel, os_tag)
        assert driver_result(out)["mode"] == "precompiled"
        # The default: NVIDIA's runtime-compiled image of each OS (any kernel), nvidia-driver init on the node.
        out = driver(k8s_cluster, FAST)
        assert failed_message(out) is None
        daemonsets = driver_daemonsets(kube)
        kernels = {d["metadata"]["annotations"]["gpuops.cluster/kernel"]: d for d in daemonsets.values()}
        for kernel, os_tag in K8S_KERNELS.items():
            container = kernels[kernel]["spec"]["template"]["spec"]["containers"][0]
            assert container["image"] == "nvcr.io/nvidia/driver:595.91.07-%s" % os_tag
            assert container["args"] == ["init"]
        namespace = kube.get(NAMESPACES, NS)
        assert labels_of(namespace)["pod-security.kubernetes.io/enforce"] == "privileged"
        assert kube.get(ROLES, "nvidia-driver-privileged-scc", NS) is None
        result = driver_result(out)
        assert result["ready"] is True and result["mode"] == "runtime-compiled"
        assert sorted(result["validated_nodes"]) == sorted(gpu_nodes)
    finally:
        driver(k8s_cluster, {"driver_state": "absent"})
        stop_nfd_worker(kube, ns)
        for node in kube.list(NODES)[0]:
            drop = {k: None for k in labels_of(node) if k.startswith(NFD)}
            notes = {
                k: None for k in node["metadata"].get("annotations") or {} if k.startswith("nfd.node.kubernetes.io/")
            }
            if drop or notes:
                kube.patch(NODES, node["metadata"]["name"], {"metadata": {"labels": drop, "annotations": notes}})
