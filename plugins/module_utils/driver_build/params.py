# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: the parameter checks the argument spec cannot express.

Choices, exclusive options, options that need another one and the keys of
``os_release`` are in the module's argument spec; what is left here is syntax
(kernel releases, driver versions, names, image references, build argument
names) and ranges (``wait_timeout``, ``wait_sleep``). ``validate_params``
builds, once, the frozen ``Config`` the rest of the package reads: no other
file sees the module or its parameters.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Tuple

from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.common.validation import check_mutually_exclusive, check_required_by

from ansible_collections.gpuops.cluster.plugins.module_utils.args import (
    module_spec,
    node_selection_spec,
    wait_params,
    wait_spec,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import (
    check_dns_label,
    check_dns_subdomain,
    check_image,
    check_repository,
)

MODULE = "driver_container_build"
KERNEL_LABEL = "feature.node.kubernetes.io/kernel-version.full"
RESERVED_BUILD_ARGS = ("DRIVER_VERSION", "KERNEL_VERSION")
MIN_WAIT_TIMEOUT = 60
# BuildConfig <name>-<kernel> names stay within 52 characters (see kernels.buildconfig_name).
NAME_MAX = 40

# uname -r: 5.14.0-427.22.1.el9_4.x86_64, 4.15.0-1051-aws, 5.15.0-69-generic,
# 5.14.0-284.54.1.el9_2.aarch64_64k, 4.18.0-193.24.1.el8_2.dt1.x86_64. It becomes
# part of an image tag ([A-Za-z0-9_.-], at most 128 characters), so nothing else.
KERNEL_RE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9]+([._-][A-Za-z0-9]+)*)?$")
# 550.90.07 / 535.104.05 / 430.26 (full versions) or a branch such as 550.
DRIVER_FULL_RE = re.compile(r"^[0-9]{3,4}\.[0-9]{1,3}(\.[0-9]{1,3})?$")
DRIVER_BRANCH_RE = re.compile(r"^[0-9]{3,4}$")
OS_TAG_RE = re.compile(r"^[a-z]+[0-9]+(\.[0-9]+)*$")
BUILD_ARG_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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


def validate_name(value):
    check_dns_label(value, "name")
    if len(value) > NAME_MAX:
        raise GpuopsError(
            "{0!r} is {1} characters long; give at most {2} (the BuildConfig names add the kernel).".format(
                value, len(value), NAME_MAX
            ),
            param="name",
        )
    return value


def kernel_list(kernels):
    """The given kernels, checked, without duplicates, as a tuple (None when not given)."""
    if kernels is None:
        return None
    if not kernels:
        raise GpuopsError("is an empty list; leave it unset to read kernels from the nodes", param="kernel_versions")
    seen = []
    for kernel in kernels:
        kernel = validate_kernel_version(kernel)
        if kernel not in seen:
            seen.append(kernel)
    return tuple(seen)


def check_build_args(build_args):
    for key in build_args or {}:
        if not BUILD_ARG_RE.match(to_text(key)):
            raise GpuopsError(
                "{0!r} is not a valid build argument name (letters, digits and '_', not starting with a "
                "digit)".format(key),
                param="build_args",
            )
        if key in RESERVED_BUILD_ARGS:
            raise GpuopsError(
                "{0} is set by the module from driver_version / the node kernel; remove it".format(key),
                param="build_args",
            )
    return MappingProxyType(dict((to_text(k), to_text(v)) for k, v in (build_args or {}).items()))


def wait_settings(params):
    """(wait, wait_timeout, wait_sleep) with the module's default timeout, range-checked."""
    timeout, sleep = wait_params(MODULE, params)
    if params.get("wait_sleep") is not None:  # 0 is a value to refuse, not "unset"
        sleep = params["wait_sleep"]
    wait = params.get("wait", True)
    if wait and timeout < MIN_WAIT_TIMEOUT:
        raise GpuopsError(
            "{0}s is too short for a driver build (it compiles kernel modules); give at least {1} "
            "or wait: false".format(timeout, MIN_WAIT_TIMEOUT),
            param="wait_timeout",
        )
    if sleep < 1 or (wait and sleep > timeout):
        raise GpuopsError("must be between 1 and wait_timeout ({0})".format(timeout), param="wait_sleep")
    return wait, timeout, sleep


def _text_dict(value):
    """{text: text} without None values (YAML gives numbers and booleans), read-only."""
    return MappingProxyType(dict((to_text(k), to_text(v)) for k, v in (value or {}).items() if v is not None))


