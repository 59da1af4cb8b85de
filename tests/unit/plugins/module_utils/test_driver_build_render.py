# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params as params_
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import render
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import object_contains
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.driver_build_fixtures import (
    K416,
    info416,
    params,
)

# --- rendering -----------------------------------------------------------------


def test_render_imagestream():
    cfg = params_.validate_params(params())
    is_ = render.render_imagestream(cfg)
    assert is_["kind"] == "ImageStream" and is_["metadata"]["namespace"] == "nvidia-gpu-operator"
    assert is_["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuops.cluster"


def test_render_buildconfig_driver_toolkit():
    cfg = params_.validate_params(params())
    bc = render.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    spec = bc["spec"]
    assert bc["apiVersion"] == "build.openshift.io/v1" and bc["kind"] == "BuildConfig"
    assert spec["triggers"] == []
    # The last FROM (the image that runs) is NVIDIA's driver image: userspace, nvidia-driver, the .run.
    assert spec["strategy"]["dockerStrategy"]["from"] == {
        "kind": "DockerImage",
        "name": "nvcr.io/nvidia/driver:550.90.07-rhcos4.16",
    }
    args = dict((a["name"], a["value"]) for a in spec["strategy"]["dockerStrategy"]["buildArgs"])
    assert args["KERNEL_VERSION"] == K416 and args["DRIVER_VERSION"] == "550.90.07" and args["OS_TAG"] == "rhcos4.16"
    assert args["DRIVER_IMAGE"] == "nvcr.io/nvidia/driver:550.90.07-rhcos4.16"
    # The modules are compiled on the Driver Toolkit of the node's RHCOS build.
    assert args["DTK_IMAGE"] == "openshift/driver-toolkit:416.94.202406172220-0"
    assert args["KERNEL_MODULE_TYPE"] == "proprietary"
    assert spec["output"]["to"] == {
        "kind": "ImageStreamTag",
        "name": "nvidia-gpu-driver:550.90.07-{0}-rhcos4.16".format(K416),
    }
    dockerfile = spec["source"]["dockerfile"]
    assert spec["source"]["type"] == "Dockerfile" and "driver-toolkit-release.json" in dockerfile
    assert "secrets" not in spec["source"]
    ann = bc["metadata"]["annotations"]
    assert ann[render.KERNEL_KEY] == K416 and len(ann[render.HASH_KEY]) == 20
    assert bc["metadata"]["labels"][render.KERNEL_KEY] == K416


def test_render_buildconfig_entitlement_and_git_and_base_image():
    cfg = params_.validate_params(
        params(
            strategy="entitlement",
            git_uri="https://github.com/NVIDIA/gpu-driver-container.git",
            git_ref="main",
            context_dir="rhel9/precompiled",
        )
    )
    bc = render.render_buildconfig(cfg, K416, info416(), "entitlement")
    src = bc["spec"]["source"]
    assert (
        src["type"] == "Git"
        and src["git"] == {"uri": cfg.git_uri, "ref": "main"}
        and src["contextDir"] == "rhel9/precompiled"
    )
    assert src["secrets"] == [{"secret": {"name": "etc-pki-entitlement"}, "destinationDir": "etc-pki-entitlement"}]
    args = dict((a["name"], a["value"]) for a in bc["spec"]["strategy"]["dockerStrategy"]["buildArgs"])
    assert args["BUILDER_IMAGE"] == "registry.access.redhat.com/ubi9/ubi:latest"
    assert bc["spec"]["strategy"]["dockerStrategy"]["from"]["name"] == "nvcr.io/nvidia/driver:550.90.07-rhcos4.16"
    cfg = params_.validate_params(params(base_image="quay.io/acme/dtk:4.16"))
    bc = render.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    args = dict((a["name"], a["value"]) for a in bc["spec"]["strategy"]["dockerStrategy"]["buildArgs"])
    assert args["DTK_IMAGE"] == "quay.io/acme/dtk:4.16"


def test_entitlement_without_secret_relies_on_the_cluster_wide_entitlement():
    cfg = params_.validate_params(params(strategy="entitlement", entitlement_secret=""))
    assert cfg.entitlement_secret == ""
    bc = render.render_buildconfig(cfg, K416, info416(), "entitlement")
    assert "secrets" not in bc["spec"]["source"]
    args = dict((a["name"], a["value"]) for a in bc["spec"]["strategy"]["dockerStrategy"]["buildArgs"])
    assert args["BUILDER_IMAGE"] == "registry.access.redhat.com/ubi9/ubi:latest"


def test_hash_changes_with_every_input():
    cfg = params_.validate_params(params())
    base = render.render_buildconfig(cfg, K416, info416(), "driver-toolkit")["metadata"]["annotations"][render.HASH_KEY]
    variants = [
        (params(driver_version="550.90.12"), info416()),
        (params(dockerfile="FROM x\n"), info416()),
        (params(build_args={"X": "1"}), info416()),
        (params(), info416(ostree_version="416.94.202407030122-0")),
        (params(base_image="quay.io/acme/dtk:1"), info416()),
        (params(), dict(info416(), module_type="open")),
        (params(registry="mirror.example.com/nvidia"), info416()),
    ]
    hashes = set()
    for p, info in variants:
        h = render.render_buildconfig(params_.validate_params(p), K416, info, "driver-toolkit")["metadata"][
            "annotations"
        ][render.HASH_KEY]
        assert h != base
        hashes.add(h)
    assert len(hashes) == len(variants)
    # unchanged inputs -> same hash (and the same object: object_contains is the no-op test)
    again = render.render_buildconfig(params_.validate_params(params()), K416, info416(), "driver-toolkit")
    assert again["metadata"]["annotations"][render.HASH_KEY] == base


def test_render_build_like_oc_start_build():
    cfg = params_.validate_params(params())
    bc = render.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    bc["metadata"]["uid"] = "1234"
    build = render.render_build(bc, 3, "1234")
    meta = build["metadata"]
    assert build["kind"] == "Build" and meta["name"] == bc["metadata"]["name"] + "-3"
    assert meta["labels"][render.BC_NAME_KEY] == bc["metadata"]["name"] == meta["annotations"][render.BC_NAME_KEY]
    assert meta["labels"]["buildconfig"] == bc["metadata"]["name"]
    assert meta["annotations"][render.BUILD_NUMBER_KEY] == "3"
    assert meta["annotations"][render.HASH_KEY] == bc["metadata"]["annotations"][render.HASH_KEY]
    assert meta["ownerReferences"][0]["uid"] == "1234" and meta["ownerReferences"][0]["kind"] == "BuildConfig"
    assert build["spec"]["strategy"] == bc["spec"]["strategy"] and build["spec"]["output"] == bc["spec"]["output"]
    assert "triggers" not in build["spec"] and "runPolicy" not in build["spec"] and build["spec"]["triggeredBy"]


def test_rendered_buildconfig_is_contained_in_server_copy():
    """The no-op test: the server adds defaults and status, the object still 'contains' ours."""
    cfg = params_.validate_params(params())
    desired = render.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    server = copy.deepcopy(desired)
    server["metadata"].update(uid="u", resourceVersion="7", managedFields=[{}])
    server["spec"]["nodeSelector"] = None
    server["spec"]["strategy"]["dockerStrategy"]["pullSecret"] = {"name": "builder-dockercfg-x"}
    server["status"] = {"lastVersion": 1}
    assert object_contains(server, desired)
    server["spec"]["strategy"]["dockerStrategy"]["buildArgs"][0]["value"] = "535.104.05"
    assert not object_contains(server, desired)


def test_default_dockerfiles_build_from_the_driver_image_offline():
    """Both default Dockerfiles end FROM the driver image with the modules of one kernel, download nothing,
    pass the module type and never test-load modules inside the build (D9, D10, D11 of the real-node review)."""
    for dockerfile in (render.DTK_DOCKERFILE, render.ENTITLEMENT_DOCKERFILE):
        froms = [line.split()[1] for line in dockerfile.splitlines() if line.startswith("FROM ")]
        assert froms[0] == "${DRIVER_IMAGE}" and froms[-1] == "${DRIVER_IMAGE}"
        assert "COPY --from=driver /drivers/NVIDIA-Linux-${TARGET_ARCH}-${DRIVER_VERSION}.run" in dockerfile
        assert "COPY --from=modules /opt/modules/ /lib/modules/${KERNEL_VERSION}/" in dockerfile
        assert '--kernel-module-type="${KERNEL_MODULE_TYPE}"' in dockerfile and "--skip-module-load" in dockerfile
        assert "curl" not in dockerfile and "wget" not in dockerfile and "download.nvidia.com" not in dockerfile
