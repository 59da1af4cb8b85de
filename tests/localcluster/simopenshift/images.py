# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What is inside an image, as far as the GPU node agent needs to know (pure).

A real node runs a container only if its image has the command, the libraries
and the kernel modules it needs; this module is the simulator's knowledge of
the images the GPU stack uses:

* NVIDIA's driver images ``<registry>/driver:<version>-<os>`` (runtime-compiled)
  and ``<registry>/driver:<branch>-<kernel>-<os>`` (precompiled): the
  ``nvidia-driver`` script, ``ocp_dtk_entrypoint`` (RHEL/RHCOS images), the
  userspace (libnvidia-ml, libcuda, nvidia-smi, persistenced, GSP firmware) and
  the ``.run`` installer in /drivers (NVIDIA/gpu-driver-container
  ``rhel9/Dockerfile``, ``ubuntu22.04/Dockerfile``);
* the OpenShift Driver Toolkit (the release's ``driver-toolkit`` image): kernel
  headers and build tools for one kernel, no NVIDIA script or userspace
  (openshift/driver-toolkit ``Dockerfile``);
* images the cluster built (internal registry): the Build that pushed them says
  what they hold: its final stage's base (the BuildConfig's ``strategy.from``
  replaces the last FROM) plus the kernel modules a stage compiled for the
  ``KERNEL_VERSION`` build argument, of the ``KERNEL_MODULE_TYPE`` it asked for.

Images the simulator does not know (a test's own image) return None: nothing is
judged from their contents.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from simopenshift import catalog

DRIVER_SCRIPT = "nvidia-driver"
DTK_ENTRYPOINT = "ocp_dtk_entrypoint"
OS_TAG_RE = re.compile(r"-((?:rhcos|rhel|ubuntu|rocky|centos|sles)\d+(?:\.\d+)*)$")
VERSION_RE = re.compile(r"^(\d{3})(?:\.(\d{1,3}))?(?:\.(\d{1,3}))?")


class Contents(object):
    """What an image holds: executables, NVIDIA userspace, kernel modules per kernel, the driver version."""

    def __init__(self, kind, executables=(), userspace=False, modules=None, compiles=False, driver=None, os_tag=None):
        self.kind = kind
        self.executables = set(executables)
        self.userspace = userspace
        # {kernel: "open" | "proprietary" | "auto"}; "auto": a precompiled package of both kinds
        self.modules = dict(modules or {})
        # nvidia-driver init can compile the modules on the node (the .run and the build tools are there)
        self.compiles = compiles
        self.driver = driver
        self.os_tag = os_tag

    def __repr__(self):
        return "Contents(%s, exe=%s, modules=%s)" % (self.kind, sorted(self.executables), self.modules)


def split_ref(image):
    """(repository, tag or None, digest or None)."""
    image = image or ""
    digest = None
    if "@" in image:
        image, digest = image.split("@", 1)
    tail = image.rsplit("/", 1)[-1]
    if ":" in tail:
        repo, tag = image.rsplit(":", 1)
        return repo, tag, digest
    return image, None, digest


def is_driver_toolkit(image):
    """The release's Driver Toolkit (payload pull spec) or its ImageStream in the internal registry."""
    repo, _tag, _digest = split_ref(image)
    return repo.endswith("/driver-toolkit") or "ocp-v4.0-art-dev" in repo or repo == "driver-toolkit"


def dtk_kernel(pullspec):
    """Kernel of a Driver Toolkit image (release pull spec or ``.../driver-toolkit:<RHCOS build>``), or None."""
    pullspec = pullspec or ""
    for build_ in catalog.rhcos_builds().values():
        if pullspec == catalog.dtk_image(build_.build):
            return build_.kernel
    if "driver-toolkit:" in pullspec:
        known = catalog.rhcos_build(pullspec.rsplit(":", 1)[1])
        return known.kernel if known else None
    return None


def driver_image(image):
    """Contents of NVIDIA's driver image ``.../driver:<tag>``, or None when ``image`` is not one."""
    repo, tag, _digest = split_ref(image)
    if not repo.endswith("/driver") or not tag:
        return None
    os_match = OS_TAG_RE.search(tag)
    version = VERSION_RE.match(tag)
    if not os_match or not version:
        return None
    os_tag = os_match.group(1)
    middle = tag[version.end() : os_match.start()].lstrip("-")
    exe = {DRIVER_SCRIPT} | ({DTK_ENTRYPOINT} if os_tag.startswith(("rhel", "rhcos")) else set())
    driver = ".".join(g for g in version.groups() if g)
    if middle:
        # precompiled: <branch>-<kernel>-<os>: the packages of that kernel, both module types
        return Contents("precompiled", exe, True, {middle: "auto"}, False, driver, os_tag)
    return Contents("driver", exe, True, {}, True, driver, os_tag)


def public(image):
    """Contents of an image pulled from a registry, or None when the simulator does not know it."""
    if is_driver_toolkit(image):
        return Contents("driver-toolkit", ("bash", "make", "gcc", "modprobe"))
    return driver_image(image)


def build_arg(build, name):
    strategy = ((build.get("spec") or {}).get("strategy") or {}).get("dockerStrategy") or {}
    for arg in strategy.get("buildArgs") or []:
        if arg.get("name") == name:
            return arg.get("value")
    return None


def built(build):
    """Contents of the image a Build pushed: its final base plus the modules it compiled.

    The final base is the BuildConfig's ``strategy.from`` (OpenShift replaces the Dockerfile's last FROM with
    it). Modules: a Dockerfile that copies a compile stage's modules into ``/lib/modules/${KERNEL_VERSION}``
    carries them; a single-stage build FROM the Driver Toolkit that runs nvidia-installer keeps them in its own
    /lib/modules but is still only the toolkit (no nvidia-driver, no userspace).
    """
    strategy = ((build.get("spec") or {}).get("strategy") or {}).get("dockerStrategy") or {}
    base_ref = (strategy.get("from") or {}).get("name") or ""
    kind = (strategy.get("from") or {}).get("kind")
    base = public(base_ref) if kind == "DockerImage" else None
    if base is None and kind in ("ImageStreamTag", "ImageStreamImage") and "driver-toolkit" in base_ref:
        base = public("driver-toolkit")
    if base is None:
        return None
    dockerfile = ((build.get("spec") or {}).get("source") or {}).get("dockerfile") or ""
    kernel = build_arg(build, "KERNEL_VERSION")
    module_type = build_arg(build, "KERNEL_MODULE_TYPE")
    contents = Contents(base.kind, base.executables, base.userspace, base.modules, base.compiles, base.driver)
    contents.os_tag = base.os_tag
    compiled = "nvidia-installer" in dockerfile and kernel
    if compiled and ("/lib/modules/${KERNEL_VERSION}" in dockerfile or base.kind == "driver-toolkit"):
        # nvidia-installer without a type picks from the GPUs of the build pod's node; builds run on
        # GPU-less workers, where it can only choose proprietary (nvidia-installer kernel.c).
        contents.modules[kernel] = module_type if module_type in ("open", "proprietary") else "proprietary"
        contents.kind = "built"
    return contents
