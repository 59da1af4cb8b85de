# -*- coding: utf-8 -*-
"""driver_container_build through main() against an in-memory API with a tiny build controller.

The integration tests run the same paths against the real local control plane;
these keep the runner logic (plan, check mode, diff, idempotence, failures
before writes) testable without one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import ConflictError

from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import render as b
from ansible_collections.gpuops.cluster.plugins.modules import driver_container_build
from ansible_collections.gpuops.cluster.tests.unit.plugins.modules.fake_k8s import (
    FakeClient,
    Instance,
    Response,
    _merge,
    run,
)

K416 = "5.14.0-427.22.1.el9_4.x86_64"
K414 = "5.14.0-284.73.1.el9_2.x86_64"
OST416 = "416.94.202406172220-0"
OST414 = "414.92.202310210434-0"
NS = "nvidia-gpu-operator"
KINDS = {
    ("Node", "v1"): False,
    ("Namespace", "v1"): False,
    ("Secret", "v1"): True,
    ("Pod", "v1"): True,
    ("Event", "v1"): True,
    ("ImageStream", "image.openshift.io/v1"): True,
    ("ImageStreamTag", "image.openshift.io/v1"): True,
    ("BuildConfig", "build.openshift.io/v1"): True,
    ("Build", "build.openshift.io/v1"): True,
}


class BuildCluster(FakeClient):
    """FakeClient + server-side apply, name conflicts, deletecollection and a build controller."""

    def __init__(self, objects=(), kinds=None, fail_builds=False, mount_fails=False):
        super(BuildCluster, self).__init__(objects, kinds=KINDS if kinds is None else kinds)
        self.fail_builds = fail_builds
        self.mount_fails = mount_fails
        self.on_get = BuildCluster.controller

    def create(self, resource, definition, namespace=None, **params):
        key = (resource.kind, namespace if resource.namespaced else None, definition["metadata"]["name"])
        if key in self.store:
            raise ConflictError(ApiException(status=409, reason="AlreadyExists"))
        response = super(BuildCluster, self).create(resource, definition, namespace=namespace, **params)
        return response if params.get("serialize") is False else Instance(self.store[key])

    def apply(self, resource, definition, namespace=None, **params):
        self.writes.append(("apply", resource.kind, definition["metadata"]["name"], params.get("dry_run")))
        key = (resource.kind, namespace if resource.namespaced else None, definition["metadata"]["name"])
        current = self.store.get(key)
        obj = copy.deepcopy(definition) if current is None else _merge(current, definition)
        obj["metadata"]["namespace"] = namespace
        obj["metadata"].setdefault("uid", "uid-" + obj["metadata"]["name"])
        obj["metadata"]["resourceVersion"] = str(
            int((current or {}).get("metadata", {}).get("resourceVersion", "0")) + 1
        )
        self.store[key] = obj
        return Response(obj)

    def controller(self, resource):
        """New builds finish at once: Complete and tag the ImageStream, or Failed."""
        for key, build in list(self.store.items()):
            if key[0] != "Build" or (build.get("status") or {}).get("phase") not in (None, "New"):
                continue
            if self.mount_fails:
                self.stuck_on_mount(key[1], build)
                continue
            if self.fail_builds:
                build["status"] = {
                    "phase": "Failed",
                    "reason": "DockerBuildFailed",
                    "message": "Docker build strategy has failed.",
                    "logSnippet": "STEP 3/5: RUN grep KERNEL_VERSION\ndriver toolkit kernel does not match " + K416,
                }
                continue
            build["status"] = {"phase": "Complete"}
            is_name, tag = build["spec"]["output"]["to"]["name"].split(":", 1)
            isk = ("ImageStream", key[1], is_name)
            stream = self.store[isk]
            status = stream.setdefault(
                "status",
                {
                    "dockerImageRepository": "image-registry.openshift-image-registry.svc:5000/{0}/{1}".format(
                        key[1], is_name
                    )
                },
            )
            tags = [t for t in status.setdefault("tags", []) if t["tag"] != tag]
            tags.append(
                {
                    "tag": tag,
                    "items": [{"dockerImageReference": status["dockerImageRepository"] + "@sha256:" + "c" * 64}],
                }
            )
            status["tags"] = tags

    def stuck_on_mount(self, namespace, build):
        """The build pod cannot mount the entitlement secret: Pending, and the kubelet's FailedMount event."""
        build["status"] = {"phase": "Pending"}
        pod = build["metadata"]["name"] + "-build"
        self.put(
            {
                "kind": "Event",
                "type": "Warning",
                "reason": "FailedMount",
                "message": 'MountVolume.SetUp failed for volume "build-secret-0" : '
                'secret "etc-pki-entitlement" not found',
                "count": 3,
                "involvedObject": {"kind": "Pod", "name": pod, "namespace": namespace},
                "metadata": {"name": pod + ".17f0a1b2c3d4e5f6", "namespace": namespace},
            }
        )

    def writes_of(self, *verbs):
        return [w for w in self.writes if w[0] in verbs]