@dataclass(frozen=True)
class Config:
    """The checked parameters of one run, built once by ``validate_params``; read-only (mappings included)."""

    # "auto" until the runner resolves it against the cluster (the resolved strategy is passed alongside).
    strategy: str
    driver_version: str
    namespace: str
    name: str
    # None: read the kernels from the selected nodes.
    kernel_versions: Optional[Tuple[str, ...]]
    os_release: Mapping[str, str]
    os_tag: Optional[str]
    node_selector: Mapping[str, str]
    node_names: Tuple[str, ...]
    base_image: Optional[str]
    driver_toolkit_namespace: str
    driver_toolkit_imagestream: str
    # Empty: no secret, the build relies on the cluster-wide entitlement of its node.
    entitlement_secret: str
    dockerfile: Optional[str]
    git_uri: Optional[str]
    git_ref: Optional[str]
    context_dir: Optional[str]
    build_args: Mapping[str, str]
    registry: str
    precompiled_image: str
    prune_stale: bool
    kernel_module_type: str
    wait: bool
    wait_timeout: int
    wait_sleep: int
    # From the module, not its parameters: plan only / return the diff.
    check_mode: bool = False
    diff: bool = False


def validate_params(params, check_mode=False, diff=False):
    """Check and normalise the parameters before anything is read or written; return the ``Config``."""

    def text(key):
        return to_text(params.get(key) or "")

    strategy = text("strategy") or "auto"
    fields = dict(
        strategy=strategy,
        # A branch is valid for precompiled images only; "auto" is resolved later
        # (runner.ensure() re-checks the version against the resolved strategy).
        driver_version=validate_driver_version(
            text("driver_version"), "precompiled" if strategy in ("auto", "precompiled") else strategy
        ),
        namespace=check_dns_label(text("namespace"), "namespace"),
        name=validate_name(text("name")),
        kernel_versions=kernel_list(params.get("kernel_versions")),
        os_release=_text_dict(params.get("os_release")),
        os_tag=validate_os_tag(params.get("os_tag")),
        node_selector=_text_dict(params.get("node_selector")),
        node_names=tuple(params.get("node_names") or ()),
        base_image=check_image(params.get("base_image"), "base_image"),
        driver_toolkit_namespace=check_dns_label(text("driver_toolkit_namespace"), "driver_toolkit_namespace"),
        driver_toolkit_imagestream=check_dns_label(text("driver_toolkit_imagestream"), "driver_toolkit_imagestream"),
        entitlement_secret=(
            check_dns_subdomain(text("entitlement_secret"), "entitlement_secret") if text("entitlement_secret") else ""
        ),
        dockerfile=params.get("dockerfile"),
        git_uri=params.get("git_uri"),
        git_ref=params.get("git_ref"),
        context_dir=params.get("context_dir"),
        build_args=check_build_args(params.get("build_args")),
        registry=check_repository(text("registry").rstrip("/"), "registry"),
        precompiled_image=check_repository(text("precompiled_image"), "precompiled_image"),
        prune_stale=bool(params.get("prune_stale")),
        kernel_module_type=text("kernel_module_type") or "auto",
    )
    fields["wait"], fields["wait_timeout"], fields["wait_sleep"] = wait_settings(params)
    return Config(check_mode=bool(check_mode), diff=bool(diff), **fields)


OS_RELEASE_FIELDS = ("ID", "VERSION_ID", "OSTREE_VERSION", "RHEL_VERSION", "OPENSHIFT_VERSION")


def argument_spec():
    return module_spec(
        wait_spec(with_wait=True, wait_default=True),
        node_selection_spec(),
        driver_version=dict(type="str", required=True),
        strategy=dict(
            type="str",
            default="auto",
            choices=["auto", "driver-toolkit", "entitlement", "precompiled", "runtime-compiled"],
        ),
        kernel_module_type=dict(type="str", default="auto", choices=["auto", "open", "proprietary"]),
        namespace=dict(type="str", default="nvidia-gpu-operator"),
        name=dict(type="str", default="nvidia-gpu-driver"),
        kernel_versions=dict(type="list", elements="str"),
        os_release=dict(type="dict", options=dict((field, dict(type="str")) for field in OS_RELEASE_FIELDS)),
        os_tag=dict(type="str"),
        base_image=dict(type="str"),
        driver_toolkit_namespace=dict(type="str", default="openshift"),
        driver_toolkit_imagestream=dict(type="str", default="driver-toolkit"),
        entitlement_secret=dict(type="str", default="etc-pki-entitlement", no_log=False),
        dockerfile=dict(type="str"),
        git_uri=dict(type="str"),
        git_ref=dict(type="str"),
        context_dir=dict(type="str"),
        build_args=dict(type="dict", default={}),
        registry=dict(type="str", default="nvcr.io/nvidia"),
        precompiled_image=dict(type="str", default="driver"),
        prune_stale=dict(type="bool", default=False),
    )


MUTUALLY_EXCLUSIVE = [("dockerfile", "git_uri")]
REQUIRED_BY = {"git_ref": "git_uri", "context_dir": "git_uri", "os_release": "kernel_versions"}


def check_params(params):
    """The module's checks beyond its argument spec, for its options given to another module (k8s_ensure's
    follower): the exclusive options and those that need another, as AnsibleModule checks them, then
    :func:`validate_params`."""
    given = dict((key, value) for key, value in params.items() if value is not None)
    try:
        check_mutually_exclusive(MUTUALLY_EXCLUSIVE, given)
        check_required_by(REQUIRED_BY, given)
    except TypeError as exc:
        raise GpuopsError(to_text(exc))
    validate_params(params)
