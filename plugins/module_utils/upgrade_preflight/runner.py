# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""upgrade_preflight: read the ClusterVersion, the GPU nodes and their pools, the driver images; build the target
kernels' images when asked (driver_container_build's own code, so the build after the upgrade finds them with the
same inputs); judge (judge.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpuops.cluster.plugins.module_utils.args import checked_params, module_spec, wait_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError, Progress
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params as build_params
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.kernels import (
    buildconfig_name,
    image_tag,
    os_tag,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.module_type import (
    decide,
    node_gpu_product,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.render import managed_selector
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.runner import ensure
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.state import (
    build_phase,
    builds_for,
    imagestream_tags,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import list_gpu_nodes
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig, get_item, list_items
from ansible_collections.gpuops.cluster.plugins.module_utils.openshift_releases import lookup, minor_of, os_release
from ansible_collections.gpuops.cluster.plugins.module_utils.upgrade_preflight import judge
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import check_dns_label, check_dns_subdomain

RELEASE_KEYS = ("version", "rhcos_build", "kernel", "rhel")


def argument_spec():
    return module_spec(
        wait_spec(),
        targets=dict(type="list", elements="str"),
        releases=dict(
            type="list",
            elements="dict",
            options=dict((k, dict(type="str", required=True)) for k in RELEASE_KEYS),
        ),
        driver_toolkit_images=dict(type="dict", default={}),
        build=dict(type="bool", default=False),
        driver_version=dict(type="str", required=True),
        strategy=dict(
            type="str",
            default="driver-toolkit",
            choices=["driver-toolkit", "entitlement", "precompiled", "runtime-compiled"],
        ),
        kernel_module_type=dict(type="str", default="auto", choices=["auto", "open", "proprietary"]),
        namespace=dict(type="str", default="nvidia-gpu-driver"),
        name=dict(type="str", default="nvidia-gpu-driver"),
        registry=dict(type="str", default="nvcr.io/nvidia"),
        precompiled_image=dict(type="str", default="driver"),
        entitlement_secret=dict(type="str", default="etc-pki-entitlement", no_log=False),
        gpu_label=dict(type="str"),
    )


def check_params(params):
    check_dns_label(params["namespace"], "namespace", "namespace")
    check_dns_label(params["name"], "name", "ImageStream name")
    build_params.validate_driver_version(params["driver_version"], params["strategy"])
    for version in params.get("targets") or []:
        if not minor_of(version) or len(str(version).split(".")) != 3:
            raise GpuopsError(
                "{0!r} is not an OpenShift release: give x.y.z, e.g. 4.17.0".format(version), param="targets"
            )
    for row in params.get("releases") or []:
        build_params.validate_kernel_version(row["kernel"], "releases")
        if not minor_of(row["version"]) or not minor_of(row["rhel"]):
            raise GpuopsError(
                "{0!r}: version is an OpenShift release (4.17.0) and rhel a RHEL minor (9.4)".format(row),
                param="releases",
            )
    for version, image in (params.get("driver_toolkit_images") or {}).items():
        if not isinstance(image, str) or "/" not in image:
            raise GpuopsError(
                "{0}: {1!r} is not an image reference (the release's driver-toolkit image)".format(version, image),
                param="driver_toolkit_images",
            )
    if params.get("gpu_label"):
        check_dns_subdomain(params["gpu_label"].split("/")[-1], "gpu_label", "label")


class Reader(object):
    def __init__(self, client, svc):
        self.client, self.svc = client, svc

    def resource(self, kind, api_version):
        try:
            return self.svc.find_resource(kind, api_version, fail=False)
        except Exception:  # not served on this cluster
            return None

    def items(self, kind, api_version, namespace=None, label_selector=None):
        res = self.resource(kind, api_version)
        return (list_items(self.client, res, namespace, label_selector=label_selector), True) if res else ([], False)


BUILT = ("driver-toolkit", "entitlement")


def _tag_states(cfg, reader, kernels):
    """{kernel: state} from the ImageStream's tags and the newest Build of each kernel (the inputs not compared)."""
    stream_res = reader.resource("ImageStream", "image.openshift.io/v1")
    stream = get_item(reader.client, stream_res, cfg["name"], cfg["namespace"]) if stream_res else None
    tags = imagestream_tags(stream)
    builds, dummy = reader.items("Build", "build.openshift.io/v1", cfg["namespace"], managed_selector(cfg["name"]))
    out = {}
    for kernel, tag in kernels.items():
        state = {"tag": tag}
        mine = builds_for(builds, buildconfig_name(cfg["name"], kernel))  # newest first
        last = mine[0] if mine else None
        if tag in tags:
            state["ready"] = tags[tag]["image"]
        elif last and build_phase(last) in ("New", "Pending", "Running"):
            state["building"] = "{0} {1}".format(last["metadata"]["name"], build_phase(last))
        elif last and build_phase(last) in ("Failed", "Error", "Cancelled"):
            state["failed"] = "{0} {1}: {2}".format(
                last["metadata"]["name"],
                build_phase(last),
                dig(last, ("status", "message")) or dig(last, ("status", "reason")),
            )
        out[kernel] = state
    return out


def _dtk_image(cfg, reader, version, row):
    """The target release's Driver Toolkit image: given, or the openshift/driver-toolkit tag of its RHCOS build."""
    given = (cfg.get("driver_toolkit_images") or {}).get(version)
    if given or cfg["strategy"] != "driver-toolkit":
        return given
    res = reader.resource("ImageStream", "image.openshift.io/v1")
    stream = get_item(reader.client, res, "driver-toolkit", "openshift") if res else None
    for entry in dig(stream, ("status", "tags")) or []:
        if entry.get("tag") == row["rhcos_build"] and entry.get("items"):
            return entry["items"][0].get("dockerImageReference")
    for entry in dig(stream, ("spec", "tags")) or []:
        if entry.get("name") == row["rhcos_build"] and (entry.get("from") or {}).get("kind") == "DockerImage":
            return entry["from"].get("name")
    return None


def _build(cfg, client, svc, progress, row, module_type, dtk, check_mode):
    """driver_container_build's own plan (check mode) or build for one target kernel: the driver state's options,
    the target's kernel, os-release and Driver Toolkit image, so the inputs hash is the one it computes after the
    upgrade."""
    params = {
        "driver_version": cfg["driver_version"],
        "strategy": cfg["strategy"],
        "kernel_module_type": module_type,
        "namespace": cfg["namespace"],
        "name": cfg["name"],
        "kernel_versions": [row["kernel"]],
        "os_release": os_release(row),
        "base_image": dtk if cfg["strategy"] == "driver-toolkit" else None,
        "registry": cfg["registry"],
        "precompiled_image": cfg["precompiled_image"],
        "entitlement_secret": cfg["entitlement_secret"],
        "wait": True,
        "wait_timeout": cfg.get("wait_timeout") or 1800,
        "wait_sleep": cfg["wait_sleep"],
    }
    params, errors = checked_params(build_params.argument_spec(), params)
    if errors:
        raise GpuopsError("; ".join(errors))
    config = build_params.validate_params(params, check_mode=check_mode)
    return ensure(config, client, svc, progress)["kernels"][row["kernel"]]


def _planned_state(state, planned):
    """A tag's state, judged by driver_container_build's plan: current only when built from these inputs."""
    out = dict(state)
    if planned.get("action") == "current" or (planned.get("action") == "built" and planned.get("ready")):
        out["ready"] = planned.get("image_digest") or planned.get("image")
    elif planned.get("action") in ("built", "building"):
        out.pop("ready", None)
        out["building"] = "{0} ({1})".format(planned.get("build"), planned.get("reason"))
    else:
        out.pop("ready", None)
        out["why"] = planned.get("reason") or "missing"
    return out


def _image_states(cfg, module, client, svc, progress, found, module_type):
    """{kernel: state} of the target kernels' images, built when asked; [builds started]."""
    rows_of, kernels, states, dtks = found
    built = []
    for version, row in rows_of.items():
        if not row:
            continue
        kernel = row["kernel"]
        if cfg["strategy"] not in BUILT:
            states[kernel] = {"not_built": "driver_build_mode {0}: NVIDIA's image for the target is pulled, not built "
                              "here; not checked".format(cfg["strategy"])}  # fmt: skip
            continue
        if cfg["strategy"] == "driver-toolkit" and not dtks.get(version):
            if states[kernel].get("ready"):
                states[kernel]["unchecked"] = "the target's Driver Toolkit image is unknown"
            continue
        try:
            states[kernel] = _planned_state(
                states[kernel], _build(cfg, client, svc, progress, row, module_type, dtks.get(version), True)
            )
            if states[kernel].get("ready") or states[kernel].get("building") or not cfg["build"]:
                continue
            if module.check_mode:
                states[kernel]["would_build"] = True
                continue
            progress("building the driver image of {0} (kernel {1})".format(version, kernel))
            planned = _build(cfg, client, svc, progress, row, module_type, dtks.get(version), False)
            built.append(planned.get("build"))
            states[kernel] = _planned_state(states[kernel], planned)
        except GpuopsError as exc:
            states[kernel] = dict(states[kernel], failed=str(exc))
            states[kernel].pop("ready", None)
    return built


def _image_status(status, state):
    if status == judge.OK:
        return "ready"
    if state.get("not_built"):
        return "n/a"
    if state.get("ready"):
        return "present"
    return "building" if state.get("building") else "missing"


def _rows(cfg, targets, rows_of, cluster, by_pool, products, images):
    """One row per target and GPU pool: every check, and the verdict."""
    current, cluster_version, operators, counts, served = cluster
    states, kernels, dtks = images
    out_rows = []
    for version in targets:
        row = rows_of[version]
        cluster_checks = judge.release_checks(version, current, cluster_version, operators, counts, served)
        for pool, names in sorted(by_pool.items()):
            checks = list(cluster_checks)
            if row is None:
                checks.insert(
                    0,
                    (
                        "release",
                        judge.FAIL,
                        "kernel and RHCOS build of {0} unknown: give them in releases (driver_ocp_upgrade_releases)".format(
                            version
                        ),
                    ),
                )
                image_status = "unknown"
            else:
                status, words = judge.image_check(
                    states[row["kernel"]],
                    kernels[row["kernel"]],
                    bool(dtks.get(version)) or cfg["strategy"] != "driver-toolkit",
                )
                checks.insert(0, ("image", status, words))
                image_status = _image_status(status, states[row["kernel"]])
            checks.insert(1, ("driver",) + judge.driver_supports(cfg["driver_version"], [products[n] for n in names]))
            verdict, failed, warned = judge.verdict(checks)
            out_rows.append(
                {
                    "target": version,
                    "pool": pool,
                    "nodes": names,
                    "kernel": row["kernel"] if row else None,
                    "rhcos_build": row["rhcos_build"] if row else None,
                    "release_source": row["source"] if row else None,
                    "image": states[row["kernel"]].get("ready") if row else None,
                    "image_status": image_status,
                    "verdict": verdict,
                    "checks": checks,
                }
            )
    return out_rows


def _targets(cfg, cluster_version):
    if cfg.get("targets"):
        return list(cfg["targets"])
    offered, retrieved = judge.available(cluster_version)
    if offered:
        return sorted(offered, key=lambda v: tuple(int(x) if x.isdigit() else 0 for x in v.split(".")))
    why = judge.condition(cluster_version, "RetrievedUpdates") or {}
    raise GpuopsError(
        "the ClusterVersion lists no available update ({0}): give the target release(s), e.g. [4.17.0]".format(
            "RetrievedUpdates {0}: {1}".format(why.get("status"), why.get("message")) if why else "none retrieved"
        ),
        param="targets",
    )


def run(module, client, svc):
    cfg = dict(module.params)
    check_params(cfg)
    progress = Progress(module)
    t0 = time.monotonic()
    reader = Reader(client, svc)
    cv_res = reader.resource("ClusterVersion", "config.openshift.io/v1")
    cluster_version = get_item(client, cv_res, "version") if cv_res else None
    if cluster_version is None:
        raise GpuopsError(
            "this cluster has no ClusterVersion (config.openshift.io/v1): upgrade_preflight judges OpenShift "
            "upgrades; on Kubernetes, build for the new kernel with driver_container_build (kernel_versions)"
        )
    current = judge.current_version(cluster_version)
    targets = _targets(cfg, cluster_version)
    if get_item(client, reader.resource("Namespace", "v1"), cfg["namespace"]) is None:
        raise GpuopsError(
            "namespace {0} does not exist: converge the driver state (site.yml) first".format(cfg["namespace"]),
            param="namespace",
        )
    nodes = list_gpu_nodes(client, reader.resource("Node", "v1"), gpu_label=cfg.get("gpu_label"), param="gpu_label")
    if not nodes:
        raise GpuopsError("no GPU node (NFD's NVIDIA PCI label) in the cluster: nothing to judge", param="gpu_label")
    pools, dummy = reader.items("MachineConfigPool", "machineconfiguration.openshift.io/v1")
    operators, dummy = reader.items("ClusterOperator", "config.openshift.io/v1")
    counts, served = reader.items("APIRequestCount", "apiserver.openshift.io/v1")
    by_pool = judge.pools_of(nodes, pools)
    products = dict((n["metadata"]["name"], node_gpu_product(n)) for n in nodes)
    module_type, why_type = decide(
        cfg["kernel_module_type"], list(products.values()), cfg["driver_version"], "the GPU nodes"
    )

    rows_of, kernels = {}, {}
    for version in targets:
        row = lookup(version, cfg.get("releases"))
        rows_of[version] = row
        if row:
            osr = os_release(row)
            kernels[row["kernel"]] = image_tag(
                cfg["driver_version"], row["kernel"], os_tag(osr["ID"], osr["VERSION_ID"])
            )
    states = _tag_states(cfg, reader, kernels)
    dtks = dict((v, _dtk_image(cfg, reader, v, r)) for v, r in rows_of.items() if r)
    built = _image_states(cfg, module, client, svc, progress, (rows_of, kernels, states, dtks), module_type)
    out_rows = _rows(
        cfg,
        targets,
        rows_of,
        (current, cluster_version, operators, counts, served),
        by_pool,
        products,
        (states, kernels, dtks),
    )
    verdicts = dict(
        (v, judge.GO if all(r["verdict"] == judge.GO for r in out_rows if r["target"] == v) else judge.NO_GO)
        for v in targets
    )
    return {
        "changed": bool(built),
        "current": current,
        "targets": targets,
        "verdicts": verdicts,
        "go": all(v == judge.GO for v in verdicts.values()),
        "rows": out_rows,
        "table": judge.table(out_rows),
        "built": built,
        "module_type": {"type": module_type, "why": why_type},
        "seconds": round(time.monotonic() - t0, 3),
        "progress": progress.events,
    }
