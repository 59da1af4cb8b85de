# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpuops.cluster.driver_container_build against the local control plane (OpenShift profile).

The simulated openshift-controller-manager runs the builds (New -> Pending ->
Running -> Complete/Failed, the pushed image lands in the ImageStream's
status.tags); every write is counted in the apiserver audit log.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from gpu_nodes import RHCOS_416, RHCOS_417, SET_LABEL, GpuNodes, catalog, kernel_of, os_release_of, wait_until
from kubernetes import client
from kubernetes.dynamic import DynamicClient

pytestmark = pytest.mark.integration

MODULE = "gpuops.cluster.driver_container_build"
K416 = kernel_of(RHCOS_416)
K417 = kernel_of(RHCOS_417)
HASH = "gpuops.cluster/inputs-hash"


@pytest.fixture
def nodes(cluster):
    made = GpuNodes(cluster.api)
    yield made
    made.cleanup()


@pytest.fixture
def dyn(cluster):
    return DynamicClient(cluster.api)


def res(dyn, kind, api_version):
    return dyn.resources.get(api_version=api_version, kind=kind)


def args_for(namespace, tag, **kw):
    args = {
        "driver_version": "550.90.07",
        "namespace": namespace,
        "node_selector": {SET_LABEL: tag},
        "wait_timeout": 120,
        "wait_sleep": 1,
    }
    args.update(kw)
    return args


def kinds(writes):
    return sorted((w["verb"], w["resource"]) for w in writes)


def test_check_mode_then_build_then_noop(cluster, namespace, nodes, ansible_task, dyn):
    tag, names = nodes.make(2, build=RHCOS_416)
    args = args_for(namespace, tag)

    mark = cluster.audit.mark()
    check = ansible_task(MODULE, args, check=True, diff=True)
    assert not check.get("failed"), check
    assert cluster.audit.writes_since(mark) == [], "check mode must not write"
    assert check["changed"] is True
    assert check["kernels"][K416]["action"] == "would-build"
    assert check["kernels"][K416]["nodes"] == sorted(names)
    headers = [d["before_header"] for d in check["diff"]]
    assert headers[0] == "ImageStream {0}/nvidia-gpu-driver".format(namespace)
    assert headers[1].startswith("BuildConfig {0}/nvidia-gpu-driver-5.14.0-427.22.1".format(namespace))
    assert res(dyn, "BuildConfig", "build.openshift.io/v1").get(namespace=namespace).items == []

    mark = cluster.audit.mark()
    first = ansible_task(MODULE, args)
    assert not first.get("failed"), first
    writes = cluster.audit.writes_since(mark)
    assert kinds(writes) == [("create", "builds"), ("patch", "buildconfigs"), ("patch", "imagestreams")], writes
    assert all(w["namespace"] == namespace for w in writes)
    assert first["changed"] is True and first["strategy"] == "driver-toolkit" and first["platform"] == "openshift"
    k = first["kernels"][K416]
    assert k["action"] == "built" and k["ready"] is True and k["build_phase"] == "Complete"
    tag_name = "550.90.07-{0}-rhcos4.16".format(K416)
    assert first["images"] == {
        K416: "{0}/{1}/nvidia-gpu-driver:{2}".format(catalog.INTERNAL_REGISTRY, namespace, tag_name)
    }
    assert k["image_digest"].startswith(
        "{0}/{1}/nvidia-gpu-driver@sha256:".format(catalog.INTERNAL_REGISTRY, namespace)
    )

    bc = res(dyn, "BuildConfig", "build.openshift.io/v1").get(name=k["buildconfig"], namespace=namespace).to_dict()
    assert bc["spec"]["strategy"]["dockerStrategy"]["from"] == {
        "kind": "DockerImage",
        "name": "nvcr.io/nvidia/driver:550.90.07-rhcos4.16",
    }
    build_args = dict((a["name"], a["value"]) for a in bc["spec"]["strategy"]["dockerStrategy"]["buildArgs"])
    assert build_args["DTK_IMAGE"] == catalog.dtk_image(RHCOS_416)
    build = res(dyn, "Build", "build.openshift.io/v1").get(name=k["build"], namespace=namespace).to_dict()
    assert build["metadata"]["labels"]["openshift.io/build-config.name"] == bc["metadata"]["name"]
    assert build["metadata"]["annotations"]["openshift.io/build.number"] == "1"
    assert build["metadata"]["annotations"][HASH] == bc["metadata"]["annotations"][HASH] == k["inputs_hash"]
    assert build["status"]["phase"] == "Complete"

    mark = cluster.audit.mark()
    second = ansible_task(MODULE, args)
    assert not second.get("failed"), second
    assert cluster.audit.writes_since(mark) == [], "a second run must not send any mutating request"
    assert second["changed"] is False and second["images"] == first["images"]
    assert second["kernels"][K416]["action"] == "current"