def gpu_node(name, kernel=K416, ostree=OST416, ocp="4.16", rhel="9.4"):
    nfd = "feature.node.kubernetes.io/"
    return {
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                nfd + "pci-10de.present": "true",
                nfd + "kernel-version.full": kernel,
                nfd + "system-os_release.ID": "rhcos",
                nfd + "system-os_release.VERSION_ID": ocp,
                nfd + "system-os_release.OSTREE_VERSION": ostree,
                nfd + "system-os_release.RHEL_VERSION": rhel,
            },
        },
    }


def cpu_node(name):
    return {"kind": "Node", "metadata": {"name": name, "labels": {"node-role.kubernetes.io/worker": ""}}}


def dtk(*tags):
    return {
        "kind": "ImageStream",
        "metadata": {"name": "driver-toolkit", "namespace": "openshift"},
        "spec": {"tags": [{"name": t} for t in tags + ("latest",)]},
    }


def cluster(nodes=None, **kw):
    objs = [
        {"kind": "Namespace", "metadata": {"name": NS}},
        {"kind": "Namespace", "metadata": {"name": "openshift"}},
        dtk(OST416, OST414),
        cpu_node("worker-0"),
    ]
    objs += nodes if nodes is not None else [gpu_node("gpu-0"), gpu_node("gpu-1")]
    return BuildCluster(objs, **kw)


def go(monkeypatch, client, check=False, diff=False, **args):
    args.setdefault("driver_version", "550.90.07")
    args.setdefault("wait_sleep", 1)
    return run(monkeypatch, driver_container_build.main, client, args, check=check, diff=diff)


def test_first_run_builds_second_run_writes_nothing(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client)
    assert not failed, result
    assert result["changed"] is True and result["strategy"] == "driver-toolkit" and result["platform"] == "openshift"
    tag = "550.90.07-{0}-rhcos4.16".format(K416)
    assert result["images"] == {
        K416: "image-registry.openshift-image-registry.svc:5000/{0}/nvidia-gpu-driver:{1}".format(NS, tag)
    }
    k = result["kernels"][K416]
    assert k["nodes"] == ["gpu-0", "gpu-1"] and k["action"] == "built" and k["ready"] and k["build_phase"] == "Complete"
    assert k["image_digest"].endswith("c" * 64)
    assert [(w[0], w[1]) for w in client.writes] == [
        ("apply", "ImageStream"),
        ("apply", "BuildConfig"),
        ("create", "Build"),
    ]
    build = client.objects("Build")[0]
    assert build["metadata"]["name"] == k["buildconfig"] + "-1"
    assert build["metadata"]["labels"][b.BC_NAME_KEY] == k["buildconfig"]
    assert build["metadata"]["ownerReferences"][0]["uid"] == "uid-" + k["buildconfig"]
    assert result["builds"] == [
        dict(
            name=build["metadata"]["name"],
            kernel=K416,
            phase="Complete",
            reason=None,
            message=None,
            duration=None,
            output_image=None,
        )
    ]

    client.writes = []
    again, failed = go(monkeypatch, client)
    assert not failed, again
    assert again["changed"] is False and client.writes == []
    assert again["images"] == result["images"] and again["kernels"][K416]["action"] == "current"


def test_check_mode_writes_nothing_and_reports(monkeypatch):
    client = cluster()
    result, failed = go(monkeypatch, client, check=True, diff=True)
    assert not failed, result
    assert client.writes == []
    assert result["changed"] is True and result["kernels"][K416]["action"] == "would-build"
    headers = [d["before_header"] for d in result["diff"]]
    assert headers[0] == "ImageStream {0}/nvidia-gpu-driver".format(NS)
    assert headers[1].startswith("BuildConfig {0}/nvidia-gpu-driver-5.14.0".format(NS))
    assert result["diff"][1]["before"] == {} and result["diff"][1]["after"]["kind"] == "BuildConfig"
    assert result["diff"][2]["after"]["kind"] == "Build"


