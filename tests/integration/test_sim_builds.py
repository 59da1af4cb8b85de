# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Simulated OpenShift builds: driver-container builds on the driver-toolkit, and their failures."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import sys
import threading
import time
import uuid

import pytest
from simopenshift.control import wait_match  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "localcluster"))

from simopenshift import apis, catalog  # noqa: E402
from simopenshift.builds import build_from_config  # noqa: E402
from simopenshift.kube import EVENTS, NAMESPACES, PODS, SECRETS, SERVICEACCOUNTS, condition  # noqa: E402
from simopenshift.testing import pod_log, wait_for  # noqa: E402

pytestmark = pytest.mark.integration

KERNEL = catalog.cluster_build().kernel
DOCKERFILE = """FROM driver-toolkit
ARG KERNEL_VERSION
ARG DRIVER_VERSION=550.90.07
WORKDIR /build
RUN curl -fsSLO https://us.download.nvidia.com/tesla/${DRIVER_VERSION}/NVIDIA-Linux-x86_64-${DRIVER_VERSION}.run \\
    && sh NVIDIA-Linux-x86_64-${DRIVER_VERSION}.run -x
RUN make -C /lib/modules/${KERNEL_VERSION}/build M=/build/kernel modules
COPY --from=0 /build/kernel/*.ko /opt/nvidia/
"""


@pytest.fixture
def ns(kube):
    name = "sim-build-" + uuid.uuid4().hex[:5]
    kube.create(NAMESPACES, {"metadata": {"name": name}})
    wait_for(lambda: kube.get(SERVICEACCOUNTS, "builder", name), 20, what="builder ServiceAccount")
    kube.create(
        apis.IMAGESTREAMS,
        {
            "apiVersion": apis.IMAGESTREAMS.api_version,
            "kind": "ImageStream",
            "metadata": {"name": "nvidia-driver", "namespace": name},
            "spec": {},
        },
    )
    yield name
    kube.delete(NAMESPACES, name)


def buildconfig(kube, ns, name="driver", kernel=KERNEL, base=None, secrets=None, volumes=None, triggers=None, tag=None):
    base = base or {
        "kind": "ImageStreamTag",
        "name": "driver-toolkit:" + catalog.CLUSTER_RHCOS_BUILD,
        "namespace": "openshift",
    }
    source = {"type": "Dockerfile", "dockerfile": DOCKERFILE}
    if secrets:
        source["secrets"] = secrets
    strategy = {
        "type": "Docker",
        "dockerStrategy": {"from": base, "buildArgs": [{"name": "KERNEL_VERSION", "value": kernel}]},
    }
    if volumes:
        strategy["dockerStrategy"]["volumes"] = volumes
    body = {
        "apiVersion": apis.BUILDCONFIGS.api_version,
        "kind": "BuildConfig",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "runPolicy": "Serial",
            "triggers": triggers or [],
            "source": source,
            "strategy": strategy,
            "output": {"to": {"kind": "ImageStreamTag", "name": "nvidia-driver:%s" % (tag or kernel)}},
        },
    }
    return kube.create(apis.BUILDCONFIGS, body)


def start_build(kube, bc, number=1):
    """What `oc start-build` does: a Build from the BuildConfig, numbered, labelled."""
    return kube.create(apis.BUILDS, build_from_config(bc, number))


def build_of(kube, ns, name):
    return kube.get(apis.BUILDS, name, ns) or {}


def phase_of(kube, ns, name):
    return (build_of(kube, ns, name).get("status") or {}).get("phase")


def wait_phase(kube, ns, name, phase, timeout=30):
    return wait_for(
        lambda: phase_of(kube, ns, name) == phase and build_of(kube, ns, name),
        timeout,
        what="build %s %s" % (name, phase),
    )