def test_inputs_change_shows_diff_and_rebuilds(cluster, namespace, nodes, ansible_task):
    tag, _names = nodes.make(1, build=RHCOS_416)
    first = ansible_task(MODULE, args_for(namespace, tag))
    assert not first.get("failed"), first

    changed_args = args_for(namespace, tag, build_args={"BASE_URL": "https://mirror.example.com/nvidia"})
    mark = cluster.audit.mark()
    check = ansible_task(MODULE, changed_args, check=True, diff=True)
    assert not check.get("failed") and check["changed"] is True
    assert cluster.audit.writes_since(mark) == []
    bc_diff = [d for d in check["diff"] if d["before_header"].startswith("BuildConfig")][0]
    assert bc_diff["before"]["metadata"]["annotations"][HASH] == first["kernels"][K416]["inputs_hash"]
    assert {"name": "BASE_URL", "value": "https://mirror.example.com/nvidia"} in bc_diff["after"]["spec"]["strategy"][
        "dockerStrategy"
    ]["buildArgs"]

    result = ansible_task(MODULE, changed_args, diff=True)
    assert not result.get("failed"), result
    assert result["changed"] is True and result["kernels"][K416]["build"].endswith("-2")
    assert "inputs changed" in result["kernels"][K416]["reason"]
    assert [d for d in result["diff"] if d["after_header"].startswith("Build for kernel")]


def test_failed_build_reports_reason_and_log(cluster, namespace, ansible_task):
    # Kernel 427.50.1 (RHCOS 4.17) against the 4.16 driver toolkit: the build cannot find its kernel headers.
    osr = os_release_of(RHCOS_416)
    args = {
        "driver_version": "550.90.07",
        "namespace": namespace,
        "kernel_versions": [K417],
        "os_release": {k: osr[k] for k in ("ID", "VERSION_ID", "OSTREE_VERSION", "RHEL_VERSION")},
        "wait_timeout": 120,
        "wait_sleep": 1,
    }
    result = ansible_task(MODULE, args)
    assert result.get("failed"), result
    assert "1 of 1 driver build(s) failed" in result["msg"]
    assert "(kernel {0}) Failed: DockerBuildFailed: Docker build strategy has failed.".format(K417) in result["msg"]
    assert "last log lines:" in result["msg"] and "/lib/modules/{0}/build".format(K417) in result["msg"]
    assert result["builds"][0]["phase"] == "Failed"