def test_inputs_change_updates_and_rebuilds_with_diff(monkeypatch):
    client = cluster()
    go(monkeypatch, client)
    client.writes = []
    result, failed = go(monkeypatch, client, diff=True, build_args={"BASE_URL": "https://mirror.example.com/nvidia"})
    assert not failed, result
    assert [(w[0], w[1]) for w in client.writes] == [("apply", "BuildConfig"), ("create", "Build")]
    assert result["kernels"][K416]["build"].endswith("-2")
    assert "inputs changed" in result["kernels"][K416]["reason"]
    bc_diff = [d for d in result["diff"] if d["before_header"].startswith("BuildConfig")][0]
    assert (
        bc_diff["before"]["metadata"]["annotations"][b.HASH_KEY]
        != bc_diff["after"]["metadata"]["annotations"][b.HASH_KEY]
    )
    assert {"name": "BASE_URL", "value": "https://mirror.example.com/nvidia"} in bc_diff["after"]["spec"]["strategy"][
        "dockerStrategy"
    ]["buildArgs"]


def test_kernel_upgrade_builds_new_kernel_and_reports_stale(monkeypatch):
    client = cluster(
        nodes=[gpu_node("gpu-0", K414, OST414, "4.14", "9.2"), gpu_node("gpu-1", K414, OST414, "4.14", "9.2")]
    )
    go(monkeypatch, client)
    # the nodes are upgraded: NFD relabels them with the new kernel
    client.put(gpu_node("gpu-0"))
    client.put(gpu_node("gpu-1"))
    client.writes = []
    result, failed = go(monkeypatch, client)
    assert not failed, result
    assert list(result["images"]) == [K416]
    assert [s["kernel"] for s in result["stale"]] == [K414] and result["pruned"] == []
    assert result["stale"][0]["tags"] == ["550.90.07-{0}-rhcos4.14".format(K414)]
    assert len(client.objects("BuildConfig")) == 2
    # prune in check mode: nothing deleted
    client.writes = []
    result, failed = go(monkeypatch, client, check=True, prune_stale=True)
    assert not failed and client.writes == [] and result["changed"] is True and result["pruned"][0]["kernel"] == K414
    result, failed = go(monkeypatch, client, prune_stale=True)
    assert not failed, result
    assert [bc["metadata"]["annotations"][b.KERNEL_KEY] for bc in client.objects("BuildConfig")] == [K416]
    assert all(bd["metadata"]["annotations"][b.KERNEL_KEY] == K416 for bd in client.objects("Build"))
    assert ("delete", "ImageStreamTag", "nvidia-gpu-driver:550.90.07-{0}-rhcos4.14".format(K414), None) in client.writes
    client.writes = []
    result, failed = go(monkeypatch, client, prune_stale=True)
    assert not failed and result["changed"] is False and client.writes == [] and result["stale"] == []


def test_failed_build_fails_with_reason_and_log(monkeypatch):
    client = cluster(fail_builds=True)
    result, failed = go(monkeypatch, client)
    assert failed
    assert "1 of 1 driver build(s) failed" in result["msg"]
    assert "Failed: DockerBuildFailed: Docker build strategy has failed." in result["msg"]
    assert "driver toolkit kernel does not match" in result["msg"]
    assert result["builds"][0]["phase"] == "Failed"
    # a re-run retries (the image is still missing), it does not wait on the failed build
    client.fail_builds = False
    result, failed = go(monkeypatch, client)
    assert not failed and result["kernels"][K416]["build"].endswith("-2")
    assert "retrying after" in result["kernels"][K416]["reason"]


def test_running_build_is_waited_for_not_duplicated(monkeypatch):
    client = cluster()
    client.on_get = None  # no controller: the build stays New
    result, failed = go(monkeypatch, client, wait=False)
    assert not failed and result["kernels"][K416]["action"] == "building" and not result["kernels"][K416]["ready"]
    client.writes = []
    client.on_get = BuildCluster.controller
    result, failed = go(monkeypatch, client)
    assert not failed, result
    assert client.writes == [] and result["kernels"][K416]["build"].endswith("-1") and result["kernels"][K416]["ready"]


