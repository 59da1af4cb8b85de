# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import builds as b
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import object_contains

K416 = "5.14.0-427.22.1.el9_4.x86_64"
K414 = "5.14.0-284.73.1.el9_2.x86_64"
K419 = "5.14.0-570.35.1.el9_6.x86_64"

BASE_PARAMS = {
    "driver_version": "550.90.07",
    "strategy": "driver-toolkit",
    "namespace": "nvidia-gpu-operator",
    "name": "nvidia-gpu-driver",
    "kernel_versions": None,
    "os_release": None,
    "os_tag": None,
    "node_selector": {},
    "base_image": None,
    "driver_toolkit_namespace": "openshift",
    "driver_toolkit_imagestream": "driver-toolkit",
    "entitlement_secret": "etc-pki-entitlement",
    "dockerfile": None,
    "git_uri": None,
    "git_ref": None,
    "context_dir": None,
    "build_args": {},
    "registry": "nvcr.io/nvidia",
    "precompiled_image": "driver",
    "prune_stale": False,
    "wait": True,
    "wait_timeout": 1800,
    "wait_sleep": 5,
}


def params(**kw):
    p = copy.deepcopy(BASE_PARAMS)
    p.update(kw)
    return p


def node(
    name,
    kernel=K416,
    os_id="rhcos",
    version_id="4.16",
    ostree="416.94.202406172220-0",
    rhel="9.4",
    gpu=True,
    extra=None,
):
    labels = {}
    if gpu:
        labels["feature.node.kubernetes.io/pci-10de.present"] = "true"
    if kernel:
        labels[b.KERNEL_LABEL] = kernel
    for key, value in (("ID", os_id), ("VERSION_ID", version_id), ("OSTREE_VERSION", ostree), ("RHEL_VERSION", rhel)):
        if value:
            labels["feature.node.kubernetes.io/system-os_release." + key] = value
    labels.update(extra or {})
    return {"metadata": {"name": name, "labels": labels}, "status": {}}


# --- validation -----------------------------------------------------------


@pytest.mark.parametrize(
    "kernel",
    [
        K416,
        "4.15.0-1051-aws",
        "5.15.0-69-generic",
        "5.14.0-284.54.1.el9_2.aarch64_64k",
        "4.18.0-193.24.1.el8_2.dt1.x86_64",
        "6.1.0",
    ],
)
def test_kernel_versions_accepted(kernel):
    assert b.validate_kernel_version(kernel) == kernel


@pytest.mark.parametrize(
    "kernel",
    [
        "5.14",
        "5.14.0 427",
        "linux-5.14.0",
        "5.14.0-427.22.1.el9_4.x86_64;rm -rf /",
        "5.14.0-",
        "5.14.0-427+",
        "",
        "5.14.0-" + "a" * 80,
    ],
)
def test_kernel_versions_rejected_name_parameter(kernel):
    with pytest.raises(GpuopsError) as err:
        b.validate_kernel_version(kernel)
    assert err.value.param == "kernel_versions"
    assert "kernel_versions" in str(err.value) and "uname -r" in str(err.value)


@pytest.mark.parametrize("version", ["550.90.07", "535.104.05", "430.26", "470.57.02"])
def test_driver_version_full(version):
    assert b.validate_driver_version(version, "driver-toolkit") == version


def test_driver_branch_only_for_precompiled():
    assert b.validate_driver_version("550", "precompiled") == "550"
    with pytest.raises(GpuopsError) as err:
        b.validate_driver_version("550", "driver-toolkit")
    assert err.value.param == "driver_version" and "full version" in str(err.value)


@pytest.mark.parametrize("version", ["v550", "550-90", "550.90.07.1", "abc", "55", ""])
def test_driver_version_malformed(version):
    with pytest.raises(GpuopsError) as err:
        b.validate_driver_version(version, "precompiled")
    assert str(err.value).startswith("driver_version:")