def test_kernel_upgrade_reports_and_prunes_stale(cluster, namespace, nodes, ansible_task, dyn):
    # A driver-toolkit stream with both RHCOS builds, as the cluster's has after an upgrade.
    streams = res(dyn, "ImageStream", "image.openshift.io/v1")
    streams.create(
        namespace=namespace,
        body={
            "apiVersion": "image.openshift.io/v1",
            "kind": "ImageStream",
            "metadata": {"name": "driver-toolkit", "namespace": namespace},
            "spec": {
                "tags": [
                    {"name": b, "from": {"kind": "DockerImage", "name": catalog.dtk_image(b)}}
                    for b in (RHCOS_416, RHCOS_417)
                ]
            },
        },
    )
    wait_until(
        lambda: len(
            (streams.get(name="driver-toolkit", namespace=namespace).to_dict().get("status") or {}).get("tags") or []
        )
        == 2,
        30,
        what="driver-toolkit tags imported",
    )
    tag, names = nodes.make(2, build=RHCOS_416)
    args = args_for(namespace, tag, driver_toolkit_namespace=namespace)
    first = ansible_task(MODULE, args)
    assert not first.get("failed"), first

    for name in names:
        nodes.relabel(name, RHCOS_417)
    upgraded = ansible_task(MODULE, args)
    assert not upgraded.get("failed"), upgraded
    assert list(upgraded["images"]) == [K417] and upgraded["kernels"][K417]["action"] == "built"
    assert [s["kernel"] for s in upgraded["stale"]] == [K416] and upgraded["pruned"] == []
    bcs = res(dyn, "BuildConfig", "build.openshift.io/v1")
    assert len(bcs.get(namespace=namespace).items) == 2

    mark = cluster.audit.mark()
    check = ansible_task(MODULE, dict(args, prune_stale=True), check=True, diff=True)
    assert not check.get("failed") and check["changed"] is True and check["pruned"][0]["kernel"] == K416
    assert cluster.audit.writes_since(mark) == []

    pruned = ansible_task(MODULE, dict(args, prune_stale=True))
    assert not pruned.get("failed"), pruned
    assert pruned["changed"] is True and pruned["pruned"][0]["buildconfig"] == first["kernels"][K416]["buildconfig"]
    left = [b.metadata.annotations["gpuops.cluster/kernel-version"] for b in bcs.get(namespace=namespace).items]
    assert left == [K417]
    wait_until(
        lambda: all(
            b.metadata.annotations["gpuops.cluster/kernel-version"] == K417
            for b in res(dyn, "Build", "build.openshift.io/v1").get(namespace=namespace).items
        ),
        30,
        what="builds of the stale kernel deleted",
    )

    mark = cluster.audit.mark()
    again = ansible_task(MODULE, dict(args, prune_stale=True))
    assert not again.get("failed") and again["changed"] is False and again["stale"] == []
    assert cluster.audit.writes_since(mark) == []


def test_entitlement_build(cluster, namespace, nodes, ansible_task):
    tag, _names = nodes.make(1, build=RHCOS_416)
    pem = {"entitlement.pem": "-----BEGIN CERTIFICATE-----\n", "entitlement-key.pem": "-----BEGIN PRIVATE KEY-----\n"}
    client.CoreV1Api(cluster.api).create_namespaced_secret(
        namespace, {"metadata": {"name": "etc-pki-entitlement"}, "stringData": pem}
    )
    result = ansible_task(MODULE, args_for(namespace, tag, strategy="entitlement"))
    assert not result.get("failed"), result
    assert result["strategy"] == "entitlement" and result["kernels"][K416]["ready"] is True


def test_build_stuck_on_missing_entitlement_secret_names_the_secret(cluster, namespace, nodes, ansible_task):
    """The build pod cannot mount the entitlement secret: its FailedMount event is the answer, not the timeout."""
    tag, _names = nodes.make(1, build=RHCOS_416)
    args = args_for(
        namespace,
        tag,
        strategy="entitlement",
        base_image="registry.access.redhat.com/ubi9/ubi:latest",
        wait_timeout=60,
        wait_sleep=2,
    )
    result = ansible_task(MODULE, args)
    assert result.get("failed"), result
    assert result["msg"].startswith("entitlement_secret:"), result["msg"]
    assert "FailedMount: MountVolume.SetUp failed for volume" in result["msg"], result["msg"]
    assert 'secret "etc-pki-entitlement" not found' in result["msg"], result["msg"]
    assert result["builds"][0]["phase"] == "Pending", result["builds"]


