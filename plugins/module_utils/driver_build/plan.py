# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: read the cluster and decide what to do, before any write.

The strategy, the kernels of the selected GPU nodes, the prerequisites of the
strategy (namespace, Driver Toolkit tags, entitlement secret) and, per kernel,
whether the image is current, a running build is to be waited for or a build
is to be started. Everything here only reads.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.api import resource
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.kernels import (
    group_kernels,
    image_tag,
    kernels_from_params,
    precompiled_image,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.render import (
    HASH_KEY,
    driver_image,
    managed_selector,
    render_buildconfig,
    render_imagestream,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.state import (
    builds_for,
    decide,
    find_stale,
    imagestream_tags,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import (
    describe_selection,
    list_gpu_nodes,
    missing_names,
    select_gpu_nodes,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    dig,
    get_item,
    label_selector,
    list_items,
    object_contains,
)


def resolve_strategy(requested, is_openshift):
    if requested == "auto":
        # Plain Kubernetes: NVIDIA's driver image compiles the modules on the node at start, for any kernel of
        # its OS (the GPU Operator's default; precompiled images exist only for some Ubuntu kernels and branches).
        return "driver-toolkit" if is_openshift else "runtime-compiled"
    if requested in ("driver-toolkit", "entitlement") and not is_openshift:
        raise GpuopsError(
            "{0} builds need the OpenShift build.openshift.io and image.openshift.io APIs, which this cluster "
            "does not serve; use strategy: runtime-compiled (or precompiled) on plain Kubernetes.".format(requested),
            param="strategy",
        )
    return requested


def read_kernels(cfg, client, svc):
    """{kernel: info} from the selected GPU nodes (or from the parameters)."""
    if cfg.kernel_versions:
        return kernels_from_params(cfg.kernel_versions, cfg.os_release, cfg.os_tag)
    selector = cfg.node_selector
    if not selector and not cfg.node_names:
        # the GPU nodes only (three small lists), not every node of the cluster
        nodes = list_gpu_nodes(client, resource(svc, "Node", "v1"))
    else:
        nodes = list_items(
            client,
            resource(svc, "Node", "v1"),
            label_selector=label_selector(selector) if selector else None,
            param="node_selector",
        )
    unknown = missing_names(nodes, cfg.node_names)
    if unknown:
        raise GpuopsError(
            "no node named {0} among the {1} ({2} nodes looked at). Fix node_names (or node_selector).".format(
                ", ".join(unknown), describe_selection(selector), len(nodes)
            ),
            param="node_names",
        )
    gpu_nodes = select_gpu_nodes(nodes, selector, cfg.node_names)
    if not gpu_nodes:
        raise GpuopsError(
            "no node matches ({0}; {1} nodes in the cluster looked at). Check the labels (is Node Feature "
            "Discovery deployed? see nfd_labels), fix node_selector, or give kernel_versions.".format(
                describe_selection(selector, cfg.node_names), len(nodes)
            ),
            param="node_names" if cfg.node_names and not selector else "node_selector",
        )
    return group_kernels(gpu_nodes, cfg.os_tag)


def _toolkit_tags(imagestream):
    available = set(t.get("name") for t in dig(imagestream, ("spec", "tags")) or [])
    available.update(t.get("tag") for t in dig(imagestream, ("status", "tags")) or [])
    available.discard("latest")
    available.discard(None)
    return available


def _toolkit_pullspec(imagestream, tag):
    """The image a Driver Toolkit tag points at (status item, else the spec's from), as KMM's DTK_AUTO."""
    for entry in dig(imagestream, ("status", "tags")) or []:
        if entry.get("tag") == tag and entry.get("items"):
            return entry["items"][0].get("dockerImageReference")
    for entry in dig(imagestream, ("spec", "tags")) or []:
        if entry.get("name") == tag and (entry.get("from") or {}).get("kind") == "DockerImage":
            return entry["from"].get("name")
    return None


def check_driver_toolkit(cfg, client, svc, kernels):
    """The Driver Toolkit ImageStream has a tag for the RHCOS build of every kernel."""
    where = "{0}/{1}".format(cfg.driver_toolkit_namespace, cfg.driver_toolkit_imagestream)
    dtk = get_item(
        client,
        resource(svc, "ImageStream", "image.openshift.io/v1"),
        cfg.driver_toolkit_imagestream,
        cfg.driver_toolkit_namespace,
    )
    if dtk is None:
        raise GpuopsError(
            "the ImageStream {0} does not exist: this cluster has no Driver Toolkit (OpenShift < 4.6.30 / "
            "4.7.11). Use strategy: entitlement or give base_image.".format(where),
            param="strategy",
        )
    available = _toolkit_tags(dtk)
    for kernel, info in sorted(kernels.items()):
        info["dtk_image"] = _toolkit_pullspec(dtk, info["ostree_version"])
        if info["ostree_version"] not in available:
            raise GpuopsError(
                "the ImageStream {0} has no tag {1} (RHCOS build of {2}; tags: {3}). The imagestream is "
                "not updated yet (BZ#2014071 on < 4.8.21 / 4.9.5: `oc delete -n openshift is/driver-toolkit`) "
                "or the nodes run a release without a toolkit; give base_image or use strategy: entitlement.".format(
                    where,
                    info["ostree_version"],
                    ", ".join(info["nodes"]) or kernel,
                    ", ".join(sorted(available)) or "none",
                ),
                param="base_image",
            )


def check_entitlement_secret(cfg, client, svc):
    if get_item(client, resource(svc, "Secret", "v1"), cfg.entitlement_secret, cfg.namespace) is None:
        raise GpuopsError(
            "secret {0}/{1} with the entitlement certificate does not exist. Create it from the "
            "cluster-wide entitlement (entitlement role, `oc create secret generic etc-pki-entitlement "
            "--from-file ...`) or set entitlement_secret.".format(cfg.namespace, cfg.entitlement_secret),
            param="entitlement_secret",
        )


def check_build_prerequisites(cfg, client, svc, kernels, strategy):
    """Namespace, driver-toolkit tags, entitlement secret: all read before any write."""
    if get_item(client, resource(svc, "Namespace", "v1"), cfg.namespace) is None:
        raise GpuopsError(
            "the namespace {0} does not exist; create it first (the driver role does) or set namespace.".format(
                cfg.namespace
            ),
            param="namespace",
        )
    if cfg.base_image:
        return
    if strategy == "driver-toolkit":
        check_driver_toolkit(cfg, client, svc, kernels)
    if strategy == "entitlement" and cfg.entitlement_secret:
        check_entitlement_secret(cfg, client, svc)


def plan_runtime_compiled(cfg, kernels, result):
    """NVIDIA's driver image per OS: nothing to build here, the driver pod compiles for its node's kernel."""
    for kernel, info in sorted(kernels.items()):
        ref = driver_image(cfg, info)
        result["images"][kernel] = ref
        result["kernels"][kernel] = dict(info, image=ref, tag=ref.rsplit(":", 1)[1], action="runtime-compiled")
    return result


def plan_precompiled(cfg, kernels, result):
    """Precompiled images: nothing to build, the reference per kernel is computed."""
    for kernel, info in sorted(kernels.items()):
        ref = precompiled_image(cfg.registry, cfg.precompiled_image, cfg.driver_version, kernel, info["os_tag"])
        result["images"][kernel] = ref
        result["kernels"][kernel] = dict(info, image=ref, tag=ref.rsplit(":", 1)[1], action="precompiled")
    return result


def _plan_kernel(cfg, client, apis, existing_bcs, builds, tags, kernel, info, strategy):
    desired = render_buildconfig(cfg, kernel, info, strategy)
    name = desired["metadata"]["name"]
    existing = existing_bcs.get(name)
    if existing is None:
        # An unlabelled BuildConfig of the same name: adopt it (apply will label it).
        existing = get_item(client, apis["bc"], name, cfg.namespace)
    tag = image_tag(cfg.driver_version, kernel, info["os_tag"])
    desired_hash = desired["metadata"]["annotations"][HASH_KEY]
    bc_hash = dig(existing, ("metadata", "annotations", HASH_KEY))
    action, build, why = decide(tag in tags, builds_for(builds, name), desired_hash, tag, bc_hash)
    return {
        "kernel": kernel,
        "info": info,
        "desired": desired,
        "existing": existing,
        "tag": tag,
        "hash": desired_hash,
        "action": action,
        "build": build,
        "why": why,
        "needs_apply": existing is None or not object_contains(existing, desired),
    }


def plan_openshift(cfg, client, svc, kernels, strategy):
    """Read the current objects and decide, per kernel, what to do. Read-only."""
    apis = {
        "is": resource(svc, "ImageStream", "image.openshift.io/v1"),
        "bc": resource(svc, "BuildConfig", "build.openshift.io/v1"),
        "build": resource(svc, "Build", "build.openshift.io/v1"),
    }
    selector = managed_selector(cfg.name)
    imagestream = get_item(client, apis["is"], cfg.name, cfg.namespace)
    bcs = list_items(client, apis["bc"], cfg.namespace, label_selector=selector)
    builds = list_items(client, apis["build"], cfg.namespace, label_selector=selector)
    tags = imagestream_tags(imagestream)
    desired_is = render_imagestream(cfg)
    existing_bcs = dict((bc["metadata"]["name"], bc) for bc in bcs)
    return {
        "imagestream": imagestream,
        "desired_is": desired_is,
        "is_needs_apply": imagestream is None or not object_contains(imagestream, desired_is),
        "buildconfigs": [
            _plan_kernel(cfg, client, apis, existing_bcs, builds, tags, kernel, info, strategy)
            for kernel, info in sorted(kernels.items())
        ],
        "stale": find_stale(bcs, kernels, imagestream),
        "apis": apis,
        "builds": builds,
    }