@pytest.mark.parametrize(
    "override,param",
    [
        ({"driver_version": "55O.90.07"}, "driver_version"),
        ({"kernel_versions": ["5.14"]}, "kernel_versions"),
        ({"kernel_versions": []}, "kernel_versions"),
        ({"name": "Bad_Name"}, "name"),
        ({"name": "a" * 41}, "name"),
        ({"namespace": "-ns"}, "namespace"),
        ({"wait_timeout": 10}, "wait_timeout"),
        ({"wait_sleep": 0}, "wait_sleep"),
        ({"os_tag": "RHCOS 4.16"}, "os_tag"),
        ({"os_release": {"ID": "rhcos"}}, "os_release"),
        ({"kernel_versions": [K416], "os_release": {"BOGUS": "x"}}, "os_release"),
        ({"build_args": {"KERNEL_VERSION": "x"}}, "build_args"),
        ({"build_args": {"bad-name": "x"}}, "build_args"),
        ({"dockerfile": "FROM x", "git_uri": "https://example.com/x.git"}, "dockerfile"),
        ({"git_ref": "main"}, "git_uri"),
        ({"base_image": "not an image"}, "base_image"),
        ({"registry": "https://nvcr.io"}, "registry"),
        ({"strategy": "magic"}, "strategy"),
    ],
)
def test_validate_params_bad_inputs(override, param):
    with pytest.raises(GpuopsError) as err:
        b.validate_params(params(**override))
    assert err.value.param == param
    assert str(err.value).startswith(param + ":")


def test_validate_params_normalizes():
    cfg = b.validate_params(
        params(
            kernel_versions=[K416, K416, K414],
            os_release={"ID": "rhcos", "VERSION_ID": "4.16"},
            build_args={"EXTRA": 1},
        )
    )
    assert cfg["kernel_versions"] == [K416, K414]
    assert cfg["build_args"] == {"EXTRA": "1"}
    assert cfg["os_release"] == {"ID": "rhcos", "VERSION_ID": "4.16"}


def test_wait_timeout_not_checked_without_wait():
    cfg = b.validate_params(params(wait=False, wait_timeout=5))
    assert cfg["wait"] is False


# --- os tags and grouping ----------------------------------------------------


@pytest.mark.parametrize(
    "os_id,version,expected",
    [
        ("rhcos", "4.16", "rhcos4.16"),
        ("rhel", "9.6", "rhel9.6"),
        ("ubuntu", "22.04", "ubuntu22.04"),
        ("RHCOS", "4.6", "rhcos4.6"),
        (None, "4.16", None),
        ("rhcos", None, None),
    ],
)
def test_os_tag(os_id, version, expected):
    assert b.os_tag(os_id, version) == expected


def test_group_kernels_groups_nodes_and_picks_newest_ostree():
    nodes = [
        node("gpu-b", K416, ostree="416.94.202406172220-0"),
        node("gpu-a", K416, ostree="416.94.202407030122-0"),
        node("gpu-c", K419, os_id="rhel", version_id="9.6", ostree="9.6.20250925-0", rhel="9.6"),
    ]
    groups = b.group_kernels(nodes)
    assert sorted(groups) == [K416, K419]
    assert groups[K416]["nodes"] == ["gpu-a", "gpu-b"]
    assert groups[K416]["os_tag"] == "rhcos4.16"
    assert groups[K416]["ostree_version"] == "416.94.202407030122-0"
    assert groups[K416]["ostree_versions"] == ["416.94.202406172220-0", "416.94.202407030122-0"]
    assert groups[K419]["os_tag"] == "rhel9.6" and groups[K419]["rhel_version"] == "9.6"


def test_group_kernels_ostree_ordering_is_numeric():
    nodes = [node("a", ostree="416.94.202406172220-10"), node("b", ostree="416.94.202406172220-9")]
    assert b.group_kernels(nodes)[K416]["ostree_version"] == "416.94.202406172220-10"


def test_group_kernels_unlabelled_node_is_named():
    with pytest.raises(GpuopsError) as err:
        b.group_kernels([node("gpu-a"), node("gpu-new", kernel=None)])
    assert "gpu-new" in str(err.value) and b.KERNEL_LABEL in str(err.value)


def test_group_kernels_conflicting_os_release():
    nodes = [node("a", K416), node("b", K416, os_id="rhel", version_id="9.4")]
    with pytest.raises(GpuopsError) as err:
        b.group_kernels(nodes)
    assert err.value.param == "os_tag"
    assert b.group_kernels(nodes, os_tag_override="rhcos4.16")[K416]["os_tag"] == "rhcos4.16"


def test_kernels_from_params():
    k = b.kernels_from_params([K416], {"ID": "rhcos", "VERSION_ID": "4.16", "OSTREE_VERSION": "416.94.202406172220-0"})
    assert (
        k[K416]["os_tag"] == "rhcos4.16"
        and k[K416]["ostree_version"] == "416.94.202406172220-0"
        and k[K416]["nodes"] == []
    )