def test_driver_build_on_the_driver_toolkit_completes(cluster, kube, ns):
    bc = buildconfig(kube, ns)
    seen = []
    stop = threading.Event()

    def sample():
        # Runs until it has itself seen a terminal phase: stopping it when
        # wait_phase returns raced it out of sampling "Complete" (a CI flake).
        while not stop.is_set():
            phase = phase_of(kube, ns, "driver-1")
            if phase and (not seen or seen[-1] != phase):
                seen.append(phase)
            if phase in ("Complete", "Failed", "Error", "Cancelled"):
                return
            time.sleep(0.03)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        start_build(kube, bc)
        build = wait_phase(kube, ns, "driver-1", "Complete")
        sampler.join(10)
    finally:
        stop.set()
        sampler.join()
    assert seen == ["New", "Pending", "Running", "Complete"]
    status = build["status"]
    digest = status["output"]["to"]["imageDigest"]
    assert digest.startswith("sha256:") and len(digest) == 71
    assert status[
        "outputDockerImageReference"
    ] == "image-registry.openshift-image-registry.svc:5000/%s/nvidia-driver:%s" % (ns, KERNEL)
    assert status["config"] == {"kind": "BuildConfig", "name": "driver", "namespace": ns}
    assert status["startTimestamp"] <= status["completionTimestamp"]
    assert status["duration"] > 10**9  # nanoseconds, as time.Duration serializes
    assert "logSnippet" not in status
    stream = kube.get(apis.IMAGESTREAMS, "nvidia-driver", ns)
    assert (
        stream["status"]["dockerImageRepository"]
        == "image-registry.openshift-image-registry.svc:5000/%s/nvidia-driver" % ns
    )
    item = {t["tag"]: t["items"] for t in stream["status"]["tags"]}[KERNEL][0]
    assert item["image"] == digest
    assert item["dockerImageReference"] == "image-registry.openshift-image-registry.svc:5000/%s/nvidia-driver@%s" % (
        ns,
        digest,
    )
    wait_for(
        lambda: (kube.get(apis.BUILDCONFIGS, "driver", ns).get("status") or {}).get("lastVersion") == 1,
        10,
        what="BuildConfig lastVersion 1",
    )
    pod = kube.get(PODS, "driver-1-build", ns)
    assert pod["status"]["phase"] == "Succeeded"
    assert pod["metadata"]["labels"]["openshift.io/build.name"] == "driver-1"
    log = pod_log(cluster.api, "driver-1-build", ns)
    assert "STEP 1/7: FROM driver-toolkit" in log and "Push successful" in log
    assert "Building NVIDIA kernel modules for kernel %s" % KERNEL in log


def test_kernel_mismatch_with_the_driver_toolkit_fails_the_build(cluster, kube, ns):
    other = "5.14.0-427.50.1.el9_4.x86_64"
    bc = buildconfig(kube, ns, kernel=other)
    start_build(kube, bc)
    build = wait_phase(kube, ns, "driver-1", "Failed")
    status = build["status"]
    assert status["reason"] == "DockerBuildFailed"
    assert status["message"] == "Docker build strategy has failed."
    assert "/lib/modules/%s/build: No such file or directory" % other in status["logSnippet"]
    assert status["completionTimestamp"] and status["duration"] > 0
    assert "output" not in status or not (status.get("output") or {}).get("to")
    stream = kube.get(apis.IMAGESTREAMS, "nvidia-driver", ns)
    assert not [t for t in (stream.get("status") or {}).get("tags") or [] if t["tag"] == other]
    assert kube.get(PODS, "driver-1-build", ns)["status"]["phase"] == "Failed"
    assert KERNEL in pod_log(cluster.api, "driver-1-build", ns)  # the DTK's own kernel is printed


def test_missing_base_image_keeps_the_build_new_until_it_appears(kube, ns):
    kube.create(
        apis.IMAGESTREAMS,
        {
            "apiVersion": apis.IMAGESTREAMS.api_version,
            "kind": "ImageStream",
            "metadata": {"name": "base", "namespace": ns},
            "spec": {},
        },
    )
    bc = buildconfig(kube, ns, base={"kind": "ImageStreamTag", "name": "base:v1"})
    start_build(kube, bc)
    build = wait_match(
        lambda: build_of(kube, ns, "driver-1"),
        lambda b: (b.get("status") or {}).get("reason"),
        20,
        what="build reason",
    )
    assert build["status"]["phase"] == "New"
    assert build["status"]["reason"] == "InvalidImageReference"
    assert build["status"]["message"] == "Referenced image could not be resolved."
    time.sleep(1.5)
    assert phase_of(kube, ns, "driver-1") == "New"
    kube.patch(
        apis.IMAGESTREAMS,
        "base",
        {
            "spec": {
                "tags": [
                    {
                        "name": "v1",
                        "from": {
                            "kind": "DockerImage",
                            "name": "registry.access.redhat.com/ubi9/ubi@sha256:" + "a" * 64,
                        },
                    }
                ]
            }
        },
        ns,
    )
    # UBI base + KERNEL_VERSION needs an entitlement: it now runs, then fails for that reason.
    build = wait_phase(kube, ns, "driver-1", "Failed", timeout=30)
    assert "not registered with an entitlement server" in build["status"]["logSnippet"]


def test_missing_output_stream_is_invalid_output_reference(kube, ns):
    bc = buildconfig(kube, ns)
    kube.delete(apis.IMAGESTREAMS, "nvidia-driver", ns)
    wait_for(lambda: kube.get(apis.IMAGESTREAMS, "nvidia-driver", ns) is None, 10)
    start_build(kube, bc)
    build = wait_match(
        lambda: build_of(kube, ns, "driver-1"),
        lambda b: (b.get("status") or {}).get("reason"),
        20,
        what="build reason",
    )
    assert (build["status"]["phase"], build["status"]["reason"]) == ("New", "InvalidOutputReference")


def entitlement_secret(kube, ns, name="etc-pki-entitlement"):
    pem = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nsim\n-----END CERTIFICATE-----\n").decode()
    kube.create(
        SECRETS,
        {"metadata": {"name": name, "namespace": ns}, "data": {"entitlement.pem": pem, "entitlement-key.pem": pem}},
    )


