# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The GPU node agent on hand-made nodes (the shape the plain-Kubernetes profile uses).

Nodes declare their hardware with sim.gpuops.io annotations instead of an
instance type; everything else is the agent's normal behaviour: dependency
order of the NVIDIA components, device-plugin resource advertising and its
removal, time-slicing, validation failures, driver images from the internal
registry, broken nodes, and kwok still running ordinary pods.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import sys
import time
import uuid

import pytest
from kubernetes.client.rest import ApiException

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog, control, manifests  # noqa: E402
from simopenshift.builds import build_from_config  # noqa: E402
from simopenshift.kube import (  # noqa: E402
    CONFIGMAPS,
    DAEMONSETS,
    KWOK_LOGS,
    NAMESPACES,
    NODES,
    PODS,
    SERVICEACCOUNTS,
    labels_of,
    node_ready,
)
from simopenshift.testing import (
    Client,
    allocatable,
    allow_privileged,
    capacity,
    container_status,
    ensure_runtime_class,
    make_gpu_node,
    node_label,
    pod_log,
    wait_for,
)  # noqa: E402

pytestmark = pytest.mark.integration
BUILD = catalog.cluster_build()


@pytest.fixture(scope="module")
def kube(cluster):
    return Client(cluster.api)


@pytest.fixture
def env(kube):
    """A namespace plus a factory of hand-made GPU nodes that only this test's DaemonSets select."""
    tag = uuid.uuid4().hex[:6]
    ns = "sim-agent-" + tag
    kube.create(NAMESPACES, {"metadata": {"name": ns}})
    wait_for(lambda: kube.get(SERVICEACCOUNTS, "default", ns), 30, what="default ServiceAccount")
    # The manifests run privileged / hostPID / hostPath pods as the default SA: SCC admission wants the binding.
    allow_privileged(kube, ns)
    made = []

    def node(gpus=2, product="NVIDIA-A10G"):
        name = make_gpu_node(kube, "sim-gpu-%s-%d" % (tag, len(made)), {"sim-test": tag}, gpus, product, BUILD)
        made.append(name)
        return name

    yield type("Env", (), {"ns": ns, "tag": tag, "node": staticmethod(node), "selector": {"sim-test": tag}})
    kube.delete(NAMESPACES, ns)
    for name in made:
        kube.delete(NODES, name)


def stack(kube, env, driver=True, toolkit=True, plugin=True, gfd=False, plugin_config=None):
    ensure_runtime_class(kube)
    made = []
    if driver:
        made.append(kube.create(DAEMONSETS, manifests.driver(env.ns, node_selector=env.selector)))
    if toolkit:
        made.append(kube.create(DAEMONSETS, manifests.toolkit(env.ns, node_selector=env.selector)))
    if plugin:
        made.append(
            kube.create(
                DAEMONSETS, manifests.device_plugin(env.ns, node_selector=env.selector, config_map=plugin_config)
            )
        )
    if gfd:
        made.append(kube.create(DAEMONSETS, manifests.gpu_feature_discovery(env.ns, node_selector=env.selector)))
    return made


def component_pod(kube, ns, component):
    pods = [p for p in kube.list(PODS, ns)[0] if labels_of(p).get(catalog.COMPONENT_LABEL) == component]
    return pods[0] if pods else None