@pytest.mark.parametrize(
    "kernel,rhel,expected",
    [(K416, None, "9"), ("4.18.0-193.29.1.el8_2.x86_64", None, "8"), (K416, "8.6", "8"), ("6.1.0", None, None)],
)
def test_rhel_major(kernel, rhel, expected):
    assert b.rhel_major(kernel, rhel) == expected


# --- tags, names, hashes -----------------------------------------------------


def test_image_tag_and_precompiled_reference():
    assert b.image_tag("550.90.07", K416, "rhcos4.16") == "550.90.07-5.14.0-427.22.1.el9_4.x86_64-rhcos4.16"
    assert (
        b.precompiled_image("nvcr.io/nvidia", "driver", "525", "5.15.0-69-generic", "ubuntu22.04")
        == "nvcr.io/nvidia/driver:525-5.15.0-69-generic-ubuntu22.04"
    )
    # the OpenShift self-built precompiled example of openshift-releases.md section 3
    assert (
        b.precompiled_image(
            "quay.io/acme", "nvidia-gpu-driver", "550.54.14", "5.14.0-284.54.1.el9_2.aarch64_64k", "rhcos4.15"
        )
        == "quay.io/acme/nvidia-gpu-driver:550.54.14-5.14.0-284.54.1.el9_2.aarch64_64k-rhcos4.15"
    )


def test_buildconfig_name_is_dns_and_bounded():
    name = b.buildconfig_name("nvidia-gpu-driver", K416)
    assert name == "nvidia-gpu-driver-5.14.0-427.22.1.el9-4.x86-64"
    long_kernel = "5.14.0-427.22.1.el9_4.x86_64_64k.with.a.very.long.local.suffix"
    long_name = b.buildconfig_name("nvidia-gpu-driver", long_kernel)
    assert len(long_name) <= 52 and b.DNS_LABEL_RE.match(long_name.replace(".", "-"))
    assert long_name != b.buildconfig_name("nvidia-gpu-driver", long_kernel + "x")


def test_inputs_hash_is_stable_and_sensitive():
    a = {"kernel": K416, "driver_version": "550.90.07", "build_args": [{"name": "X", "value": "1"}]}
    assert b.inputs_hash(a) == b.inputs_hash(dict(reversed(list(a.items()))))
    changed = dict(a, driver_version="550.90.08")
    assert b.inputs_hash(a) != b.inputs_hash(changed)
    assert len(b.inputs_hash(a)) == 20


# --- rendering -----------------------------------------------------------------


def info416(**kw):
    info = {
        "nodes": ["gpu-a"],
        "os_tag": "rhcos4.16",
        "ostree_version": "416.94.202406172220-0",
        "ostree_versions": [],
        "rhel_version": "9.4",
    }
    info.update(kw)
    return info