def test_node_names_restrict_the_nodes(cluster, namespace, nodes, ansible_task):
    tag, names = nodes.make(2, build=RHCOS_416)
    mark = cluster.audit.mark()
    check = ansible_task(MODULE, args_for(namespace, tag, node_names=[names[1]]), check=True)
    assert not check.get("failed"), check
    assert check["kernels"][K416]["nodes"] == [names[1]]
    wrong = ansible_task(MODULE, args_for(namespace, tag, node_names=["no-such-node"]))
    assert wrong.get("failed") and wrong["msg"].startswith("node_names:"), wrong
    assert cluster.audit.writes_since(mark) == []


def _unreachable_env(cluster):
    return {
        "K8S_AUTH_KUBECONFIG": None,
        "K8S_AUTH_HOST": "https://127.0.0.1:9",
        "K8S_AUTH_API_KEY": "x",
        "K8S_AUTH_VERIFY_SSL": "false",
    }


def _token_env(cluster, token):
    return {
        "K8S_AUTH_KUBECONFIG": None,
        "K8S_AUTH_HOST": cluster.server,
        "K8S_AUTH_API_KEY": token,
        "K8S_AUTH_SSL_CA_CERT": cluster.ca_cert,
    }


BAD = [
    ("kernel malformed", dict(kernel_versions=["5.14"]), None, "kernel_versions:"),
    ("driver malformed", dict(driver_version="550.90.07.1"), None, "driver_version:"),
    ("branch needs precompiled", dict(driver_version="550"), None, "driver_version:"),
    ("selector matches nothing", dict(node_selector={SET_LABEL: "no-such-set"}), None, "node_selector:"),
    ("timeout too small", dict(wait_timeout=5), None, "wait_timeout:"),
    ("namespace missing", dict(namespace="no-such-namespace"), None, "namespace:"),
    ("no entitlement secret", dict(strategy="entitlement"), None, "entitlement_secret:"),
    ("bad name", dict(name="Driver_Images"), None, "name:"),
    ("unknown strategy", dict(strategy="magic"), None, "value of strategy must be one of"),
    (
        "dockerfile and git_uri",
        dict(dockerfile="FROM x", git_uri="https://example.com/x.git"),
        None,
        "dockerfile|git_uri",
    ),
    ("git_ref without git_uri", dict(git_ref="main"), None, "required by 'git_ref': git_uri"),
    ("os_release key unknown", dict(kernel_versions=[K416], os_release={"BOGUS": "x"}), None, "os_release.BOGUS"),
    ("os_release without kernels", dict(os_release={"ID": "rhcos"}), None, "required by 'os_release'"),
    (
        "toolkit tag missing",
        dict(
            kernel_versions=[K416],
            os_release={"ID": "rhcos", "VERSION_ID": "4.16", "OSTREE_VERSION": "416.94.209901010000-0"},
        ),
        None,
        "base_image:",
    ),
    ("unreachable API", {}, _unreachable_env, "host:"),
    ("401 token", {}, lambda c: _token_env(c, "not-a-valid-token"), "api_key:"),
]


@pytest.mark.parametrize("what,override,env,prefix", BAD, ids=[b[0] for b in BAD])
def test_bad_input_fails_clearly_and_writes_nothing(
    cluster, namespace, nodes, ansible_task, what, override, env, prefix
):
    tag, _names = nodes.make(1, build=RHCOS_416)
    args = args_for(namespace, tag)
    args.update(override)
    mark = cluster.audit.mark()
    result = ansible_task(MODULE, args, env=env(cluster) if env else None)
    assert result.get("failed"), result
    assert prefix in result["msg"], result["msg"]
    if prefix.endswith(":"):
        assert result["msg"].startswith(prefix), result["msg"]
    assert cluster.audit.writes_since(mark) == []


def test_forbidden_user_gets_403_and_writes_nothing(cluster, namespace, nodes, ansible_task):
    tag, _names = nodes.make(1, build=RHCOS_416)
    mark = cluster.audit.mark()
    result = ansible_task(
        MODULE, args_for(namespace, tag), env={"K8S_AUTH_KUBECONFIG": cluster.kubeconfig_of("nobody")}
    )
    assert result.get("failed") and "403" in result["msg"], result
    assert cluster.audit.writes_since(mark, user="nobody") == []