def test_device_plugin_waits_for_driver_and_toolkit_then_advertises(cluster, kube, env):
    node = env.node(gpus=2)
    stack(kube, env, driver=False, toolkit=False, plugin=True)
    plugin = wait_for(lambda: component_pod(kube, env.ns, "nvidia-device-plugin"), 20, what="device plugin pod")
    # runtimeClassName nvidia before the toolkit installed the handler: the sandbox cannot be created, as on a
    # real node (CRI-O "failed to find runtime handler nvidia", containerd "no runtime for \"nvidia\"").
    waiting = wait_for(
        lambda: (container_status(kube.get(PODS, plugin["metadata"]["name"], env.ns)).get("state") or {}).get(
            "waiting"
        ),
        10,
        what="plugin waiting for the nvidia runtime",
    )
    assert waiting["reason"] == "ContainerCreating" and "sandbox" in waiting["message"], waiting
    assert 'no runtime for "nvidia"' in waiting["message"] or "runtime handler nvidia" in waiting["message"]
    time.sleep(1.5)
    assert capacity(kube, node) is None  # no driver: no resource
    kube.create(DAEMONSETS, manifests.dcgm_exporter(env.ns, node_selector=env.selector))
    dcgm = wait_for(lambda: component_pod(kube, env.ns, "dcgm-exporter"), 20, what="dcgm-exporter pod")
    stack(kube, env, driver=True, toolkit=True, plugin=False)
    wait_for(lambda: allocatable(kube, node) == "2", 30, what="nvidia.com/gpu allocatable 2")
    wait_for(
        lambda: container_status(kube.get(PODS, dcgm["metadata"]["name"], env.ns)).get("ready") is True,
        20,
        what="dcgm-exporter Ready once driver and toolkit are",
    )
    assert "Listening on :9400" in pod_log(cluster.api, dcgm["metadata"]["name"], env.ns)
    assert capacity(kube, node) == "2"
    driver = component_pod(kube, env.ns, "nvidia-driver")
    assert driver["status"]["phase"] == "Running" and container_status(driver)["ready"] is True
    log = pod_log(cluster.api, driver["metadata"]["name"], env.ns, "nvidia-driver-daemonset-ctr")
    assert "Done, now waiting for signal" in log
    # Removing the device plugin removes the extended resource.
    kube.delete(DAEMONSETS, "nvidia-device-plugin-daemonset", env.ns)
    wait_for(
        lambda: capacity(kube, node) is None and allocatable(kube, node) is None,
        30,
        what="nvidia.com/gpu removed with the device plugin",
    )


def test_time_slicing_config_multiplies_the_gpus(kube, env):
    node = env.node(gpus=2)
    kube.create(
        CONFIGMAPS,
        {
            "metadata": {"name": "time-slicing", "namespace": env.ns},
            "data": {
                "any": (
                    "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
                )
            },
        },
    )
    stack(kube, env, gfd=True, plugin_config="time-slicing")
    wait_for(lambda: allocatable(kube, node) == "8", 30, what="2 GPUs x 4 replicas")
    wait_for(lambda: node_label(kube, node, "nvidia.com/gpu.replicas") == "4", 20, what="GFD replicas label")
    assert node_label(kube, node, "nvidia.com/gpu.product") == "NVIDIA-A10G-SHARED"
    assert node_label(kube, node, "nvidia.com/gpu.sharing-strategy") == "time-slicing"
    assert node_label(kube, node, "nvidia.com/gpu.count") == "2"