def test_missing_secret_keeps_the_build_pending(kube, ns):
    ubi = {"kind": "DockerImage", "name": "registry.access.redhat.com/ubi9/ubi:latest"}
    volumes = [
        {
            "name": "etc-pki-entitlement",
            "source": {"type": "Secret", "secret": {"secretName": "etc-pki-entitlement"}},
            "mounts": [{"destinationPath": "/etc/pki/entitlement"}],
        }
    ]
    bc = buildconfig(kube, ns, base=ubi, volumes=volumes)
    start_build(kube, bc)
    wait_phase(kube, ns, "driver-1", "Pending")

    def failed_mount():
        events = kube.list(EVENTS, ns)[0]
        return [e for e in events if e["reason"] == "FailedMount" and e["involvedObject"]["name"] == "driver-1-build"]

    event = wait_for(failed_mount, 20, what="FailedMount event on the build pod")[0]
    assert 'secret "etc-pki-entitlement" not found' in event["message"]
    pod = kube.get(PODS, "driver-1-build", ns)
    assert pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"
    time.sleep(1.5)
    assert phase_of(kube, ns, "driver-1") == "Pending"
    # The entitlement secret appears: the pod starts and the entitled UBI build succeeds.
    entitlement_secret(kube, ns)
    wait_phase(kube, ns, "driver-1", "Complete", timeout=30)


def test_cluster_wide_entitlement_lets_ubi_builds_install_kernel_devel(kube, ns):
    ubi = {"kind": "DockerImage", "name": "registry.access.redhat.com/ubi9/ubi:latest"}
    bc = buildconfig(kube, ns, base=ubi)
    start_build(kube, bc)
    failed = wait_phase(kube, ns, "driver-1", "Failed")
    assert "Unable to find a match: kernel-devel-%s" % KERNEL in failed["status"]["logSnippet"]
    pem = "data:text/plain;charset=utf-8;base64," + base64.b64encode(b"sim-cert").decode()
    mc = {
        "apiVersion": apis.MACHINECONFIGS.api_version,
        "kind": "MachineConfig",
        "metadata": {
            "name": "50-entitlement-pem-" + ns,
            "labels": {"machineconfiguration.openshift.io/role": "worker"},
        },
        "spec": {
            "config": {
                "ignition": {"version": "3.2.0"},
                "storage": {
                    "files": [
                        {
                            "path": "/etc/pki/entitlement/entitlement.pem",
                            "mode": 420,
                            "overwrite": True,
                            "contents": {"source": pem},
                        }
                    ]
                },
            }
        },
    }
    kube.patch(apis.MACHINECONFIGPOOLS, "worker", {"spec": {"maxUnavailable": "100%"}})
    kube.create(apis.MACHINECONFIGS, mc)
    try:

        def rolled_out():
            pool = kube.get(apis.MACHINECONFIGPOOLS, "worker")
            sources = [s["name"] for s in (pool["status"].get("configuration") or {}).get("source") or []]
            return mc["metadata"]["name"] in sources and (condition(pool, "Updated") or {}).get("status") == "True"

        wait_for(rolled_out, 60, what="entitlement MachineConfig rolled out")
        start_build(kube, kube.get(apis.BUILDCONFIGS, "driver", ns), number=2)
        wait_phase(kube, ns, "driver-2", "Complete")
    finally:
        kube.delete(apis.MACHINECONFIGS, mc["metadata"]["name"])
        wait_for(
            lambda: mc["metadata"]["name"]
            not in [
                s["name"]
                for s in (kube.get(apis.MACHINECONFIGPOOLS, "worker")["status"].get("configuration") or {}).get(
                    "source"
                )
                or []
            ],
            60,
            what="rolled back",
        )
        kube.patch(apis.MACHINECONFIGPOOLS, "worker", {"spec": {"maxUnavailable": None}})


def test_config_change_trigger_and_serial_run_policy(kube, ns):
    buildconfig(kube, ns, triggers=[{"type": "ConfigChange"}])
    wait_for(lambda: build_of(kube, ns, "driver-1"), 20, what="build 1 started by the ConfigChange trigger")
    assert build_of(kube, ns, "driver-1")["spec"]["triggeredBy"][0]["message"] == "Build configuration change"
    start_build(kube, kube.get(apis.BUILDCONFIGS, "driver", ns), number=2)
    wait_phase(kube, ns, "driver-1", "Running")
    # Serial: build 2 waits in New while build 1 runs.
    assert phase_of(kube, ns, "driver-2") == "New"
    wait_phase(kube, ns, "driver-1", "Complete")
    wait_phase(kube, ns, "driver-2", "Complete")
    wait_for(
        lambda: kube.get(apis.BUILDCONFIGS, "driver", ns)["status"].get("lastVersion") == 2, 10, what="lastVersion 2"
    )
