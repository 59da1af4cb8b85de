# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Pure logic of the simulated controllers: machine-api, MCO, GPU stack, pod status, runtime."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import threading
import time

import pytest
import yaml
from simopenshift import catalog, gpustack, leases, machineapi, mco, podsim, seed
from simopenshift.kube import WorkQueue, match_selector

KERNEL = catalog.cluster_build().kernel
NEW_KERNEL = "5.14.0-427.50.1.el9_4.x86_64"
RHCOS = catalog.cluster_build().os_release()


# ---------------------------------------------------------------- machine-api
def seeded_set(**kwargs):
    ms = seed.worker_machineset("us-east-2b", **kwargs)
    ms["metadata"]["uid"] = "ms-uid"
    return ms


def test_machine_from_machineset_copies_the_template():
    ms = seeded_set()
    ms["spec"]["template"]["spec"]["metadata"] = {"labels": {"node-role.kubernetes.io/gpu": ""}}
    ms["spec"]["template"]["spec"]["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    machine = machineapi.machine_from_machineset(ms)
    assert machine["metadata"]["generateName"] == ms["metadata"]["name"] + "-"
    assert machine["metadata"]["labels"] == ms["spec"]["template"]["metadata"]["labels"]
    assert machine["metadata"]["ownerReferences"][0]["uid"] == "ms-uid"
    assert machine["metadata"]["finalizers"] == [machineapi.MACHINE_FINALIZER]
    assert machine["spec"]["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    # Mutating the machine must not touch the MachineSet's template.
    machine["spec"]["providerSpec"]["value"]["instanceType"] = "x"
    assert ms["spec"]["template"]["spec"]["providerSpec"]["value"]["instanceType"] == "m6i.xlarge"


def test_node_from_machine_is_what_kubelet_and_ccm_register():
    ms = seeded_set(instance_type="g4dn.xlarge")
    ms["spec"]["template"]["spec"]["metadata"] = {"labels": {"gpu": "yes"}}
    ms["spec"]["template"]["spec"]["taints"] = [
        {"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule", "timeAdded": None}
    ]
    machine = machineapi.machine_from_machineset(ms, "worker-abcde")
    node = machineapi.node_from_machine(machine, catalog.cluster_build(), "rendered-worker-1")
    labels = node["metadata"]["labels"]
    assert labels["node.kubernetes.io/instance-type"] == labels["beta.kubernetes.io/instance-type"] == "g4dn.xlarge"
    assert (
        labels["topology.kubernetes.io/zone"] == "us-east-2b" and labels["topology.kubernetes.io/region"] == "us-east-2"
    )
    assert labels["node-role.kubernetes.io/worker"] == "" and labels["gpu"] == "yes"
    assert node["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "", "effect": "NoSchedule"}]
    assert node["metadata"]["annotations"][machineapi.ANN_MACHINE] == "openshift-machine-api/worker-abcde"
    assert node["metadata"]["annotations"][mco.ANN_CURRENT] == "rendered-worker-1"
    assert catalog.GPU_RESOURCE not in node["status"]["capacity"]
    assert node["status"]["capacity"]["cpu"] == "4" and node["status"]["allocatable"]["cpu"] == "3500m"
    assert node["status"]["nodeInfo"]["kernelVersion"] == KERNEL
    assert "addresses" not in node["status"]  # kwok must fill InternalIP for pods/log
    octets = node["metadata"]["name"].split(".")[0].split("-")[1:]
    assert octets[:2] == ["10", "0"] and 144 <= int(octets[2]) < 160  # zone b private subnet
    assert node["metadata"]["name"].endswith(".us-east-2.compute.internal")
    assert machineapi.machineset_annotations(ms)["machine.openshift.io/GPU"] == "1"


def test_a_new_instance_never_takes_an_address_in_use():
    # A CI run once gave a GPU Machine the name of a seed worker: its nodeRef then
    # pointed at that worker (no GPU labels), and deleting the Machine deleted it.
    machine = machineapi.machine_from_machineset(seeded_set(instance_type="g4dn.xlarge"), "worker-fghij")
    first = machineapi.provisioned_fields(machine)[2]["addresses"]
    free = machineapi.provisioned_fields(machine, taken={first[1]["address"]})[2]["addresses"]
    assert free[1]["address"] != first[1]["address"] and free[1]["type"] == "InternalDNS"
    assert 144 <= int(free[0]["address"].split(".")[2]) < 160  # still zone b's private subnet
    assert (
        free[1]["address"]
        == free[2]["address"]
        == "ip-%s.us-east-2.compute.internal" % free[0]["address"].replace(".", "-")
    )
    # The Node registers under the address the Machine was given, not a fresh derivation.
    machine["status"] = {"addresses": free}
    node = machineapi.node_from_machine(machine, catalog.cluster_build())
    assert node["metadata"]["name"] == free[1]["address"]


def test_pick_for_deletion_priorities_and_policies():
    def machine(name, created, annotations=None, phase="Running", node=None):
        return {
            "metadata": {"name": name, "creationTimestamp": created, "annotations": annotations or {}},
            "status": {"phase": phase, "nodeRef": {"name": node or name}},
        }

    old = machine("old", "2026-01-01T00:00:00Z")
    new = machine("new", "2026-01-02T00:00:00Z")
    marked = machine("marked", "2026-01-01T00:00:00Z", {machineapi.ANN_DELETE_MACHINE: "true"})
    failed = machine("failed", "2026-01-01T00:00:00Z", phase="Failed")
    ready = {"old": True, "new": True, "marked": True, "failed": False}
    assert [m["metadata"]["name"] for m in machineapi.pick_for_deletion([old, new], 1, "Newest", ready)] == ["new"]
    assert [m["metadata"]["name"] for m in machineapi.pick_for_deletion([old, new], 1, "Oldest", ready)] == ["old"]
    picked = machineapi.pick_for_deletion([old, new, failed, marked], 2, "Newest", ready)
    assert [m["metadata"]["name"] for m in picked] == ["marked", "failed"]


def test_selector_string_and_match_selector():
    expressions = [{"key": "b", "operator": "In", "values": ["x", "y"]}, {"key": "c", "operator": "DoesNotExist"}]
    selector = {"matchLabels": {"a": "1"}, "matchExpressions": expressions}
    assert machineapi.selector_string(selector) == "a=1,b in (x,y),!c"
    assert match_selector(selector, {"a": "1", "b": "y"})
    assert not match_selector(selector, {"a": "1", "b": "y", "c": ""})
    assert not match_selector(selector, {"a": "1", "b": "z"})
    assert match_selector({}, {"anything": "x"}) and not match_selector(None, {})


# ------------------------------------------------------------------------ MCO
def mc(name, files, version="3.4.0", role="worker"):
    return {
        "metadata": {"name": name, "labels": {mco.ROLE_LABEL: role}},
        "spec": {
            "config": {
                "ignition": {"version": version},
                "storage": {"files": [{"path": p, "contents": {"source": s}} for p, s in files]},
            }
        },
    }


def data(text):
    return "data:text/plain;charset=utf-8;base64," + base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    "version,path,source,needle",
    [
        ("9.9.9", "/etc/a", data("x"), "unknown version"),
        ("", "/etc/a", data("x"), "missing ignition.version"),
        ("3.2.0", "etc/a", data("x"), "path not absolute"),
        ("3.2.0", "/etc/a", "data:;base64,***", "invalid base64"),
        ("3.2.0", "/etc/a", "ftp://host/file", "unsupported source scheme"),
    ],
)
def test_invalid_machineconfigs_are_refused(version, path, source, needle):
    with pytest.raises(mco.InvalidConfig) as err:
        mco.validate(mc("50-x", [(path, source)], version=version))
    assert needle in str(err.value)


def test_valid_machineconfigs_pass():
    mco.validate(
        mc(
            "50-x",
            [("/etc/a", data("x")), ("/etc/b", "data:,plain%20text"), ("/etc/c", "https://example.com/f")],
            version="3.2.0",
        )
    )


def test_render_is_deterministic_ordered_and_selective():
    pool = seed.pool("worker")
    base = seed.base_machineconfigs("worker")
    first, sources = mco.render(pool, base + seed.base_machineconfigs("master"))
    assert [s["name"] for s in sources] == sorted(m["metadata"]["name"] for m in base)
    again, _ignored = mco.render(pool, list(reversed(base)))
    assert first["metadata"]["name"] == again["metadata"]["name"]
    override = mc("99-z-override", [("/etc/kubernetes/cloud.conf", data("override"))])
    changed, _ignored = mco.render(pool, base + [override])
    assert changed["metadata"]["name"] != first["metadata"]["name"]
    assert mco.file_in_config(changed, "/etc/kubernetes/cloud.conf")["contents"]["source"] == data("override")
    assert changed["spec"]["osImageURL"] == catalog.os_image_url(catalog.CLUSTER_RHCOS_BUILD)
    with pytest.raises(mco.InvalidConfig) as err:
        mco.render(pool, base + [mc("60-bad", [("/etc/x", data("x"))], version="1.0.0")])
    assert "pool worker" in str(err.value) and "60-bad" in str(err.value)


def test_pool_membership_and_max_unavailable():
    worker, master = seed.pool("worker"), seed.pool("master")
    gpu = {"metadata": {"name": "gpu"}, "spec": {"nodeSelector": {"matchLabels": {"node-role.kubernetes.io/gpu": ""}}}}
    pools = [worker, master, gpu]
    assert mco.pool_for_node_labels(pools, {"node-role.kubernetes.io/worker": ""})["metadata"]["name"] == "worker"
    assert (
        mco.pool_for_node_labels(pools, {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/gpu": ""})[
            "metadata"
        ]["name"]
        == "gpu"
    )
    assert mco.pool_for_node_labels(pools, {"other": ""}) is None
    for value, total, expected in ((None, 3, 1), (2, 3, 2), ("2", 3, 2), ("50%", 4, 2), ("100%", 3, 3), ("10%", 3, 1)):
        assert mco.max_unavailable({"spec": {"maxUnavailable": value}}, total) == expected


# ------------------------------------------------------------------ GPU stack
def driver_container(image, env=None):
    return {"name": "driver", "image": image, "env": [{"name": k, "value": v} for k, v in (env or {}).items()]}


def test_agent_ownership_matches_the_kwok_stage_exclusions():
    """kwok/stages.yaml must skip exactly the components the agent owns."""
    path = os.path.join(os.path.dirname(catalog.DATA_DIR), os.pardir, "kwok", "stages.yaml")
    with open(path) as handle:
        docs = [d for d in yaml.safe_load_all(handle) if d]
    assert len(docs) == 1, "ansible-test yamllint wants one document: keep the stages as a list"
    stages = {d["metadata"]["name"]: d for d in docs[0]}
    for name in ("pod-ready", "pod-ready-again", "pod-complete-by-policy"):
        exprs = stages[name]["spec"]["selector"]["matchExpressions"]
        comp = [e for e in exprs if e["key"] == '.metadata.labels["app.kubernetes.io/component"]']
        assert comp and comp[0]["operator"] == "NotIn"
        assert sorted(comp[0]["values"] + [catalog.OPERATOR_VALIDATOR]) == sorted(catalog.AGENT_COMPONENTS)
        apps = [e for e in exprs if e["key"] == '.metadata.labels["app"]']
        assert apps and apps[0]["operator"] == "NotIn" and sorted(apps[0]["values"]) == sorted(catalog.OPERATOR_APPS)
        keys = {e["key"]: e["operator"] for e in exprs}
        assert keys['.spec.containers.[].resources.limits["nvidia.com/gpu"]'] == "DoesNotExist"
        assert keys['.spec.containers.[].resources.limits["nvidia.com/gpu.shared"]'] == "DoesNotExist"
        assert keys['.metadata.labels["openshift.io/build.name"]'] == "DoesNotExist"
    node_init = stages["node-initialize"]["spec"]["selector"]["matchExpressions"]
    assert {"key": '.metadata.labels["%s"]' % catalog.LABEL_NOT_READY, "operator": "DoesNotExist"} in node_init
    gpu_pod = {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    assert gpustack.agent_owned(gpu_pod)
    assert gpustack.agent_owned({"metadata": {"labels": {catalog.COMPONENT_LABEL: "dcgm-exporter"}}, "spec": {}})
    assert gpustack.agent_owned({"metadata": {"labels": {catalog.COMPONENT_LABEL: "entitlement-test"}}, "spec": {}})
    assert gpustack.agent_owned({"metadata": {"labels": {"app": "nvidia-device-plugin-daemonset"}}, "spec": {}})
    assert not gpustack.agent_owned(
        {
            "metadata": {"labels": {catalog.COMPONENT_LABEL: "other"}},
            "spec": {"containers": [{"resources": {"limits": {"cpu": "1"}}}]},
        }
    )


@pytest.mark.parametrize(
    "container,node_kernel,ok",
    [
        (driver_container("nvcr.io/nvidia/driver:550.90.07-%s-rhcos4.16" % KERNEL), KERNEL, True),
        (driver_container("nvcr.io/nvidia/driver:550.90.07-%s-rhcos4.16" % KERNEL), NEW_KERNEL, False),
        (driver_container("quay.io/x/driver:1", {"KERNEL_VERSION": NEW_KERNEL}), NEW_KERNEL, True),
        (driver_container("quay.io/x/driver:1", {"KERNEL_VERSION": KERNEL}), NEW_KERNEL, False),
        (driver_container("nvcr.io/nvidia/driver:550.90.07-rhcos4.16"), KERNEL, True),  # compiles on the node
        (driver_container("nvcr.io/nvidia/driver:550.90.07-rhcos4.12"), KERNEL, False),  # wrong OS stream
        (driver_container("nvcr.io/nvidia/driver:550.90.07-%s-rhcos4.16" % KERNEL), "kwok-v0.7.0", True),
    ],
)
def test_driver_compatibility(container, node_kernel, ok):
    verdict = gpustack.judge_driver(container, node_kernel, RHCOS)
    assert verdict.ok is ok
    if not ok:
        log = gpustack.driver_log("550.90.07", node_kernel, verdict)
        assert "Could not" in log and node_kernel in log


def test_driver_from_the_internal_registry_uses_the_registry_lookup():
    image = catalog.INTERNAL_REGISTRY + "/ns/nvidia-driver:tag"
    missing = gpustack.judge_driver(driver_container(image), KERNEL, RHCOS, lambda i: (False, None))
    assert not missing.ok and missing.pull_error == 'Back-off pulling image "%s"' % image
    built = gpustack.judge_driver(driver_container(image), KERNEL, RHCOS, lambda i: (True, NEW_KERNEL))
    assert not built.ok and built.built_for == NEW_KERNEL


def test_driver_version_from_env_or_tag():
    assert gpustack.driver_version(driver_container("nvcr.io/nvidia/driver:535.104.05-rhcos4.16")) == "535.104.05"
    assert gpustack.driver_version(driver_container("x:1", {"DRIVER_VERSION": "470.57.02"})) == "470.57.02"
    assert (
        gpustack.driver_version(driver_container("registry:5000/ns/img@sha256:" + "1" * 64))
        == catalog.DEFAULT_DRIVER_VERSION
    )


def test_gfd_labels_for_a_t4_match_seed_004():
    node = {"metadata": {"labels": {"node.kubernetes.io/instance-type": "g4dn.xlarge"}}}
    hw = catalog.NodeHardware.for_node(node)
    labels = gpustack.gfd_labels(node, hw, "450.80.02", timestamp=1608307957)
    expected = {
        "cuda.driver.major": "450",
        "cuda.driver.minor": "80",
        "cuda.driver.rev": "02",
        "cuda.runtime.major": "11",
        "cuda.runtime.minor": "0",
        "gfd.timestamp": "1608307957",
        "gpu.compute.major": "7",
        "gpu.compute.minor": "5",
        "gpu.count": "1",
        "gpu.family": "turing",
        "gpu.machine": "g4dn.xlarge",
        "gpu.memory": "15109",
        "gpu.product": "Tesla-T4",
    }
    for key, value in expected.items():
        assert labels["nvidia.com/" + key] == value, key
    shared = gpustack.gfd_labels(node, hw, "550.90.07", replicas=4, strategy="time-slicing")
    assert shared["nvidia.com/gpu.product"] == "Tesla-T4-SHARED" and shared["nvidia.com/gpu.replicas"] == "4"


def test_nvidia_smi_table_keeps_the_seed_layout():
    table = gpustack.nvidia_smi("Tesla-V100-SXM2-16GB", 2, 16160, "430.26", "10.2", now=0)
    lines = table.splitlines()
    assert all(len(line) == 79 for line in lines[1:])
    assert "| NVIDIA-SMI 430.26       Driver Version: 430.26       CUDA Version: 10.2     |" in lines
    assert table.count("Tesla V100-SXM2...") == 2 and table.count("0MiB / 16160MiB") == 2
    assert "No running processes found" in table


def test_sharing_config_and_workload_kind():
    ts = (
        "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n"
        "    - name: nvidia.com/gpu\n      replicas: 3\n"
    )
    assert gpustack.sharing_config(ts) == (3, True, "time-slicing")
    assert gpustack.sharing_config({"a": "x: 1", "b": ts}, {"nvidia.com/device-plugin.config": "b"}) == (
        3,
        True,
        "time-slicing",
    )
    assert gpustack.sharing_config({"a": "x: 1", "b": ts}) == (1, False, "none")
    assert (
        gpustack.workload_kind({"spec": {"containers": [{"image": "nvidia/cuda", "command": ["nvidia-smi"]}]}})
        == "nvidia-smi"
    )
    assert (
        gpustack.workload_kind({"spec": {"containers": [{"image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd"}]}})
        == "vectoradd"
    )


# ------------------------------------------------------------------ pod status
def pod(restart="Never"):
    return {
        "metadata": {"name": "p", "namespace": "n", "uid": "u"},
        "spec": {"restartPolicy": restart, "containers": [{"name": "c", "image": "i"}]},
    }


@pytest.mark.parametrize(
    "restart,exit_code,phase",
    [("Never", 0, "Succeeded"), ("Never", 1, "Failed"), ("OnFailure", 1, "Running"), ("OnFailure", 0, "Succeeded")],
)
def test_terminated_containers_give_the_kubelet_phase(restart, exit_code, phase):
    status = podsim.pod_status(pod(restart), {"c": podsim.terminated(exit_code, 1, 2, "tail")}, "127.0.0.1", 1)
    assert status["phase"] == phase
    assert status["containerStatuses"][0]["state"]["terminated"]["message"] == "tail"
    ready = [c for c in status["conditions"] if c["type"] == "Ready"][0]
    assert ready["status"] == "False"


def test_the_termination_message_is_the_logs_end_only_on_an_error_with_the_fallback_policy():
    """core/v1 Container.terminationMessagePolicy: FallbackToLogsOnError uses the log's last chunk, 2,048 bytes or
    80 lines, when the container exited with an error; a success, or the File policy, gives none."""
    log = "".join("line %03d %s\n" % (i, "x" * 10) for i in range(200))
    fallback = pod("Never")
    fallback["spec"]["containers"][0]["terminationMessagePolicy"] = "FallbackToLogsOnError"
    message = podsim.termination_message(fallback, 1, log)
    assert message.endswith("line 199 xxxxxxxxxx") and len(message.split("\n")) == 80
    long_lines = "".join("%s\n" % ("y" * 100) for i in range(50))
    assert len(podsim.termination_message(fallback, 205, long_lines)) == 2048
    assert podsim.termination_message(fallback, 0, log) is None
    assert podsim.termination_message(pod("Never"), 1, log) is None


def test_running_waiting_and_crashloop_statuses():
    running = podsim.pod_status(pod("Always"), {"c": podsim.running(1)}, "127.0.0.1", 1)
    assert running["phase"] == "Running" and running["podIP"].startswith("10.128.")
    assert [c["status"] for c in running["conditions"] if c["type"] == "Ready"] == ["True"]
    waiting = podsim.pod_status(pod("Always"), {"c": podsim.waiting("PodInitializing")}, "127.0.0.1", 1)
    assert waiting["phase"] == "Pending" and "podIP" not in waiting
    crash = podsim.pod_status(
        pod("Always"),
        {"c": podsim.waiting("CrashLoopBackOff", "back-off", restarts=3, last_exit_code=1, last_finished=2)},
        "127.0.0.1",
        1,
    )
    cs = crash["containerStatuses"][0]
    assert crash["phase"] == "Running" and cs["restartCount"] == 3 and cs["ready"] is False
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    assert podsim.same_status(
        crash,
        podsim.pod_status(
            pod("Always"),
            {"c": podsim.waiting("CrashLoopBackOff", "back-off", restarts=3, last_exit_code=1, last_finished=5)},
            "127.0.0.1",
            9,
        ),
    )
    assert not podsim.same_status(crash, waiting)


def test_log_store_writes_cri_lines(tmp_path):
    store = podsim.LogStore(client=None, workdir=str(tmp_path))
    path = store.write(pod(), "c", "line one\nline two\n")
    lines = open(path).read().splitlines()
    assert len(lines) == 2 and lines[0].endswith(" stdout F line one")
    assert lines[0].split(" ")[0].endswith("Z")


# -------------------------------------------------------------------- runtime
def test_workqueue_dedupes_delays_and_requeues_dirty_keys():
    queue, stop = WorkQueue(), threading.Event()
    queue.add("a", 0.2)
    queue.add("b")
    queue.add("a")  # an earlier add wins
    queue.add("b", 5)  # a later one is dropped
    assert len(queue) == 2
    got = {queue.get(stop), queue.get(stop)}
    assert got == {"a", "b"}
    queue.add("a")  # while processing: remembered, re-added on done()
    assert len(queue) == 0
    queue.done("a")
    queue.done("b")
    start = time.time()
    assert queue.get(stop) == "a" and time.time() - start < 0.5
    queue.done("a")
    queue.add("c", 0.3)
    start = time.time()
    assert queue.get(stop) == "c" and time.time() - start >= 0.25


def _marked_node(labels=None):
    unknown = {"status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}
    return {
        "metadata": {"name": "gpu-0", "labels": labels or {}},
        "status": {
            "conditions": [
                dict(unknown, type="MemoryPressure"),
                dict(unknown, type="Ready"),
                {"type": "NetworkUnavailable", "status": "False", "reason": "RouteCreated", "message": "m"},
            ]
        },
    }


def test_a_node_the_node_controller_marked_is_posted_ready_again_as_a_kubelet_posts_it():
    conditions = leases.reposted(_marked_node(), 0)
    by_type = dict((c["type"], c) for c in conditions)
    assert by_type["Ready"]["status"] == "True" and by_type["Ready"]["reason"] == "KubeletReady"
    assert by_type["MemoryPressure"]["status"] == "False"
    assert by_type["NetworkUnavailable"]["message"] == "m"  # not marked: as it was
    assert by_type["Ready"]["lastHeartbeatTime"] == "1970-01-01T00:00:00Z"


def test_a_node_a_test_holds_not_ready_or_a_kubelet_said_not_ready_keeps_its_conditions():
    assert leases.reposted(_marked_node({catalog.LABEL_NOT_READY: "broken"}), 0) is None
    node = _marked_node()
    node["status"]["conditions"][1].update(status="False", reason="KubeletNotReady")
    assert leases.reposted(node, 0) is None
    assert leases.reposted({"metadata": {"name": "n"}, "status": {}}, 0) is None


# ---------------------------------------------------------------- pod logs: the log before an ended status
class _KwokLogs(object):
    """What kwok's kubelet endpoint answers through pods/log: "no logs found" until it has the Logs object."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.reads = 0

    def read_log(self, res, name, namespace, container, limit_bytes=None):
        self.reads += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def _kwok_error(status, message):
    from kubernetes.client.rest import ApiException

    exc = ApiException(status=status, reason="BadRequest")
    exc.body = ('{"kind":"Status","message":"%s"}' % message).encode()  # bytes, as with _preload_content=False
    return exc


def test_a_log_kwok_does_not_serve_holds_the_status_once_said_then_cached_when_served(tmp_path):
    pod = {"metadata": {"name": "v", "namespace": "ns", "uid": "u1"}}
    client = _KwokLogs([_kwok_error(400, 'no logs found for container \\"cuda\\" in pod \\"ns/v\\"')] * 2 + [""])
    store = podsim.LogStore(client, str(tmp_path))
    with pytest.raises(podsim.LogNotServed) as first:
        store.ensure_served(pod, "cuda")
    assert first.value.first and "ns/v" in str(first.value)
    with pytest.raises(podsim.LogNotServed) as again:
        store.ensure_served(pod, "cuda")
    assert not again.value.first  # said once
    store.ensure_served(pod, "cuda")  # served now
    store.ensure_served(pod, "cuda")  # cached: no further read
    assert client.reads == 3 and store.held == {}


def test_other_log_answers_do_not_hold_the_status(tmp_path):
    pod = {"metadata": {"name": "v", "namespace": "ns", "uid": "u2"}}
    store = podsim.LogStore(_KwokLogs([_kwok_error(502, "error trying to reach service")]), str(tmp_path))
    store.ensure_served(pod, "cuda")  # not kwok's "not found": the status goes on as before


def test_ended_states_are_terminated_or_restarted_containers():
    running = podsim.running(time.time())
    assert not podsim.ended({"c": running})
    assert not podsim.ended({"c": podsim.waiting("ContainerCreating")})
    assert podsim.ended({"c": podsim.terminated(0, time.time() - 2, time.time(), None)})
    assert podsim.ended({"c": podsim.running(time.time(), restarts=1)})


def test_an_operand_with_a_readiness_probe_serves_before_its_ready_status_is_written():
    """The exporter's readinessProbe (httpGet /health) passes only once its server answers, so a reader that sees
    Ready can scrape at once: the agent starts the listener before it writes the Ready status."""
    from simopenshift.agent import NodeAgent

    agent = NodeAgent.__new__(NodeAgent)
    agent.clocks, agent.timing = {}, lambda scale=1.0: scale * 0.01
    order = []
    agent.apply = lambda node, pod, states, log=None, clock=None: order.append(
        ("status", states["dcgm-exporter"].ready)
    )
    pod = {
        "metadata": {"uid": "u1", "name": "p", "namespace": "n"},
        "spec": {"containers": [{"name": "dcgm-exporter"}]},
    }
    node = {"metadata": {"name": "n1"}}
    agent.clock(pod, 0, 0.0)
    wake = []
    assert not agent._dependent(node, [pod], True, 0, 0.001, wake, "log", before_ready=lambda p: order.append("serve"))
    assert order == [("status", False)] and wake  # starting: neither served nor Ready
    del order[:]
    assert agent._dependent(node, [pod], True, 0, 1.0, [], "log", before_ready=lambda p: order.append("serve"))
    assert order == ["serve", ("status", True)]