def test_render_imagestream():
    cfg = b.validate_params(params())
    is_ = b.render_imagestream(cfg)
    assert is_["kind"] == "ImageStream" and is_["metadata"]["namespace"] == "nvidia-gpu-operator"
    assert is_["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuops.cluster"


def test_render_buildconfig_driver_toolkit():
    cfg = b.validate_params(params())
    bc = b.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    spec = bc["spec"]
    assert bc["apiVersion"] == "build.openshift.io/v1" and bc["kind"] == "BuildConfig"
    assert spec["triggers"] == []
    assert spec["strategy"]["dockerStrategy"]["from"] == {
        "kind": "ImageStreamTag",
        "namespace": "openshift",
        "name": "driver-toolkit:416.94.202406172220-0",
    }
    args = dict((a["name"], a["value"]) for a in spec["strategy"]["dockerStrategy"]["buildArgs"])
    assert args["KERNEL_VERSION"] == K416 and args["DRIVER_VERSION"] == "550.90.07" and args["OS_TAG"] == "rhcos4.16"
    assert spec["output"]["to"] == {
        "kind": "ImageStreamTag",
        "name": "nvidia-gpu-driver:550.90.07-{0}-rhcos4.16".format(K416),
    }
    assert spec["source"]["type"] == "Dockerfile" and "driver-toolkit-release.json" in spec["source"]["dockerfile"]
    assert "secrets" not in spec["source"]
    ann = bc["metadata"]["annotations"]
    assert ann[b.KERNEL_KEY] == K416 and len(ann[b.HASH_KEY]) == 20
    assert bc["metadata"]["labels"][b.KERNEL_KEY] == K416


def test_render_buildconfig_entitlement_and_git_and_base_image():
    cfg = b.validate_params(
        params(
            strategy="entitlement",
            git_uri="https://github.com/NVIDIA/gpu-driver-container.git",
            git_ref="main",
            context_dir="rhel9/precompiled",
        )
    )
    bc = b.render_buildconfig(cfg, K416, info416(), "entitlement")
    src = bc["spec"]["source"]
    assert (
        src["type"] == "Git"
        and src["git"] == {"uri": cfg["git_uri"], "ref": "main"}
        and src["contextDir"] == "rhel9/precompiled"
    )
    assert src["secrets"] == [{"secret": {"name": "etc-pki-entitlement"}, "destinationDir": "etc-pki-entitlement"}]
    assert bc["spec"]["strategy"]["dockerStrategy"]["from"] == {
        "kind": "DockerImage",
        "name": "registry.access.redhat.com/ubi9/ubi:latest",
    }
    cfg = b.validate_params(params(base_image="quay.io/acme/dtk:4.16"))
    bc = b.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    assert bc["spec"]["strategy"]["dockerStrategy"]["from"] == {"kind": "DockerImage", "name": "quay.io/acme/dtk:4.16"}


def test_hash_changes_with_every_input():
    cfg = b.validate_params(params())
    base = b.render_buildconfig(cfg, K416, info416(), "driver-toolkit")["metadata"]["annotations"][b.HASH_KEY]
    variants = [
        (params(driver_version="550.90.12"), info416()),
        (params(dockerfile="FROM x\n"), info416()),
        (params(build_args={"X": "1"}), info416()),
        (params(), info416(ostree_version="416.94.202407030122-0")),
        (params(base_image="quay.io/acme/dtk:1"), info416()),
    ]
    hashes = set()
    for p, info in variants:
        h = b.render_buildconfig(b.validate_params(p), K416, info, "driver-toolkit")["metadata"]["annotations"][
            b.HASH_KEY
        ]
        assert h != base
        hashes.add(h)
    assert len(hashes) == len(variants)
    # unchanged inputs -> same hash (and the same object: object_contains is the no-op test)
    again = b.render_buildconfig(b.validate_params(params()), K416, info416(), "driver-toolkit")
    assert again["metadata"]["annotations"][b.HASH_KEY] == base


def test_render_build_like_oc_start_build():
    cfg = b.validate_params(params())
    bc = b.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    bc["metadata"]["uid"] = "1234"
    build = b.render_build(bc, 3, "1234")
    meta = build["metadata"]
    assert build["kind"] == "Build" and meta["name"] == bc["metadata"]["name"] + "-3"
    assert meta["labels"][b.BC_NAME_KEY] == bc["metadata"]["name"] == meta["annotations"][b.BC_NAME_KEY]
    assert meta["labels"]["buildconfig"] == bc["metadata"]["name"]
    assert meta["annotations"][b.BUILD_NUMBER_KEY] == "3"
    assert meta["annotations"][b.HASH_KEY] == bc["metadata"]["annotations"][b.HASH_KEY]
    assert meta["ownerReferences"][0]["uid"] == "1234" and meta["ownerReferences"][0]["kind"] == "BuildConfig"
    assert build["spec"]["strategy"] == bc["spec"]["strategy"] and build["spec"]["output"] == bc["spec"]["output"]
    assert "triggers" not in build["spec"] and "runPolicy" not in build["spec"] and build["spec"]["triggeredBy"]


# --- build state / decision ----------------------------------------------------


def mk_build(n, phase, h="H", tag="T", bc="bc"):
    return {
        "metadata": {
            "name": "{0}-{1}".format(bc, n),
            "labels": {b.BC_NAME_KEY: bc},
            "annotations": {b.BUILD_NUMBER_KEY: str(n), b.HASH_KEY: h},
        },
        "spec": {"output": {"to": {"kind": "ImageStreamTag", "name": "is:" + tag}}},
        "status": {"phase": phase},
    }


def test_next_build_number():
    assert b.next_build_number({"status": {"lastVersion": 4}}, [mk_build(2, "Complete")]) == 5
    assert b.next_build_number(None, [mk_build(2, "Complete"), mk_build(7, "Failed")]) == 8
    assert b.next_build_number({}, []) == 1


def test_decide_missing_image_builds():
    assert b.decide(False, [], "H", "T")[0] == "build"


def test_decide_current_when_last_complete_has_hash():
    action, build, why = b.decide(True, [mk_build(1, "Complete")], "H", "T")
    assert action == "current" and build["metadata"]["name"] == "bc-1"


def test_decide_inputs_changed():
    action, _build, why = b.decide(True, [mk_build(1, "Complete", h="OLD")], "H", "T")
    assert action == "build" and "inputs changed" in why


def test_decide_waits_for_running_build_with_same_inputs():
    action, build, _why = b.decide(False, [mk_build(2, "Running"), mk_build(1, "Failed")], "H", "T")
    assert action == "wait" and build["metadata"]["name"] == "bc-2"


def test_decide_running_build_with_other_inputs_is_not_waited_for():
    assert b.decide(False, [mk_build(2, "Running", h="OLD")], "H", "T")[0] == "build"


def test_decide_retries_after_failure():
    builds = b.builds_for([mk_build(1, "Complete", h="OLD"), mk_build(2, "Failed")], "bc")
    action, _build, why = b.decide(True, builds, "H", "T")
    assert action == "build" and "retrying after bc-2 Failed" in why


def test_decide_ignores_builds_of_other_tags():
    # the newest Complete build wrote another tag (other driver version): this tag's own record counts
    builds = b.builds_for([mk_build(1, "Complete", h="H", tag="T"), mk_build(2, "Complete", h="OTHER", tag="U")], "bc")
    assert b.decide(True, builds, "H", "T")[0] == "current"


def test_decide_pruned_history():
    assert b.decide(True, [], "H", "T", bc_hash="H")[0] == "current"
    assert b.decide(True, [], "H", "T", bc_hash="OLD")[0] == "build"


def test_builds_for_sorts_newest_first():
    got = b.builds_for(
        [mk_build(1, "Complete"), mk_build(10, "Failed"), mk_build(2, "New"), mk_build(3, "New", bc="other")], "bc"
    )
    assert [x["metadata"]["name"] for x in got] == ["bc-10", "bc-2", "bc-1"]


# --- image stream / stale --------------------------------------------------------

IS = {
    "metadata": {"name": "nvidia-gpu-driver"},
    "status": {
        "dockerImageRepository": "image-registry.openshift-image-registry.svc:5000/nvidia-gpu-operator/nvidia-gpu-driver",
        "tags": [
            {
                "tag": "550.90.07-{0}-rhcos4.16".format(K416),
                "items": [
                    {
                        "dockerImageReference": "image-registry.openshift-image-registry.svc:5000/nvidia-gpu-operator/nvidia-gpu-driver@sha256:"
                        + "a" * 64
                    }
                ],
            },
            {
                "tag": "550.90.07-{0}-rhcos4.14".format(K414),
                "items": [{"dockerImageReference": "x@sha256:" + "b" * 64}],
            },
            {"tag": "empty", "items": []},
        ],
    },
}


def test_imagestream_tags_and_reference():
    tags = b.imagestream_tags(IS)
    assert set(tags) == {"550.90.07-{0}-rhcos4.16".format(K416), "550.90.07-{0}-rhcos4.14".format(K414)}
    cfg = b.validate_params(params())
    ref, digest = b.image_reference(IS, cfg, "550.90.07-{0}-rhcos4.16".format(K416))
    assert ref == IS["status"]["dockerImageRepository"] + ":550.90.07-{0}-rhcos4.16".format(K416)
    assert digest.endswith("a" * 64)
    ref, digest = b.image_reference(None, cfg, "t")
    assert (
        ref == "image-registry.openshift-image-registry.svc:5000/nvidia-gpu-operator/nvidia-gpu-driver:t"
        and digest is None
    )


def test_find_stale():
    cfg = b.validate_params(params())
    bc416 = b.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    bc414 = b.render_buildconfig(cfg, K414, info416(os_tag="rhcos4.14"), "driver-toolkit")
    stale = b.find_stale([bc416, bc414], {K416: {}}, IS)
    assert stale == [
        {"kernel": K414, "buildconfig": bc414["metadata"]["name"], "tags": ["550.90.07-{0}-rhcos4.14".format(K414)]}
    ]
    assert b.find_stale([bc416, bc414], {K416: {}, K414: {}}, IS) == []
    assert b.find_stale([{"metadata": {"name": "foreign"}}], {}, IS) == []


# --- failures / misc ---------------------------------------------------------------


def test_describe_build_failure_uses_status_and_snippet():
    build = mk_build(1, "Failed")
    build["metadata"]["annotations"][b.KERNEL_KEY] = K416
    build["status"].update(
        reason="DockerBuildFailed",
        message="Docker build strategy has failed.",
        logSnippet="line1\nerror: KERNEL_VERSION mismatch",
    )
    text = b.describe_build_failure(build)
    assert text.startswith(
        "build bc-1 (kernel {0}) Failed: DockerBuildFailed: Docker build strategy has failed.".format(K416)
    )
    assert "error: KERNEL_VERSION mismatch" in text
    build["status"].pop("logSnippet")
    assert "from pod" in b.describe_build_failure(build, "from pod")


def test_summarize_builds():
    assert (
        b.summarize_builds([mk_build(1, "Running"), mk_build(2, "Running"), mk_build(3, "Complete")])
        == "1 Complete, 2 Running"
    )


def test_resolve_strategy():
    assert b.resolve_strategy("auto", True) == "driver-toolkit"
    assert b.resolve_strategy("auto", False) == "precompiled"
    with pytest.raises(GpuopsError) as err:
        b.resolve_strategy("driver-toolkit", False)
    assert err.value.param == "strategy"


def test_check_kernel_infos_requires_ostree_for_dtk():
    cfg = b.validate_params(params())
    with pytest.raises(GpuopsError) as err:
        b.check_kernel_infos({K416: info416(ostree_version=None)}, "driver-toolkit", cfg)
    assert err.value.param == "base_image" and "gpu-a" in str(err.value)
    with pytest.raises(GpuopsError) as err:
        b.check_kernel_infos({K416: info416(os_tag=None)}, "precompiled", cfg)
    assert err.value.param == "os_tag"
    b.check_kernel_infos({K416: info416(ostree_version=None)}, "entitlement", cfg)


def test_run_precompiled():
    cfg = b.validate_params(params(strategy="precompiled", driver_version="550"))
    result = b.run_precompiled(cfg, {K416: info416()}, {"images": {}, "kernels": {}})
    assert result["images"] == {K416: "nvcr.io/nvidia/driver:550-{0}-rhcos4.16".format(K416)}
    assert result["kernels"][K416]["action"] == "precompiled"


def test_rendered_buildconfig_is_contained_in_server_copy():
    """The no-op test: the server adds defaults and status, the object still 'contains' ours."""
    cfg = b.validate_params(params())
    desired = b.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    server = copy.deepcopy(desired)
    server["metadata"].update(uid="u", resourceVersion="7", managedFields=[{}])
    server["spec"]["nodeSelector"] = None
    server["spec"]["strategy"]["dockerStrategy"]["pullSecret"] = {"name": "builder-dockercfg-x"}
    server["status"] = {"lastVersion": 1}
    assert object_contains(server, desired)
    server["spec"]["strategy"]["dockerStrategy"]["buildArgs"][0]["value"] = "535.104.05"
    assert not object_contains(server, desired)


def test_object_diff_and_merged():
    before = {
        "kind": "BuildConfig",
        "metadata": {"name": "x", "resourceVersion": "1", "annotations": {"a": "1"}},
        "spec": {"v": 1},
        "status": {"s": 1},
    }
    desired = {"kind": "BuildConfig", "metadata": {"name": "x", "annotations": {"a": "2"}}, "spec": {"v": 1}}
    after = b.merged(before, desired)
    assert "status" not in after and after["metadata"]["annotations"]["a"] == "2"
    d = b.object_diff("BuildConfig ns/x", before, after)
    assert d["before"] == {"metadata": {"annotations": {"a": "1"}}} and d["after"] == {
        "metadata": {"annotations": {"a": "2"}}
    }
    assert b.object_diff("BuildConfig ns/x", before, b.merged(before, {"spec": {"v": 1}})) is None
    created = b.object_diff("ImageStream ns/x", None, desired)
    assert created["before"] == {} and created["after"]["metadata"]["name"] == "x"
