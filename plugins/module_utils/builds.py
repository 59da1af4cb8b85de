# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Driver images per kernel: the logic behind gpuops.cluster.driver_container_build.

The Special Resource Operator pattern (one driver container image built against
the exact kernel of the nodes, one image tag per kernel) as plain functions:

* reading kernels / OS releases from NFD node labels and grouping nodes by kernel,
* image tag computation (build output tags and upstream precompiled tags),
* the inputs hash that decides when an image must be rebuilt,
* rendering of ImageStream, BuildConfig and Build objects,
* the per-kernel decision (current / wait for a running build / start a build),
* stale detection (managed build objects for kernels no node runs any more).

``run()`` at the end is the only part that talks to the API server.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json
import re
import time

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    GpuopsError,
    Progress,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import (
    describe_selection as describe_node_selection,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_nodes import (
    select_gpu_nodes,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import (
    label_selector,
    object_contains,
    strip_server_fields,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.nfd.facts import node_facts

try:
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import diff_objects
except ImportError:  # pragma: no cover - the module reports the missing collection
    diff_objects = None

try:
    from kubernetes.dynamic.exceptions import ConflictError, NotFoundError
except ImportError:  # pragma: no cover - AnsibleK8SModule reports the missing library

    class ConflictError(Exception):
        pass

    class NotFoundError(Exception):
        pass


NFD = "feature.node.kubernetes.io/"
KERNEL_LABEL = NFD + "kernel-version.full"
OS_ID_LABEL = NFD + "system-os_release.ID"
OS_VERSION_ID_LABEL = NFD + "system-os_release.VERSION_ID"
OSTREE_LABEL = NFD + "system-os_release.OSTREE_VERSION"
RHEL_VERSION_LABEL = NFD + "system-os_release.RHEL_VERSION"
OPENSHIFT_VERSION_LABEL = NFD + "system-os_release.OPENSHIFT_VERSION"

PREFIX = "gpuops.cluster/"
KERNEL_KEY = PREFIX + "kernel-version"
DRIVER_KEY = PREFIX + "driver-version"
OS_TAG_KEY = PREFIX + "os-tag"
HASH_KEY = PREFIX + "inputs-hash"
IMAGE_NAME_KEY = PREFIX + "image-name"
BC_NAME_KEY = "openshift.io/build-config.name"
BUILD_NUMBER_KEY = "openshift.io/build.number"
START_POLICY_KEY = "openshift.io/build.start-policy"
BUILD_POD_KEY = "openshift.io/build.pod-name"

STRATEGIES = ("auto", "driver-toolkit", "entitlement", "precompiled")
ACTIVE_PHASES = ("New", "Pending", "Running")
FAILED_PHASES = ("Failed", "Error", "Cancelled")
DEFAULT_INTERNAL_REGISTRY = "image-registry.openshift-image-registry.svc:5000"
RESERVED_BUILD_ARGS = ("DRIVER_VERSION", "KERNEL_VERSION")
MIN_WAIT_TIMEOUT = 60

# uname -r: 5.14.0-427.22.1.el9_4.x86_64, 4.15.0-1051-aws, 5.15.0-69-generic,
# 5.14.0-284.54.1.el9_2.aarch64_64k, 4.18.0-193.24.1.el8_2.dt1.x86_64. It becomes
# part of an image tag ([A-Za-z0-9_.-], at most 128 characters), so nothing else.
KERNEL_RE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9]+([._-][A-Za-z0-9]+)*)?$")
# 550.90.07 / 535.104.05 / 430.26 (full versions) or a branch such as 550.
DRIVER_FULL_RE = re.compile(r"^[0-9]{3,4}\.[0-9]{1,3}(\.[0-9]{1,3})?$")
DRIVER_BRANCH_RE = re.compile(r"^[0-9]{3,4}$")
OS_TAG_RE = re.compile(r"^[a-z]+[0-9]+(\.[0-9]+)*$")
DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
TAG_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
IMAGE_REF_RE = re.compile(
    r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$"
)
REPO_RE = re.compile(r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")
BUILD_ARG_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# ---------------------------------------------------------------------------
# Input validation (pure)
# ---------------------------------------------------------------------------


def validate_kernel_version(kernel, param="kernel_versions"):
    kernel = to_text(kernel).strip()
    if len(kernel) > 64 or not KERNEL_RE.match(kernel):
        raise GpuopsError(
            "{0!r} is not a kernel version as `uname -r` / the NFD label {1} prints it "
            "(expected e.g. 5.14.0-427.22.1.el9_4.x86_64 or 5.15.0-69-generic). "
            "Fix the value or leave {2} unset to read kernels from the nodes.".format(kernel, KERNEL_LABEL, param),
            param=param,
        )
    return kernel


def validate_driver_version(version, strategy):
    version = to_text(version).strip()
    if DRIVER_FULL_RE.match(version):
        return version
    if DRIVER_BRANCH_RE.match(version):
        if strategy != "precompiled":
            raise GpuopsError(
                "{0!r} is a driver branch; a {1} build compiles one exact driver release. "
                "Give the full version (e.g. 550.90.07), or use strategy: precompiled "
                "for branch-tagged precompiled images.".format(version, strategy),
                param="driver_version",
            )
        return version
    raise GpuopsError(
        "{0!r} is not an NVIDIA driver version. Give a full version such as 550.90.07 "
        "or, with strategy: precompiled, a branch such as 550.".format(version),
        param="driver_version",
    )


def validate_dns_label(value, param, max_len=63):
    value = to_text(value)
    if len(value) > max_len or not DNS_LABEL_RE.match(value):
        raise GpuopsError(
            "{0!r} is not a valid name: use lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, at most {1} characters.".format(value, max_len),
            param=param,
        )
    return value


def validate_os_tag(value, param="os_tag"):
    if value is None:
        return None
    value = to_text(value)
    if not OS_TAG_RE.match(value):
        raise GpuopsError(
            "{0!r} is not an OS tag: expected <os id><version> such as rhcos4.16, rhel9.6 "
            "or ubuntu22.04.".format(value),
            param=param,
        )
    return value


def validate_params(params):
    """Check and normalise every parameter before anything is read or written.

    Returns a plain dict (the configuration the rest of the code uses).
    """
    cfg = {}
    strategy = params.get("strategy") or "auto"
    if strategy not in STRATEGIES:
        raise GpuopsError("must be one of {0}".format(", ".join(STRATEGIES)), param="strategy")
    cfg["strategy"] = strategy
    # A branch is only valid for precompiled images; "auto" is decided later, so
    # accept a branch here and re-check once the strategy is resolved.
    cfg["driver_version"] = validate_driver_version(
        params.get("driver_version") or "", "precompiled" if strategy in ("auto", "precompiled") else strategy
    )
    cfg["namespace"] = validate_dns_label(params.get("namespace") or "", "namespace")
    cfg["name"] = validate_dns_label(params.get("name") or "", "name", max_len=40)
    cfg["kernel_versions"] = None
    if params.get("kernel_versions"):
        seen = []
        for kernel in params["kernel_versions"]:
            kernel = validate_kernel_version(kernel)
            if kernel not in seen:
                seen.append(kernel)
        cfg["kernel_versions"] = seen
    elif params.get("kernel_versions") is not None:
        raise GpuopsError("is an empty list; leave it unset to read kernels from the nodes", param="kernel_versions")
    os_release = params.get("os_release") or {}
    unknown = sorted(set(os_release) - set(OS_RELEASE_KEYS))
    if unknown:
        raise GpuopsError(
            "unknown key(s) {0}; use {1}".format(", ".join(unknown), ", ".join(OS_RELEASE_KEYS)), param="os_release"
        )
    if os_release and not cfg["kernel_versions"]:
        raise GpuopsError(
            "only applies to kernel_versions given as a parameter; node kernels use the nodes' own "
            "os-release labels. Remove os_release or give kernel_versions.",
            param="os_release",
        )
    cfg["os_release"] = dict((k, to_text(v)) for k, v in os_release.items() if v is not None)
    cfg["os_tag"] = validate_os_tag(params.get("os_tag"))
    cfg["node_selector"] = dict((to_text(k), to_text(v)) for k, v in (params.get("node_selector") or {}).items())
    cfg["base_image"] = params.get("base_image")
    if cfg["base_image"] and not IMAGE_REF_RE.match(cfg["base_image"]):
        raise GpuopsError(
            "{0!r} is not an image reference (registry/repository[:tag][@sha256:digest]).".format(cfg["base_image"]),
            param="base_image",
        )
    cfg["driver_toolkit_namespace"] = validate_dns_label(
        params.get("driver_toolkit_namespace") or "", "driver_toolkit_namespace"
    )
    cfg["driver_toolkit_imagestream"] = validate_dns_label(
        params.get("driver_toolkit_imagestream") or "", "driver_toolkit_imagestream"
    )
    cfg["entitlement_secret"] = validate_dns_label(params.get("entitlement_secret") or "", "entitlement_secret", 253)
    cfg["dockerfile"] = params.get("dockerfile")
    cfg["git_uri"] = params.get("git_uri")
    cfg["git_ref"] = params.get("git_ref")
    cfg["context_dir"] = params.get("context_dir")
    if cfg["dockerfile"] and cfg["git_uri"]:
        raise GpuopsError("give either dockerfile or git_uri, not both", param="dockerfile")
    if (cfg["git_ref"] or cfg["context_dir"]) and not cfg["git_uri"]:
        raise GpuopsError("git_ref and context_dir need git_uri", param="git_uri")
    build_args = params.get("build_args") or {}
    for key in build_args:
        if not BUILD_ARG_RE.match(to_text(key)):
            raise GpuopsError("{0!r} is not a valid build argument name".format(key), param="build_args")
        if key in RESERVED_BUILD_ARGS:
            raise GpuopsError(
                "{0} is set by the module from driver_version / the node kernel; remove it".format(key),
                param="build_args",
            )
    cfg["build_args"] = dict((to_text(k), to_text(v)) for k, v in build_args.items())
    cfg["registry"] = to_text(params.get("registry") or "").rstrip("/")
    if not REPO_RE.match(cfg["registry"]):
        raise GpuopsError(
            "{0!r} is not a registry/repository path such as nvcr.io/nvidia".format(cfg["registry"]), param="registry"
        )
    cfg["precompiled_image"] = to_text(params.get("precompiled_image") or "")
    if not REPO_RE.match(cfg["precompiled_image"]):
        raise GpuopsError(
            "{0!r} is not an image name such as driver".format(cfg["precompiled_image"]), param="precompiled_image"
        )
    cfg["prune_stale"] = bool(params.get("prune_stale"))
    cfg["wait"] = params.get("wait", True)
    cfg["wait_timeout"] = int(params.get("wait_timeout") or 0)
    cfg["wait_sleep"] = int(params.get("wait_sleep") or 0)
    if cfg["wait"] and cfg["wait_timeout"] < MIN_WAIT_TIMEOUT:
        raise GpuopsError(
            "{0}s is too short for a driver build (it compiles kernel modules); give at least {1} "
            "or wait: false".format(cfg["wait_timeout"], MIN_WAIT_TIMEOUT),
            param="wait_timeout",
        )
    if cfg["wait_sleep"] < 1 or (cfg["wait"] and cfg["wait_sleep"] > cfg["wait_timeout"]):
        raise GpuopsError("must be between 1 and wait_timeout ({0})".format(cfg["wait_timeout"]), param="wait_sleep")
    return cfg


OS_RELEASE_KEYS = ("ID", "VERSION_ID", "OSTREE_VERSION", "RHEL_VERSION", "OPENSHIFT_VERSION")


# ---------------------------------------------------------------------------
# Kernels and OS releases from nodes (pure)
# ---------------------------------------------------------------------------


def os_tag(os_id, version_id):
    """The driver image OS suffix: ID + VERSION_ID of os-release.

    rhcos + 4.16 -> rhcos4.16 (OpenShift <= 4.18), rhel + 9.6 -> rhel9.6 (4.19+,
    where VERSION_ID became the RHEL version), ubuntu + 22.04 -> ubuntu22.04.
    """
    if not os_id or not version_id:
        return None
    return "{0}{1}".format(to_text(os_id).lower(), to_text(version_id))


def _version_key(value):
    return [int(p) if p.isdigit() else p for p in re.split(r"[.-]", to_text(value))]


def group_kernels(nodes, os_tag_override=None):
    """{kernel: {nodes, os_tag, ostree_version, ostree_versions, rhel_version, os_id, version_id}}.

    ``nodes`` are API node dicts (already selected as GPU nodes). Raises
    GpuopsError naming the nodes whose labels are missing or inconsistent.
    """
    groups = {}
    unlabelled = []
    for node in nodes:
        facts = node_facts(node)
        kernel = facts["kernel_version"]
        if not kernel:
            unlabelled.append(facts["name"])
            continue
        kernel = validate_kernel_version(kernel, param="node_selector")
        rel = facts["os_release"]
        group = groups.setdefault(
            kernel,
            {
                "nodes": [],
                "os_tags": set(),
                "ostree_versions": set(),
                "rhel_versions": set(),
                "os_ids": set(),
                "version_ids": set(),
            },
        )
        group["nodes"].append(facts["name"])
        group["os_tags"].add(os_tag_override or os_tag(rel.get("ID"), rel.get("VERSION_ID")))
        for key, field in (
            ("ostree_versions", "OSTREE_VERSION"),
            ("rhel_versions", "RHEL_VERSION"),
            ("os_ids", "ID"),
            ("version_ids", "VERSION_ID"),
        ):
            if rel.get(field):
                group[key].add(rel[field])
    if unlabelled:
        raise GpuopsError(
            "GPU node(s) {0} carry no {1} label: Node Feature Discovery has not labelled them yet "
            "(wait for NFD, see nfd_labels) or give kernel_versions explicitly.".format(
                ", ".join(sorted(unlabelled)), KERNEL_LABEL
            ),
            param="node_selector",
        )
    result = {}
    for kernel, group in sorted(groups.items()):
        tags = sorted(t for t in group["os_tags"] if t)
        if len(group["os_tags"]) > 1:
            raise GpuopsError(
                "nodes running kernel {0} report different OS releases ({1}); set os_tag to choose the image "
                "suffix.".format(kernel, ", ".join(sorted(to_text(t) for t in group["os_tags"]))),
                param="os_tag",
            )
        ostrees = sorted(group["ostree_versions"], key=_version_key)
        result[kernel] = {
            "nodes": sorted(group["nodes"]),
            "os_tag": tags[0] if tags else None,
            "ostree_versions": ostrees,
            # Several RHCOS builds can ship the same kernel; the newest one's
            # driver toolkit is used (its kernel is the same by definition).
            "ostree_version": ostrees[-1] if ostrees else None,
            "rhel_version": sorted(group["rhel_versions"], key=_version_key)[-1] if group["rhel_versions"] else None,
        }
    return result


def kernels_from_params(kernel_versions, os_release, os_tag_override=None):
    """The same shape as group_kernels() for kernels given as a parameter."""
    tag = os_tag_override or os_tag(os_release.get("ID"), os_release.get("VERSION_ID"))
    return dict(
        (
            kernel,
            {
                "nodes": [],
                "os_tag": tag,
                "ostree_versions": [os_release["OSTREE_VERSION"]] if os_release.get("OSTREE_VERSION") else [],
                "ostree_version": os_release.get("OSTREE_VERSION"),
                "rhel_version": os_release.get("RHEL_VERSION"),
            },
        )
        for kernel in kernel_versions
    )


def rhel_major(kernel, rhel_version=None):
    """8 or 9 (UBI base for entitlement builds): from RHEL_VERSION or the kernel's elN."""
    if rhel_version:
        return to_text(rhel_version).split(".")[0]
    match = re.search(r"\.el([0-9]+)", kernel)
    return match.group(1) if match else None


# ---------------------------------------------------------------------------
# Names, tags and hashes (pure)
# ---------------------------------------------------------------------------


def image_tag(driver_version, kernel, os_tag_value):
    """<driver>-<kernel>-<os tag>, the NVIDIA precompiled tag scheme (openshift-releases.md s.3).

    Build outputs use it too: one tag per (driver version, kernel, OS release).
    """
    tag = "{0}-{1}-{2}".format(driver_version, kernel, os_tag_value)
    if not TAG_RE.match(tag):
        raise GpuopsError(
            "the image tag {0!r} would not be a valid tag (too long?)".format(tag), param="kernel_versions"
        )
    return tag


def precompiled_image(registry, image, driver_version, kernel, os_tag_value):
    """e.g. nvcr.io/nvidia/driver:550-5.15.0-69-generic-ubuntu22.04."""
    return "{0}/{1}:{2}".format(registry, image, image_tag(driver_version, kernel, os_tag_value))


def short_hash(text, length=8):
    return hashlib.sha256(to_text(text).encode("utf-8")).hexdigest()[:length]


def buildconfig_name(name, kernel):
    """One BuildConfig per kernel: <name>-<kernel as a DNS name>, at most 52 characters.

    52 leaves room for the build number suffix and keeps the name usable as the
    value of the openshift.io/build-config.name label (63 characters).
    """
    slug = re.sub(r"[^a-z0-9.-]+", "-", kernel.lower()).strip("-.")
    full = "{0}-{1}".format(name, slug)
    if len(full) <= 52:
        return full
    keep = 52 - len(name) - 10
    return "{0}-{1}-{2}".format(name, slug[:keep].rstrip("-."), short_hash(kernel))


def inputs_hash(inputs):
    """A stable hash of everything that goes into an image build (sorted JSON, sha256)."""
    text = json.dumps(inputs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


# ---------------------------------------------------------------------------
# Dockerfiles (defaults; dockerfile / git_uri override them)
# ---------------------------------------------------------------------------

DTK_DOCKERFILE = """\
# Built by gpuops.cluster.driver_container_build on the cluster's Driver Toolkit
# image for the node's RHCOS build (the FROM line is replaced by the BuildConfig).
FROM driver-toolkit
ARG DRIVER_VERSION
ARG KERNEL_VERSION
ARG TARGET_ARCH=x86_64
ARG BASE_URL=https://us.download.nvidia.com/tesla
USER root
WORKDIR /usr/src
# The toolkit must ship exactly the node kernel (Bug 1977972: KERNEL_VERSION has the arch suffix).
RUN grep -q "\\"KERNEL_VERSION\\": \\"${KERNEL_VERSION}\\"" /etc/driver-toolkit-release.json \\
 || { echo "driver toolkit kernel does not match ${KERNEL_VERSION}" >&2; exit 1; }
RUN curl -fsSL -o nvidia.run "${BASE_URL}/${DRIVER_VERSION}/NVIDIA-Linux-${TARGET_ARCH}-${DRIVER_VERSION}.run" \\
 && sh nvidia.run -x && rm nvidia.run \\
 && cd "NVIDIA-Linux-${TARGET_ARCH}-${DRIVER_VERSION}" \\
 && ./nvidia-installer --silent --kernel-module-only --no-drm --no-backup --no-nouveau-check \\
      --kernel-name="${KERNEL_VERSION}" --kernel-source-path="/usr/src/kernels/${KERNEL_VERSION}"
LABEL io.openshift.build.gpuops.driver-version="${DRIVER_VERSION}" \\
      io.openshift.build.gpuops.kernel-version="${KERNEL_VERSION}"
"""

ENTITLEMENT_DOCKERFILE = """\
# Built by gpuops.cluster.driver_container_build on UBI with the cluster-wide
# entitlement (secret mounted at ./etc-pki-entitlement; OpenShift < 4.9 without
# a Driver Toolkit image). The FROM line is replaced by the BuildConfig.
FROM ubi
ARG DRIVER_VERSION
ARG KERNEL_VERSION
ARG TARGET_ARCH=x86_64
ARG BASE_URL=https://us.download.nvidia.com/tesla
USER root
COPY ./etc-pki-entitlement /etc/pki/entitlement
RUN rm -f /etc/rhsm-host \\
 && dnf -y install "kernel-devel-${KERNEL_VERSION}" "kernel-headers-${KERNEL_VERSION}" \\
      elfutils-libelf-devel gcc make kmod \\
 && rm -rf /etc/pki/entitlement
WORKDIR /usr/src
RUN curl -fsSL -o nvidia.run "${BASE_URL}/${DRIVER_VERSION}/NVIDIA-Linux-${TARGET_ARCH}-${DRIVER_VERSION}.run" \\
 && sh nvidia.run -x && rm nvidia.run \\
 && cd "NVIDIA-Linux-${TARGET_ARCH}-${DRIVER_VERSION}" \\
 && ./nvidia-installer --silent --kernel-module-only --no-drm --no-backup --no-nouveau-check \\
      --kernel-name="${KERNEL_VERSION}" --kernel-source-path="/usr/src/kernels/${KERNEL_VERSION}"
"""


# ---------------------------------------------------------------------------
# Rendering (pure)
# ---------------------------------------------------------------------------


def common_labels(name):
    return {
        MANAGED_BY_LABEL: MANAGED_BY,
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": "driver-build",
        IMAGE_NAME_KEY: name,
    }


def render_imagestream(cfg):
    return {
        "apiVersion": "image.openshift.io/v1",
        "kind": "ImageStream",
        "metadata": {"name": cfg["name"], "namespace": cfg["namespace"], "labels": common_labels(cfg["name"])},
        # Pods may reference "<name>:<tag>" directly (imagestream lookup).
        "spec": {"lookupPolicy": {"local": True}},
    }


def build_base(cfg, kernel, info, strategy):
    """The builder image (strategy.dockerStrategy.from) for one kernel."""
    if cfg["base_image"]:
        return {"kind": "DockerImage", "name": cfg["base_image"]}
    if strategy == "driver-toolkit":
        return {
            "kind": "ImageStreamTag",
            "namespace": cfg["driver_toolkit_namespace"],
            "name": "{0}:{1}".format(cfg["driver_toolkit_imagestream"], info["ostree_version"]),
        }
    major = rhel_major(kernel, info.get("rhel_version")) or "8"
    return {"kind": "DockerImage", "name": "registry.access.redhat.com/ubi{0}/ubi:latest".format(major)}


def build_inputs(cfg, kernel, info, strategy):
    """Everything that determines the image; hashed into HASH_KEY."""
    source = {
        "dockerfile": cfg["dockerfile"] or (DTK_DOCKERFILE if strategy == "driver-toolkit" else ENTITLEMENT_DOCKERFILE)
    }
    if cfg["git_uri"]:
        source = {"git_uri": cfg["git_uri"], "git_ref": cfg["git_ref"], "context_dir": cfg["context_dir"]}
    inputs = {
        "driver_version": cfg["driver_version"],
        "kernel": kernel,
        "os_tag": info["os_tag"],
        "strategy": strategy,
        "from": build_base(cfg, kernel, info, strategy),
        "source": source,
        "build_args": build_args(cfg, kernel, info),
    }
    if strategy == "entitlement":
        inputs["entitlement_secret"] = cfg["entitlement_secret"]
    return inputs


def build_args(cfg, kernel, info):
    args = [{"name": "DRIVER_VERSION", "value": cfg["driver_version"]}, {"name": "KERNEL_VERSION", "value": kernel}]
    if info.get("rhel_version"):
        args.append({"name": "RHEL_VERSION", "value": info["rhel_version"]})
    if info.get("os_tag"):
        args.append({"name": "OS_TAG", "value": info["os_tag"]})
    for key in sorted(cfg["build_args"]):
        args.append({"name": key, "value": cfg["build_args"][key]})
    return args


def render_buildconfig(cfg, kernel, info, strategy):
    """BuildConfig building the driver image for one kernel (Docker strategy).

    No triggers: builds are started by the module only when the image is missing
    or its inputs changed, so creating/updating the BuildConfig never starts one.
    """
    inputs = build_inputs(cfg, kernel, info, strategy)
    digest = inputs_hash(inputs)
    tag = image_tag(cfg["driver_version"], kernel, info["os_tag"])
    labels = common_labels(cfg["name"])
    labels[KERNEL_KEY] = kernel if len(kernel) <= 63 else short_hash(kernel, 16)
    if "source" in inputs and "git_uri" in inputs["source"]:
        source = {"type": "Git", "git": {"uri": cfg["git_uri"]}}
        if cfg["git_ref"]:
            source["git"]["ref"] = cfg["git_ref"]
        if cfg["context_dir"]:
            source["contextDir"] = cfg["context_dir"]
    else:
        source = {"type": "Dockerfile", "dockerfile": inputs["source"]["dockerfile"]}
    if strategy == "entitlement":
        source["secrets"] = [{"secret": {"name": cfg["entitlement_secret"]}, "destinationDir": "etc-pki-entitlement"}]
    return {
        "apiVersion": "build.openshift.io/v1",
        "kind": "BuildConfig",
        "metadata": {
            "name": buildconfig_name(cfg["name"], kernel),
            "namespace": cfg["namespace"],
            "labels": labels,
            "annotations": {
                KERNEL_KEY: kernel,
                DRIVER_KEY: cfg["driver_version"],
                OS_TAG_KEY: info["os_tag"],
                HASH_KEY: digest,
            },
        },
        "spec": {
            "runPolicy": "Serial",
            "successfulBuildsHistoryLimit": 3,
            "failedBuildsHistoryLimit": 3,
            "triggers": [],
            "source": source,
            "strategy": {
                "type": "Docker",
                "dockerStrategy": {"from": inputs["from"], "buildArgs": inputs["build_args"], "noCache": True},
            },
            "output": {"to": {"kind": "ImageStreamTag", "name": "{0}:{1}".format(cfg["name"], tag)}},
        },
    }


BUILD_SPEC_FIELDS = (
    "serviceAccount",
    "source",
    "strategy",
    "output",
    "resources",
    "postCommit",
    "nodeSelector",
    "completionDeadlineSeconds",
)


def render_build(buildconfig, number, uid=None):
    """A Build as ``oc start-build`` (buildconfigs/instantiate) would create it.

    The spec is the BuildConfig's; name <bc>-<n>; the labels/annotations
    openshift.io/build-config.name, openshift.io/build.number and
    openshift.io/build.start-policy; owned by the BuildConfig so deleting it
    removes its builds.
    """
    meta = buildconfig["metadata"]
    bc_name = meta["name"]
    labels = dict(meta.get("labels") or {})
    labels.update(
        {"buildconfig": bc_name, BC_NAME_KEY: bc_name, START_POLICY_KEY: buildconfig["spec"].get("runPolicy", "Serial")}
    )
    annotations = dict((k, v) for k, v in (meta.get("annotations") or {}).items() if k.startswith(PREFIX))
    annotations.update({BC_NAME_KEY: bc_name, BUILD_NUMBER_KEY: str(number)})
    spec = dict((k, copy.deepcopy(v)) for k, v in buildconfig["spec"].items() if k in BUILD_SPEC_FIELDS)
    spec["triggeredBy"] = [
        {"message": "Started by gpuops.cluster.driver_container_build (image missing or inputs changed)"}
    ]
    build = {
        "apiVersion": "build.openshift.io/v1",
        "kind": "Build",
        "metadata": {
            "name": "{0}-{1}".format(bc_name, number),
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": annotations,
        },
        "spec": spec,
    }
    if uid:
        build["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "build.openshift.io/v1",
                "kind": "BuildConfig",
                "name": bc_name,
                "uid": uid,
                "controller": True,
            }
        ]
    return build


# ---------------------------------------------------------------------------
# Build state and decisions (pure)
# ---------------------------------------------------------------------------


def build_number(build):
    meta = build.get("metadata") or {}
    value = (meta.get("annotations") or {}).get(BUILD_NUMBER_KEY)
    if value is None:
        match = re.search(r"-([0-9]+)$", meta.get("name", ""))
        value = match.group(1) if match else 0
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def next_build_number(buildconfig, builds):
    last = ((buildconfig or {}).get("status") or {}).get("lastVersion") or 0
    return max([int(last)] + [build_number(b) for b in builds]) + 1


def build_phase(build):
    return ((build or {}).get("status") or {}).get("phase") or "New"


def build_hash(build):
    return ((build.get("metadata") or {}).get("annotations") or {}).get(HASH_KEY)


def build_output_tag(build):
    name = (((build.get("spec") or {}).get("output") or {}).get("to") or {}).get("name", "")
    return name.split(":", 1)[1] if ":" in name else None


def builds_for(builds, bc_name):
    """Builds of one BuildConfig, newest first."""
    mine = [
        b
        for b in builds
        if ((b.get("metadata") or {}).get("labels") or {}).get(BC_NAME_KEY) == bc_name
        or ((b.get("metadata") or {}).get("annotations") or {}).get(BC_NAME_KEY) == bc_name
    ]
    return sorted(mine, key=build_number, reverse=True)


def decide(tag_present, builds, desired_hash, tag, bc_hash=None):
    """What to do for one kernel: ('current'|'wait'|'build', build or None, why).

    * a build with the desired inputs is New/Pending/Running -> wait for it;
    * the image tag exists and the newest Complete build that wrote it had the
      desired inputs -> current (also when build history was pruned but the
      BuildConfig already carries the desired hash);
    * otherwise -> start a build (image missing, inputs changed, or the last
      build with these inputs failed).
    """
    same_tag = [b for b in builds if build_output_tag(b) in (tag, None)]
    for build in same_tag:
        if build_phase(build) in ACTIVE_PHASES and build_hash(build) == desired_hash:
            return (
                "wait",
                build,
                "build {0} with these inputs is {1}".format(build["metadata"]["name"], build_phase(build)),
            )
    complete = [b for b in same_tag if build_phase(b) == "Complete"]
    if tag_present:
        if complete and build_hash(complete[0]) == desired_hash:
            return (
                "current",
                complete[0],
                "image built by {0} with these inputs".format(complete[0]["metadata"]["name"]),
            )
        if not same_tag and bc_hash == desired_hash:
            return "current", None, "image present; build history pruned"
    if not tag_present:
        why = "image tag {0} missing".format(tag)
    elif complete:
        why = "inputs changed since {0}".format(complete[0]["metadata"]["name"])
    else:
        why = "image present but no record of the inputs it was built with"
    failed = [b for b in same_tag if build_phase(b) in FAILED_PHASES and build_hash(b) == desired_hash]
    if failed and (not complete or build_number(failed[0]) > build_number(complete[0])):
        why += "; retrying after {0} {1}".format(failed[0]["metadata"]["name"], build_phase(failed[0]))
    return "build", None, why


def imagestream_tags(imagestream):
    """{tag: {'image': digest reference or None}} from an ImageStream's status (and spec)."""
    tags = {}
    for entry in ((imagestream or {}).get("status") or {}).get("tags") or []:
        items = entry.get("items") or []
        if items:
            tags[entry.get("tag")] = {"image": items[0].get("dockerImageReference")}
    return tags


def image_reference(imagestream, cfg, tag):
    """(tag reference, digest reference or None) for one tag of our ImageStream."""
    status = (imagestream or {}).get("status") or {}
    repo = status.get("dockerImageRepository")
    digest = imagestream_tags(imagestream).get(tag, {}).get("image")
    if not repo and digest:
        repo = digest.split("@", 1)[0]
    if not repo:
        repo = "{0}/{1}/{2}".format(DEFAULT_INTERNAL_REGISTRY, cfg["namespace"], cfg["name"])
    return "{0}:{1}".format(repo, tag), digest


def find_stale(buildconfigs, kernels, imagestream=None):
    """Managed BuildConfigs (and their image tags) for kernels no selected node runs.

    Returns [{kernel, buildconfig, tags}] sorted by kernel.
    """
    stale = []
    tags = sorted(imagestream_tags(imagestream))
    for bc in buildconfigs:
        meta = bc.get("metadata") or {}
        kernel = (meta.get("annotations") or {}).get(KERNEL_KEY) or (meta.get("labels") or {}).get(KERNEL_KEY)
        if not kernel or kernel in kernels:
            continue
        marker = "-{0}-".format(kernel)
        stale.append(
            {
                "kernel": kernel,
                "buildconfig": meta.get("name"),
                "tags": [t for t in tags if marker in "-{0}-".format(t) or marker in t],
            }
        )
    return sorted(stale, key=lambda s: (s["kernel"], s["buildconfig"]))


def describe_build_failure(build, log_tail=None):
    """'<build> (kernel K) Failed: <reason>: <message>' + the log tail.

    Reads status.phase, status.reason, status.message and status.logSnippet
    (OpenShift puts the last lines of the build log there on failure); a tail
    read from the build pod's log is used when logSnippet is empty.
    """
    status = build.get("status") or {}
    meta = build.get("metadata") or {}
    kernel = (meta.get("annotations") or {}).get(KERNEL_KEY)
    parts = [
        "build {0}{1} {2}".format(
            meta.get("name"), " (kernel {0})".format(kernel) if kernel else "", build_phase(build)
        )
    ]
    if status.get("reason"):
        parts.append(status["reason"])
    if status.get("message"):
        parts.append(status["message"])
    text = ": ".join(parts)
    snippet = status.get("logSnippet") or log_tail
    if snippet:
        lines = to_text(snippet).rstrip().splitlines()[-20:]
        text += "\nlast log lines:\n" + "\n".join("  " + line for line in lines)
    return text


def summarize_builds(builds):
    """'2 Running, 1 Complete' for progress lines."""
    counts = {}
    for build in builds:
        counts[build_phase(build)] = counts.get(build_phase(build), 0) + 1
    return ", ".join("{0} {1}".format(n, phase) for phase, n in sorted(counts.items()))


def object_diff(kind_name, before, after):
    """One entry of the ``diff`` list (Ansible renders a list of before/after dicts)."""
    before = strip_server_fields(before) if before else {}
    after = strip_server_fields(after) if after else {}
    if before and after and diff_objects is not None:
        match, delta = diff_objects(before, after)
        if match:
            return None
        before, after = delta.get("before", {}), delta.get("after", {})
    return {"before": before, "after": after, "before_header": kind_name, "after_header": kind_name}


def merged(existing, desired):
    """What an object will look like after our server-side apply (for diffs)."""
    out = strip_server_fields(existing)

    def merge(dst, src):
        for key, value in src.items():
            if isinstance(value, dict) and isinstance(dst.get(key), dict):
                merge(dst[key], value)
            else:
                dst[key] = copy.deepcopy(value)

    merge(out, desired)
    return out


# ---------------------------------------------------------------------------
# The module run (talks to the API)
# ---------------------------------------------------------------------------


def _get(client, resource, name, namespace=None):
    try:
        return client.get(resource, name=name, namespace=namespace).to_dict()
    except NotFoundError:
        return None


def _list(client, resource, namespace=None, selector=None):
    params = {}
    if namespace:
        params["namespace"] = namespace
    if selector:
        params["label_selector"] = selector
    return list(client.get(resource, **params).to_dict().get("items") or [])


def _resource(svc, kind, api_version):
    return svc.find_resource(kind, api_version, fail=False)


def resolve_strategy(requested, is_openshift):
    if requested == "auto":
        return "driver-toolkit" if is_openshift else "precompiled"
    if requested in ("driver-toolkit", "entitlement") and not is_openshift:
        raise GpuopsError(
            "{0} builds need the OpenShift build.openshift.io and image.openshift.io APIs, which this cluster "
            "does not serve; use strategy: precompiled on plain Kubernetes.".format(requested),
            param="strategy",
        )
    return requested


def read_kernels(cfg, client, svc):
    """{kernel: info} from the nodes (or from the parameters)."""
    if cfg["kernel_versions"]:
        return kernels_from_params(cfg["kernel_versions"], cfg["os_release"], cfg["os_tag"])
    nodes_api = _resource(svc, "Node", "v1")
    nodes = _list(client, nodes_api, selector=label_selector(cfg["node_selector"]) if cfg["node_selector"] else None)
    gpu_nodes = select_gpu_nodes(nodes, cfg["node_selector"])
    if not gpu_nodes:
        raise GpuopsError(
            "no node matches ({0}; {1} nodes in the cluster looked at). Check the labels (is Node Feature "
            "Discovery deployed? see nfd_labels), fix node_selector, or give kernel_versions.".format(
                describe_node_selection(cfg["node_selector"]), len(nodes)
            ),
            param="node_selector",
        )
    return group_kernels(gpu_nodes, cfg["os_tag"])


def check_kernel_infos(kernels, strategy, cfg):
    """Every kernel has what its strategy needs (before any write)."""
    for kernel, info in kernels.items():
        where = "nodes {0}".format(", ".join(info["nodes"])) if info["nodes"] else "kernel {0}".format(kernel)
        if not info.get("os_tag"):
            param = "os_release" if cfg["kernel_versions"] else "os_tag"
            raise GpuopsError(
                "cannot name the image for {0}: no os-release ID/VERSION_ID ({1}, {2}). Set os_tag "
                "(e.g. rhcos4.16 or rhel9.6){3}.".format(
                    where, OS_ID_LABEL, OS_VERSION_ID_LABEL, " or os_release" if cfg["kernel_versions"] else ""
                ),
                param=param,
            )
        if strategy == "driver-toolkit" and not cfg["base_image"] and not info.get("ostree_version"):
            raise GpuopsError(
                "the Driver Toolkit image is chosen by the RHCOS build, but {0} carry no {1} label "
                "(older NFD){2}. Give base_image (the driver-toolkit image of that release), or "
                "strategy: entitlement.".format(
                    where,
                    OSTREE_LABEL,
                    "; with kernel_versions give os_release.OSTREE_VERSION" if cfg["kernel_versions"] else "",
                ),
                param="os_release" if cfg["kernel_versions"] else "base_image",
            )


def check_build_prerequisites(cfg, client, svc, kernels, strategy):
    """Namespace, driver-toolkit tags, entitlement secret: all read before any write."""
    ns_api = _resource(svc, "Namespace", "v1")
    if _get(client, ns_api, cfg["namespace"]) is None:
        raise GpuopsError(
            "the namespace {0} does not exist; create it first (the driver role does) or set namespace.".format(
                cfg["namespace"]
            ),
            param="namespace",
        )
    if cfg["base_image"]:
        return
    if strategy == "driver-toolkit":
        is_api = _resource(svc, "ImageStream", "image.openshift.io/v1")
        dtk = _get(client, is_api, cfg["driver_toolkit_imagestream"], cfg["driver_toolkit_namespace"])
        where = "{0}/{1}".format(cfg["driver_toolkit_namespace"], cfg["driver_toolkit_imagestream"])
        if dtk is None:
            raise GpuopsError(
                "the ImageStream {0} does not exist: this cluster has no Driver Toolkit (OpenShift < 4.6.30 / "
                "4.7.11). Use strategy: entitlement or give base_image.".format(where),
                param="strategy",
            )
        available = set(t.get("name") for t in ((dtk.get("spec") or {}).get("tags") or []))
        available.update(t.get("tag") for t in ((dtk.get("status") or {}).get("tags") or []))
        available.discard("latest")
        for kernel, info in sorted(kernels.items()):
            if info["ostree_version"] not in available:
                raise GpuopsError(
                    "the ImageStream {0} has no tag {1} (RHCOS build of {2}; tags: {3}). The imagestream is "
                    "not updated yet (BZ#2014071 on < 4.8.21 / 4.9.5: `oc delete -n openshift is/driver-toolkit`) "
                    "or the nodes run a release without a toolkit; give base_image or use strategy: entitlement.".format(
                        where,
                        info["ostree_version"],
                        ", ".join(info["nodes"]) or kernel,
                        ", ".join(sorted(a for a in available if a)) or "none",
                    ),
                    param="base_image",
                )
    if strategy == "entitlement":
        secret_api = _resource(svc, "Secret", "v1")
        if _get(client, secret_api, cfg["entitlement_secret"], cfg["namespace"]) is None:
            raise GpuopsError(
                "secret {0}/{1} with the entitlement certificate does not exist. Create it from the "
                "cluster-wide entitlement (entitlement role, `oc create secret generic etc-pki-entitlement "
                "--from-file ...`) or set entitlement_secret.".format(cfg["namespace"], cfg["entitlement_secret"]),
                param="entitlement_secret",
            )


def run_precompiled(cfg, kernels, result):
    for kernel, info in sorted(kernels.items()):
        ref = precompiled_image(
            cfg["registry"], cfg["precompiled_image"], cfg["driver_version"], kernel, info["os_tag"]
        )
        result["images"][kernel] = ref
        result["kernels"][kernel] = dict(info, image=ref, tag=ref.rsplit(":", 1)[1], action="precompiled")
    return result


def plan_openshift(cfg, client, svc, kernels, strategy):
    """Read the current objects and decide, per kernel, what to do. Read-only."""
    is_api = _resource(svc, "ImageStream", "image.openshift.io/v1")
    bc_api = _resource(svc, "BuildConfig", "build.openshift.io/v1")
    build_api = _resource(svc, "Build", "build.openshift.io/v1")
    selector = label_selector({MANAGED_BY_LABEL: MANAGED_BY, IMAGE_NAME_KEY: cfg["name"]})
    imagestream = _get(client, is_api, cfg["name"], cfg["namespace"])
    existing_bcs = dict((bc["metadata"]["name"], bc) for bc in _list(client, bc_api, cfg["namespace"], selector))
    builds = _list(client, build_api, cfg["namespace"], selector)
    tags = imagestream_tags(imagestream)
    plan = {
        "imagestream": imagestream,
        "buildconfigs": [],
        "stale": find_stale(list(existing_bcs.values()), kernels, imagestream),
        "apis": {"is": is_api, "bc": bc_api, "build": build_api},
        "builds": builds,
    }
    for kernel, info in sorted(kernels.items()):
        desired = render_buildconfig(cfg, kernel, info, strategy)
        name = desired["metadata"]["name"]
        existing = existing_bcs.get(name)
        if existing is None:
            # An unlabelled BuildConfig of the same name: adopt it (apply will label it).
            existing = _get(client, bc_api, name, cfg["namespace"])
        tag = image_tag(cfg["driver_version"], kernel, info["os_tag"])
        desired_hash = desired["metadata"]["annotations"][HASH_KEY]
        bc_hash = ((existing or {}).get("metadata") or {}).get("annotations", {}).get(HASH_KEY)
        action, build, why = decide(tag in tags, builds_for(builds, name), desired_hash, tag, bc_hash)
        plan["buildconfigs"].append(
            {
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
        )
    return plan


def _apply(svc, resource, definition):
    """Server-side apply (field manager gpuops.cluster) of an object we own."""
    svc.module.params["server_side_apply"] = {"field_manager": MANAGED_BY, "force_conflicts": True}
    obj, _warnings = svc.apply(resource, definition)
    return obj


def _start_build(client, build_api, bc, builds, attempts=5):
    """Create <bc>-<n>; on a name conflict (someone else started one) take the next number."""
    number = next_build_number(bc, builds)
    last = None
    for _i in range(attempts):
        body = render_build(bc, number, (bc.get("metadata") or {}).get("uid"))
        try:
            return client.create(build_api, body, namespace=body["metadata"]["namespace"]).to_dict()
        except ConflictError as exc:
            last = exc
            number += 1
    raise GpuopsError(
        "could not start a build for {0}: build names up to {1} already exist ({2})".format(
            bc["metadata"]["name"], number, last
        )
    )


def _build_log_tail(client, build):
    """Tail of the build pod's log (used only when status.logSnippet is empty)."""
    meta = build.get("metadata") or {}
    # OpenShift names the build pod <build>-build and records it in this annotation.
    pod = (meta.get("annotations") or {}).get(BUILD_POD_KEY) or "{0}-build".format(meta.get("name"))
    try:
        from kubernetes.client import CoreV1Api

        return CoreV1Api(client.client.client).read_namespaced_pod_log(
            pod, build["metadata"]["namespace"], tail_lines=20
        )
    except Exception:  # the log is a courtesy; status carries the verdict
        return None


def wait_builds(cfg, client, build_api, names, progress, clock=time.monotonic, sleep=time.sleep):
    """Poll all our builds together until each is Complete or failed, or the timeout."""
    deadline = clock() + cfg["wait_timeout"]
    selector = label_selector({MANAGED_BY_LABEL: MANAGED_BY, IMAGE_NAME_KEY: cfg["name"]})
    while True:
        current = dict((b["metadata"]["name"], b) for b in _list(client, build_api, cfg["namespace"], selector))
        mine = [current.get(n) or {"metadata": {"name": n}, "status": {"phase": "New"}} for n in names]
        progress("builds: {0}".format(summarize_builds(mine)))
        failed = [b for b in mine if build_phase(b) in FAILED_PHASES]
        active = [b for b in mine if build_phase(b) not in FAILED_PHASES + ("Complete",)]
        if failed and not active:
            return mine, failed, []
        if not active:
            return mine, failed, []
        if clock() >= deadline:
            return mine, failed, active
        sleep(min(cfg["wait_sleep"], max(0.0, deadline - clock())))


def run(module, client, svc):
    """driver_container_build: validate, read, plan, (apply, build, wait), report."""
    cfg = validate_params(module.params)
    progress = Progress(module)
    is_openshift = bool(
        _resource(svc, "BuildConfig", "build.openshift.io/v1")
        and _resource(svc, "ImageStream", "image.openshift.io/v1")
    )
    strategy = resolve_strategy(cfg["strategy"], is_openshift)
    validate_driver_version(cfg["driver_version"], strategy)
    kernels = read_kernels(cfg, client, svc)
    check_kernel_infos(kernels, strategy, cfg)
    result = {
        "changed": False,
        "strategy": strategy,
        "platform": "openshift" if is_openshift else "kubernetes",
        "images": {},
        "kernels": {},
        "stale": [],
        "pruned": [],
        "builds": [],
        "progress": progress.events,
    }
    if strategy == "precompiled":
        return run_precompiled(cfg, kernels, result)

    check_build_prerequisites(cfg, client, svc, kernels, strategy)
    plan = plan_openshift(cfg, client, svc, kernels, strategy)
    apis = plan["apis"]
    diffs = []
    desired_is = render_imagestream(cfg)
    is_needs_apply = plan["imagestream"] is None or not object_contains(plan["imagestream"], desired_is)
    if is_needs_apply:
        diffs.append(
            object_diff(
                "ImageStream {0}/{1}".format(cfg["namespace"], cfg["name"]),
                plan["imagestream"],
                merged(plan["imagestream"], desired_is) if plan["imagestream"] else desired_is,
            )
        )
    for item in plan["buildconfigs"]:
        if item["needs_apply"]:
            after = merged(item["existing"], item["desired"]) if item["existing"] else item["desired"]
            diffs.append(
                object_diff(
                    "BuildConfig {0}/{1}".format(cfg["namespace"], item["desired"]["metadata"]["name"]),
                    item["existing"],
                    after,
                )
            )
        if item["action"] == "build":
            diffs.append(_build_diff(item))
    result["stale"] = plan["stale"]
    if cfg["prune_stale"]:
        for stale in plan["stale"]:
            diffs.append(
                {
                    "before": {"kind": "BuildConfig", "name": stale["buildconfig"], "tags": stale["tags"]},
                    "after": {},
                    "before_header": "BuildConfig {0}/{1} (stale kernel {2})".format(
                        cfg["namespace"], stale["buildconfig"], stale["kernel"]
                    ),
                    "after_header": "(deleted)",
                }
            )
    diffs = [d for d in diffs if d]
    result["changed"] = bool(diffs)
    if module._diff:
        result["diff"] = diffs

    started, waiting = [], []
    if not module.check_mode:
        if is_needs_apply:
            plan["imagestream"] = _apply(svc, apis["is"], desired_is)
        for item in plan["buildconfigs"]:
            if item["needs_apply"]:
                item["existing"] = _apply(svc, apis["bc"], item["desired"])
        for item in plan["buildconfigs"]:
            if item["action"] == "build":
                build = _start_build(
                    client,
                    apis["build"],
                    item["existing"],
                    builds_for(plan["builds"], item["desired"]["metadata"]["name"]),
                )
                item["build"] = build
                started.append(build["metadata"]["name"])
                progress(
                    "started {0} for kernel {1} ({2})".format(build["metadata"]["name"], item["kernel"], item["why"])
                )
            elif item["action"] == "wait":
                waiting.append(item["build"]["metadata"]["name"])
                progress(
                    "waiting for {0} for kernel {1} ({2})".format(
                        item["build"]["metadata"]["name"], item["kernel"], item["why"]
                    )
                )

    final_builds = {}
    if (started or waiting) and cfg["wait"]:
        mine, failed, active = wait_builds(cfg, client, apis["build"], started + waiting, progress)
        final_builds = dict((b["metadata"]["name"], b) for b in mine)
        result["builds"] = [_build_summary(b) for b in mine]
        if failed:
            texts = [
                describe_build_failure(
                    b, None if (b.get("status") or {}).get("logSnippet") else _build_log_tail(client, b)
                )
                for b in failed
            ]
            raise GpuopsError(
                "{0} of {1} driver build(s) failed:\n{2}".format(len(failed), len(mine), "\n".join(texts)),
                builds=result["builds"],
                changed=result["changed"],
                progress=progress.events,
            )
        if active:
            raise GpuopsError(
                "driver build(s) not finished after {0}s: {1}. Raise wait_timeout or look at the builds "
                "(`oc describe -n {2} build/<name>`, `oc logs -n {2} build/<name>`).".format(
                    cfg["wait_timeout"], "; ".join(_active_text(b) for b in active), cfg["namespace"]
                ),
                param="wait_timeout",
                builds=result["builds"],
                changed=result["changed"],
                progress=progress.events,
            )
        plan["imagestream"] = _get(client, apis["is"], cfg["name"], cfg["namespace"])
    elif started or waiting:
        result["builds"] = [_build_summary(final_builds.get(n) or {"metadata": {"name": n}}) for n in started + waiting]

    tags_now = imagestream_tags(plan["imagestream"])
    for item in plan["buildconfigs"]:
        kernel = item["kernel"]
        ref, digest = image_reference(plan["imagestream"], cfg, item["tag"])
        build = item["build"] or {}
        build_name = (build.get("metadata") or {}).get("name")
        if build_name in final_builds:
            build = final_builds[build_name]
        action = item["action"]
        if module.check_mode and action == "build":
            action = "would-build"
        elif action == "build":
            action = "built" if cfg["wait"] else "building"
        elif action == "wait":
            action = "built" if cfg["wait"] else "building"
        result["images"][kernel] = ref
        result["kernels"][kernel] = dict(
            item["info"],
            image=ref,
            image_digest=digest,
            tag=item["tag"],
            ready=item["tag"] in tags_now,
            buildconfig=item["desired"]["metadata"]["name"],
            build=build_name,
            build_phase=build_phase(build) if build_name else None,
            inputs_hash=item["hash"],
            action=action,
            reason=item["why"],
        )

    if cfg["prune_stale"] and plan["stale"]:
        result["pruned"] = prune(cfg, client, svc, apis, plan["stale"], module.check_mode, progress)
    return result


def _build_diff(item):
    after = {
        "kind": "Build",
        "buildconfig": item["desired"]["metadata"]["name"],
        "kernel": item["kernel"],
        "output": item["desired"]["spec"]["output"]["to"]["name"],
        "reason": item["why"],
    }
    return {
        "before": {},
        "after": after,
        "before_header": "Build (none)",
        "after_header": "Build for kernel {0}".format(item["kernel"]),
    }


def _active_text(build):
    """'<name> (New: InvalidImageReference: Referenced image could not be resolved.)'."""
    status = build.get("status") or {}
    detail = ": ".join(x for x in (build_phase(build), status.get("reason"), status.get("message")) if x)
    return "{0} ({1})".format((build.get("metadata") or {}).get("name"), detail)


def _build_summary(build):
    status = build.get("status") or {}
    meta = build.get("metadata") or {}
    return {
        "name": meta.get("name"),
        "kernel": (meta.get("annotations") or {}).get(KERNEL_KEY),
        "phase": build_phase(build),
        "reason": status.get("reason"),
        "message": status.get("message"),
        "duration": status.get("duration"),
        "output_image": (status.get("outputDockerImageReference") or None),
    }


def prune(cfg, client, svc, apis, stale, check_mode, progress):
    """Delete the BuildConfigs (their Builds go with them) and image tags of stale kernels."""
    pruned = []
    ist_api = _resource(svc, "ImageStreamTag", "image.openshift.io/v1")
    for item in stale:
        entry = {
            "kernel": item["kernel"],
            "buildconfig": item["buildconfig"],
            "tags": list(item["tags"]),
            "tags_not_removed": [],
        }
        if not check_mode:
            delete_options = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
            try:
                client.delete(apis["bc"], name=item["buildconfig"], namespace=cfg["namespace"], body=delete_options)
            except NotFoundError:
                pass
            selector = label_selector({BC_NAME_KEY: item["buildconfig"]})
            if _list(client, apis["build"], cfg["namespace"], selector):
                client.delete(apis["build"], namespace=cfg["namespace"], label_selector=selector)
            for tag in item["tags"]:
                if ist_api is None:
                    entry["tags_not_removed"].append(tag)
                    continue
                try:
                    client.delete(ist_api, name="{0}:{1}".format(cfg["name"], tag), namespace=cfg["namespace"])
                except NotFoundError:
                    pass
            progress("pruned {0} (kernel {1})".format(item["buildconfig"], item["kernel"]))
        pruned.append(entry)
    return pruned