def test_validation_fails_with_a_useful_log_without_a_driver(cluster, kube, env):
    ensure_runtime_class(kube)  # the pods name it (the test before it in the file made it)
    node = env.node(gpus=1, product="Tesla-T4")
    # Driver validation (no GPU request) on a node with no driver installed.
    pod = manifests.validation_pod(env.ns, "driver-validation", gpus=0)
    pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
    kube.create(PODS, pod)
    wait_for(
        lambda: (kube.get(PODS, "driver-validation", env.ns).get("status") or {}).get("phase") == "Failed",
        30,
        what="validation Failed",
    )
    status = container_status(kube.get(PODS, "driver-validation", env.ns))
    terminated = status["state"]["terminated"]
    assert terminated["exitCode"] == 1 and terminated["reason"] == "Error"
    assert "CUDA driver version is insufficient" in terminated["message"]
    assert "Failed to allocate device vector A" in pod_log(cluster.api, "driver-validation", env.ns)
    # OnFailure: the same check crash-loops, then succeeds once the driver is there.
    retry = manifests.validation_pod(env.ns, "driver-validation-retry", gpus=0, restart_policy="OnFailure")
    retry["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
    kube.create(PODS, retry)
    wait_for(
        lambda: container_status(kube.get(PODS, "driver-validation-retry", env.ns)).get("restartCount", 0) >= 1,
        20,
        what="OnFailure restarts",
    )
    assert kube.get(PODS, "driver-validation-retry", env.ns)["status"]["phase"] == "Running"
    stack(kube, env, plugin=False)
    wait_for(
        lambda: (kube.get(PODS, "driver-validation-retry", env.ns).get("status") or {}).get("phase") == "Succeeded",
        30,
        what="validation Succeeded once the driver is ready",
    )
    assert "Test PASSED" in pod_log(cluster.api, "driver-validation-retry", env.ns)


def test_a_pod_shows_it_ended_only_once_its_log_is_served(cluster, kube, env):
    """A kubelet has a container's log before it reports the container ended, so a reader that sees Succeeded reads
    the log. kwok serves a log only once its informer has the pod's Logs object, and after API server restarts that
    informer re-lists on client-go's backoff (a CI run: a validation pod Succeeded, its log "no logs found").
    Played by taking the Logs object away while the program runs: the pod must not show Succeeded until kwok serves
    its log again."""
    node = env.node(gpus=1, product="Tesla-T4")
    stack(kube, env, plugin=False)
    for component in ("nvidia-driver", "nvidia-container-toolkit"):  # the program then runs (no sandbox error)
        wait_for(
            lambda: container_status(component_pod(kube, env.ns, component) or {}).get("ready"), 60, what=component
        )
    pod = manifests.validation_pod(env.ns, "log-first", command=("sh", "-c", "sleep 8"), gpus=0, node_name=node)
    pod["spec"]["containers"][0]["image"] = "registry.access.redhat.com/ubi9/ubi-minimal:9.6"
    kube.create(PODS, pod)

    def phase():
        return (kube.get(PODS, "log-first", env.ns).get("status") or {}).get("phase")

    wait_for(lambda: phase() == "Running" and kube.get(KWOK_LOGS, "log-first", env.ns), 60, what="running, log out")
    running = time.time()
    logs = kube.get(KWOK_LOGS, "log-first", env.ns)
    kube.delete(KWOK_LOGS, "log-first", env.ns)

    def not_served():
        try:
            pod_log(cluster.api, "log-first", env.ns)
        except ApiException as exc:
            return "no logs found" in str(exc.body)
        return False

    wait_for(not_served, 10, what="kwok no longer serving the log")
    assert phase() == "Running", "the program (sleep 8) ended before the test took its log away"
    # Past the program's end (8 s) and a few of the agent's looks: still Running, the log not served.
    while time.time() - running < 12:
        assert phase() == "Running", "the pod showed it ended while kwok served no log of it"
        time.sleep(0.25)
    kube.create(KWOK_LOGS, {"metadata": {k: logs["metadata"][k] for k in ("name", "namespace", "labels",
                                                                          "ownerReferences")},
                            "spec": logs["spec"]})  # fmt: skip
    wait_for(lambda: phase() == "Succeeded", 15, what="Succeeded once the log is served")
    assert pod_log(cluster.api, "log-first", env.ns) == ""  # sleep prints nothing; the read succeeds
    # Held by the rule (said once, then when served), not by a reconcile that failed.
    with open(os.path.join(cluster.lc.logs, "sim-controllers.log")) as handle:
        said = [line for line in handle if env.ns + "/log-first" in line or node + " failed" in line]
    assert any("its status waits" in line for line in said), said
    assert any("kwok serves the log of %s/log-first after" % env.ns in line for line in said), said
    assert not any("failed" in line for line in said), said


def test_ordinary_pods_on_gpu_nodes_are_still_run_by_kwok(kube, env):
    node = env.node(gpus=1)
    kube.create(
        PODS,
        {
            "metadata": {"name": "plain", "namespace": env.ns},
            "spec": {
                "nodeSelector": {"kubernetes.io/hostname": node},
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "registry.access.redhat.com/ubi9/ubi"}],
            },
        },
    )
    wait_for(
        lambda: (kube.get(PODS, "plain", env.ns).get("status") or {}).get("phase") == "Succeeded",
        30,
        what="plain pod completed by kwok",
    )


def test_broken_node_goes_not_ready_and_back(kube, env):
    node = env.node(gpus=1)
    control.break_node(kube.api, node)
    wait_for(lambda: not node_ready(kube.get(NODES, node)), 10, what="NotReady")
    # The node lifecycle controller taints it, as for a real dead kubelet.
    wait_for(
        lambda: [
            t
            for t in kube.get(NODES, node)["spec"].get("taints") or []
            if t["key"] == "node.kubernetes.io/unreachable" or t["key"] == "node.kubernetes.io/not-ready"
        ],
        30,
        what="not-ready taint",
    )
    time.sleep(1.5)
    assert not node_ready(kube.get(NODES, node))  # kwok does not bring it back behind our back
    control.repair_node(kube.api, node)
    wait_for(lambda: control.node_is_ready(kube.api, node), 20, what="Ready again")