def test_bad_inputs_fail_before_any_write(monkeypatch):
    cases = [
        (dict(kernel_versions=["5.14"]), "kernel_versions"),
        (dict(driver_version="550.90"), None),  # valid
        (dict(driver_version="latest"), "driver_version"),
        (dict(driver_version="550"), "driver_version"),
        (dict(node_selector={"gpu": "nonexistent"}), "node_selector"),
        (dict(wait_timeout=5), "wait_timeout"),
        (dict(namespace="missing-ns"), "namespace"),
        (dict(strategy="entitlement"), "entitlement_secret"),
        (dict(name="Not_A_Name"), "name"),
        (dict(kernel_versions=[K416], os_release={"ID": "rhcos", "VERSION_ID": "4.16"}), "os_release"),
        (
            dict(
                kernel_versions=[K416],
                os_release={"ID": "rhcos", "VERSION_ID": "4.16", "OSTREE_VERSION": "416.94.209901010000-0"},
            ),
            "base_image",
        ),
    ]
    for args, param in cases:
        result = fails_before_writing(monkeypatch, args, param)
        if param is not None:
            assert result["msg"].startswith(param + ":"), (args, result["msg"])
            assert result.get("param") == param


def fails_before_writing(monkeypatch, args, param, reads=None):
    """Run with ``args``: no failure when ``param`` is None, else a failure naming it and no write."""
    client = cluster()
    result, failed = go(monkeypatch, client, **args)
    if param is None:
        assert not failed, result
        return result
    assert client.writes == [], args
    assert failed and param in result["msg"], (args, result)
    if reads is not None:
        assert client.reads == reads, args
    return result


def test_missing_driver_toolkit_tag_names_nodes(monkeypatch):
    client = cluster(nodes=[gpu_node("gpu-9", K416, "416.94.209901010000-0")])
    result, failed = go(monkeypatch, client)
    assert failed and client.writes == []
    assert "driver-toolkit has no tag 416.94.209901010000-0" in result["msg"] and "gpu-9" in result["msg"]


def test_node_without_kernel_label(monkeypatch):
    node = gpu_node("gpu-new")
    del node["metadata"]["labels"]["feature.node.kubernetes.io/kernel-version.full"]
    client = cluster(nodes=[gpu_node("gpu-0"), node])
    result, failed = go(monkeypatch, client)
    assert failed and "gpu-new" in result["msg"] and client.writes == []


def test_plain_kubernetes_precompiled(monkeypatch):
    kinds = dict((k, v) for k, v in KINDS.items() if "openshift" not in k[1])
    ubuntu = {
        "kind": "Node",
        "metadata": {
            "name": "u-0",
            "labels": {
                "feature.node.kubernetes.io/pci-0302_10de.present": "true",
                "feature.node.kubernetes.io/kernel-version.full": "5.15.0-69-generic",
                "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
                "feature.node.kubernetes.io/system-os_release.VERSION_ID": "22.04",
            },
        },
    }
    client = BuildCluster([ubuntu], kinds=kinds)
    result, failed = go(monkeypatch, client, driver_version="550", strategy="precompiled")
    assert not failed, result
    assert result["strategy"] == "precompiled" and result["platform"] == "kubernetes" and result["changed"] is False
    assert result["images"] == {"5.15.0-69-generic": "nvcr.io/nvidia/driver:550-5.15.0-69-generic-ubuntu22.04"}
    assert client.writes == []
    # auto on plain Kubernetes: NVIDIA's runtime-compiled image of the OS (any kernel), a full version
    result, failed = go(monkeypatch, client, driver_version="595.91.07")
    assert not failed, result
    assert result["strategy"] == "runtime-compiled"
    assert result["images"] == {"5.15.0-69-generic": "nvcr.io/nvidia/driver:595.91.07-ubuntu22.04"}
    assert client.writes == []
    result, failed = go(monkeypatch, client, driver_version="550")
    assert failed and result["msg"].startswith("driver_version:")
    result, failed = go(monkeypatch, client, strategy="driver-toolkit")
    assert failed and result["msg"].startswith("strategy:")