def test_a_node_the_node_controller_marked_is_posted_ready_as_a_kubelet_posts_it(cluster, kube, env):
    """kube-controller-manager marks a node (Ready Unknown, NodeStatusUnknown) when its informers find the Lease
    stale, as after an API server restart. A kubelet posts Ready again on its next 10 s status sync; kwok only when
    its node watch delivers the mark, which after restarts can take a minute. Played with kwok stopped."""
    node = env.node(gpus=1)
    wait_for(lambda: control.node_is_ready(kube.api, node), 30, what="Ready")
    kwok = cluster.lc.pid_of("kwok")
    os.kill(kwok, signal.SIGSTOP)
    try:
        live = kube.get(NODES, node)
        conditions = []
        for cond in live["status"]["conditions"]:
            if cond["type"] in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
                cond = dict(cond, status="Unknown", reason="NodeStatusUnknown")
                cond["message"] = "Kubelet stopped posting node status."
            conditions.append(cond)
        kube.patch(NODES, node, {"status": {"conditions": conditions}}, subresource="status")
        assert not node_ready(kube.get(NODES, node))
        marked = time.time()
        wait_for(lambda: node_ready(kube.get(NODES, node)), 25, what="Ready posted again with kwok stopped")
        took = time.time() - marked
    finally:
        os.kill(kwok, signal.SIGCONT)
    assert took <= 21, took  # one status sync (10 s) and a reconcile, not kwok's watch
    ready = [c for c in kube.get(NODES, node)["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["reason"] == "KubeletReady", ready


MULTISTAGE_DOCKERFILE = """\
ARG DRIVER_IMAGE
ARG DTK_IMAGE
FROM ${DRIVER_IMAGE} AS driver
FROM ${DTK_IMAGE} AS modules
ARG DRIVER_VERSION
ARG KERNEL_VERSION
ARG KERNEL_MODULE_TYPE
COPY --from=driver /drivers/NVIDIA-Linux-x86_64-${DRIVER_VERSION}.run /tmp/nvidia.run
RUN sh /tmp/nvidia.run -x --target /tmp/nvidia && /tmp/nvidia/nvidia-installer --kernel-module-only \\
    --skip-module-load --kernel-module-type="${KERNEL_MODULE_TYPE}" --kernel-name="${KERNEL_VERSION}"
FROM ${DRIVER_IMAGE}
ARG KERNEL_VERSION
COPY --from=modules /opt/modules/ /lib/modules/${KERNEL_VERSION}/
"""


def build_image(kube, ns, name, dockerfile, strategy_from, args):
    """Build ``name`` once (the sim's openshift-controller-manager) and return its internal-registry reference."""
    if kube.get(apis.IMAGESTREAMS, "nvidia-driver", ns) is None:
        kube.create(
            apis.IMAGESTREAMS,
            {"apiVersion": apis.IMAGESTREAMS.api_version, "kind": "ImageStream",
             "metadata": {"name": "nvidia-driver", "namespace": ns}, "spec": {}},
        )  # fmt: skip
    bc = kube.create(
        apis.BUILDCONFIGS,
        {
            "apiVersion": apis.BUILDCONFIGS.api_version,
            "kind": "BuildConfig",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "source": {"type": "Dockerfile", "dockerfile": dockerfile},
                "strategy": {
                    "type": "Docker",
                    "dockerStrategy": {
                        "from": strategy_from,
                        "buildArgs": [{"name": k, "value": v} for k, v in sorted(args.items())],
                    },
                },
                "output": {"to": {"kind": "ImageStreamTag", "name": "nvidia-driver:" + name}},
            },
        },
    )
    kube.create(apis.BUILDS, build_from_config(bc, 1))
    wait_for(
        lambda: ((kube.get(apis.BUILDS, name + "-1", ns) or {}).get("status") or {}).get("phase") == "Complete",
        40,
        what="build %s Complete" % name,
    )
    return "%s/%s/nvidia-driver:%s" % (catalog.INTERNAL_REGISTRY, ns, name)


def test_driver_image_from_a_build_matches_only_its_kernel(cluster, kube, env):
    """A build FROM NVIDIA's driver image with modules for one kernel loads there (nvidia-driver load), and only
    there; a Driver Toolkit image with bare modules has no nvidia-driver at all (real-node review D9)."""
    if cluster.profile != "openshift":
        pytest.skip("needs the openshift profile (builds)")
    node = env.node(gpus=1, product="Tesla-T4")
    driver_image = "nvcr.io/nvidia/driver:550.90.07-rhcos4.16"
    image = build_image(
        kube,
        env.ns,
        "with-userspace",
        MULTISTAGE_DOCKERFILE,
        {"kind": "DockerImage", "name": driver_image},
        {
            "DRIVER_IMAGE": driver_image,
            "DTK_IMAGE": catalog.dtk_image(BUILD.build),
            "DRIVER_VERSION": "550.90.07",
            "KERNEL_VERSION": BUILD.kernel,
            "KERNEL_MODULE_TYPE": "open",
        },
    )
    bare = build_image(
        kube,
        env.ns,
        "dtk-only",
        "FROM dtk\nRUN ./nvidia-installer --kernel-module-only --kernel-name=${KERNEL_VERSION}\n",
        {"kind": "ImageStreamTag", "name": "driver-toolkit:latest", "namespace": "openshift"},
        {"KERNEL_VERSION": BUILD.kernel, "DRIVER_VERSION": "550.90.07"},
    )
    kube.create(
        DAEMONSETS,
        manifests.driver(env.ns, name="built-driver", image=image, args=["load"], node_selector=env.selector),
    )
    kube.create(DAEMONSETS, manifests.driver(env.ns, name="bare-dtk", image=bare, node_selector=env.selector))
    missing = "%s/%s/nvidia-driver:no-such-tag" % (catalog.INTERNAL_REGISTRY, env.ns)
    kube.create(DAEMONSETS, manifests.driver(env.ns, name="missing-image", image=missing, node_selector=env.selector))

    def driver_pod(app):
        pods = [p for p in kube.list(PODS, env.ns)[0] if labels_of(p).get("app") == app]
        return pods[0] if pods else None

    wait_for(
        lambda: container_status(driver_pod("built-driver") or {}).get("ready") is True,
        30,
        what="built driver Ready on the matching kernel",
    )
    last = wait_for(
        lambda: (container_status(driver_pod("bare-dtk") or {}).get("lastState") or {}).get("terminated"),
        20,
        what="the bare Driver Toolkit image fails to start nvidia-driver",
    )
    assert last["reason"] == "StartError" and 'exec: "nvidia-driver": executable file not found' in last["message"]
    waiting = wait_for(
        lambda: (container_status(driver_pod("missing-image") or {}).get("state") or {}).get("waiting"),
        20,
        what="missing image waiting",
    )
    assert waiting["reason"] == "ImagePullBackOff" and missing in waiting["message"]
    # The same image on another kernel no longer loads.
    control.upgrade_kernel(cluster.api, node, "5.14.0-427.50.1.el9_4.x86_64")
    wait_for(
        lambda: (container_status(driver_pod("built-driver")).get("state") or {}).get("waiting", {}).get("reason")
        == "CrashLoopBackOff",
        20,
        what="built driver crash-loops after the kernel upgrade",
    )
    log = pod_log(cluster.api, driver_pod("built-driver")["metadata"]["name"], env.ns, "built-driver-ctr")
    assert "Module nvidia not found in directory /lib/modules/5.14.0-427.50.1.el9_4.x86_64" in log


def test_a_driver_pod_replaced_under_gpu_clients_cannot_unload(cluster, kube, env):
    """Deleting a driver pod while GPU pods run: its replacement cannot unload the modules (driver in use) and
    crash-loops until the clients are gone (gpu-driver-container _unload_driver; review D7/D8)."""
    node = env.node(gpus=1, product="Tesla-T4")
    stack(kube, env)
    wait_for(lambda: allocatable(kube, node) == "1", 40, what="nvidia.com/gpu allocatable 1")
    job = manifests.validation_pod(env.ns, "training", command=("sleep", "infinity"), node_name=node)
    job["spec"]["restartPolicy"] = "Always"
    kube.create(PODS, job)
    wait_for(lambda: kube.get(PODS, "training", env.ns)["status"].get("phase") == "Running", 20, what="GPU pod")
    old = component_pod(kube, env.ns, "nvidia-driver")
    kube.delete(PODS, old["metadata"]["name"], env.ns)

    def replacement():
        pod = component_pod(kube, env.ns, "nvidia-driver")
        return pod if pod and pod["metadata"]["uid"] != old["metadata"]["uid"] else None

    wait_for(
        lambda: (container_status(replacement() or {}).get("state") or {}).get("waiting", {}).get("reason")
        == "CrashLoopBackOff",
        30,
        what="the new driver pod crash-loops",
    )
    log = pod_log(cluster.api, replacement()["metadata"]["name"], env.ns, "nvidia-driver-daemonset-ctr")
    assert "Could not unload NVIDIA driver kernel modules, driver is in use" in log
    kube.delete(PODS, "training", env.ns)
    kube.delete(DAEMONSETS, "nvidia-device-plugin-daemonset", env.ns)
    wait_for(
        lambda: container_status(replacement() or {}).get("ready") is True,
        40,
        what="the new driver pod Ready once no GPU client holds the device",
    )