def test_entitlement_strategy(monkeypatch):
    secret = {"kind": "Secret", "metadata": {"name": "etc-pki-entitlement", "namespace": NS}}
    client = cluster()
    client.put(secret)
    result, failed = go(monkeypatch, client, strategy="entitlement")
    assert not failed, result
    bc = client.objects("BuildConfig")[0]
    assert bc["spec"]["source"]["secrets"][0]["secret"]["name"] == "etc-pki-entitlement"
    args = dict((a["name"], a["value"]) for a in bc["spec"]["strategy"]["dockerStrategy"]["buildArgs"])
    assert args["BUILDER_IMAGE"] == "registry.access.redhat.com/ubi9/ubi:latest"
    assert bc["spec"]["strategy"]["dockerStrategy"]["from"]["name"].startswith("nvcr.io/nvidia/driver:550.90.07-")


class FakeTime(object):
    """kubernetes.core's Waiter clock without the real sleeping: each sleep advances the clock."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def fake_clock(monkeypatch, clock=None):
    """The wait's clock (kube.wait_backoff around kubernetes.core's Waiter) without real sleeping."""
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s import waiter

    from ansible_collections.gpuops.cluster.plugins.module_utils import kube

    clock = clock or FakeTime()
    monkeypatch.setattr(waiter, "time", clock)
    monkeypatch.setattr(kube, "time", clock)
    return clock


def test_build_stuck_on_missing_entitlement_mount_names_the_secret_not_the_timeout(monkeypatch):
    """A build pod Pending on FailedMount: the events say why; raising wait_timeout would not help."""

    fake_clock(monkeypatch)
    client = cluster(mount_fails=True)
    result, failed = go(
        monkeypatch,
        client,
        strategy="entitlement",
        base_image="registry.access.redhat.com/ubi9/ubi:latest",
        wait_timeout=60,
        wait_sleep=5,
    )
    assert failed, result
    assert result["param"] == "entitlement_secret"
    assert result["msg"].startswith("entitlement_secret:"), result["msg"]
    assert (
        'FailedMount: MountVolume.SetUp failed for volume "build-secret-0" : secret "etc-pki-entitlement" not found'
        in (result["msg"])
    )
    assert "-1-build" in result["msg"] and result["builds"][0]["phase"] == "Pending"


def test_build_stuck_without_events_blames_the_timeout(monkeypatch):

    fake_clock(monkeypatch)
    client = cluster(mount_fails=True)
    client.stuck_on_mount = lambda namespace, build: build.update(status={"phase": "Running"})
    result, failed = go(monkeypatch, client, wait_timeout=60, wait_sleep=5)
    assert failed and result["param"] == "wait_timeout", result
    assert "not finished after 60s" in result["msg"] and "Raise wait_timeout" in result["msg"]


def test_wait_timeout_defaults_to_1800(monkeypatch):

    clock = fake_clock(monkeypatch)
    client = cluster(mount_fails=True)
    client.stuck_on_mount = lambda namespace, build: build.update(status={"phase": "Running"})
    result, failed = go(monkeypatch, client, wait_sleep=30)
    assert failed and "not finished after 1800s" in result["msg"], result
    assert 1800 <= clock.now < 1800 + 30


SPEC_CASES = [
    (dict(strategy="magic"), "strategy"),
    (dict(kernel_versions=[K416], os_release={"BOGUS": "x"}), "os_release"),
    (dict(os_release={"ID": "rhcos"}), "os_release"),
    (dict(dockerfile="FROM x", git_uri="https://example.com/x.git"), "dockerfile"),
    (dict(git_ref="main"), "git_ref"),
    (dict(context_dir="rhel9"), "context_dir"),
    (dict(node_names="gpu-0"), None),  # a string is a one-element list
]


def test_argument_spec_rules_fail_before_any_read_or_write(monkeypatch):
    for args, param in SPEC_CASES:
        fails_before_writing(monkeypatch, args, param, reads=0)


def test_node_names_restrict_the_nodes(monkeypatch):
    client = cluster(nodes=[gpu_node("gpu-0"), gpu_node("gpu-1", kernel=K414, ostree=OST414)])
    result, failed = go(monkeypatch, client, node_names=["gpu-1"], check=True)
    assert not failed, result
    assert list(result["kernels"]) == [K414] and result["kernels"][K414]["nodes"] == ["gpu-1"]
    result, failed = go(monkeypatch, client, node_names=["gpu-9"])
    assert failed and result["msg"].startswith("node_names:") and "gpu-9" in result["msg"], result
    assert client.writes == []
    result, failed = go(monkeypatch, client, node_names=["worker-0"])
    assert failed and result["msg"].startswith("node_names:"), result
    assert client.writes == []
