# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What an OpenShift release puts on its nodes, and what NVIDIA supports on it (pure data and look-ups).

Embedded as Python because module_utils travel inside the AnsiballZ payload. Each row pairs a release with the
RHCOS build it ships (os-release ``OSTREE_VERSION``) and that build's kernel (``uname -r``, NFD's
``kernel-version.full``), from public records: the RHCOS version map of redhat-best-practices-for-k8s/certsuite
(``tests/platform/operatingsystem/files/rhcos_version_map``), openshift/cincinnati-graph-data and
openshift/installer pull requests, NVIDIA/gpu-operator issues and precompiled driver tags. Only releases whose
build and kernel are both on record are listed; for any other, the caller gives them (``releases``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# version, RHCOS build, kernel, RHEL minor, source
_ROWS = (
    ("4.6.4", "46.82.202011061621-0", "4.18.0-193.29.1.el8_2.x86_64", "8.2", "certsuite map; NVIDIA/gpu-operator#110"),
    ("4.9.21", "49.84.202202081504-0", "4.18.0-305.34.2.el8_4.x86_64", "8.4", "tektutor/openshift-tekton-feb-2022"),
    ("4.12.13", "412.86.202304070758-0", "4.18.0-372.51.1.el8_6.x86_64", "8.6", "certsuite map"),
    ("4.13.42", "413.92.202405132113-0", "5.14.0-284.66.1.el9_2.x86_64", "9.2", "cincinnati-graph-data#5265"),
    ("4.16.0", "416.94.202406172220-0", "5.14.0-427.22.1.el9_4.x86_64", "9.4", "certsuite map; DOCA -rhcos4.16 tag"),
    ("4.17.0", "417.94.202409121747-0", "5.14.0-427.50.1.el9_4.x86_64", "9.4", "certsuite map; driver-toolkit#163"),
)
RELEASES = dict((v, {"version": v, "rhcos_build": b, "kernel": k, "rhel": r, "source": s}) for v, b, k, r, s in _ROWS)

# OpenShift minor -> Kubernetes minor (each release's notes: "OpenShift Container Platform 4.x is based on
# Kubernetes 1.y"): 4.x runs Kubernetes 1.(x + 13) from 4.3 (1.16) on.
K8S_OFFSET = 13
K8S_FROM = 3
# GPU Operator v26.7.0's operand versions (the roles' defaults): its certified CSV's OpenShift range.
OPERANDS_RELEASE = "GPU Operator v26.7.0"
OPERANDS_OPENSHIFT = ("4.18", "4.22")
# NVIDIA's OpenShift notes (cloud-native-docs openshift/steps-overview): releases not to use with GPUs.
BAD_RELEASES = {
    "4.18.22": "crun issue: NVIDIA asks not to use 4.18.22 or 4.18.23 with GPUs; use 4.18.24 or later",
    "4.18.23": "crun issue: NVIDIA asks not to use 4.18.22 or 4.18.23 with GPUs; use 4.18.24 or later",
}


def minor_of(version):
    match = re.match(r"^(\d+)\.(\d+)", str(version or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


def kubernetes_minor(version):
    """The Kubernetes minor of an OpenShift version ('4.17.0' -> (1, 30)), or None before 4.3."""
    minor = minor_of(version)
    if not minor or minor[0] != 4 or minor[1] < K8S_FROM:
        return None
    return 1, minor[1] + K8S_OFFSET


def os_release(row):
    """The os-release fields NFD labels a node of that release with: ID=rhcos and VERSION_ID=<OpenShift minor>
    up to 4.18, ID=rhel and VERSION_ID=<RHEL minor> from 4.19 (RHCOS split into layers)."""
    major_minor = "{0}.{1}".format(*minor_of(row["version"]))
    layered = minor_of(row["version"]) >= (4, 19)
    return {
        "ID": "rhel" if layered else "rhcos",
        "VERSION_ID": row["rhel"] if layered else major_minor,
        "OSTREE_VERSION": row["rhcos_build"],
        "RHEL_VERSION": row["rhel"],
        "OPENSHIFT_VERSION": major_minor,
    }


def lookup(version, extra=None):
    """The row of an OpenShift version: the caller's (``extra``, a list of dicts) first, then the table."""
    for row in extra or []:
        if str(row.get("version")) == str(version):
            return dict(row, source=row.get("source") or "given")
    return RELEASES.get(str(version))


def operands_supported(version):
    """(supported, words) for the roles' operand versions on an OpenShift version."""
    low, high = (minor_of(v) for v in OPERANDS_OPENSHIFT)
    minor = minor_of(version)
    if minor and low <= minor <= high:
        return True, "{0} operands: supported on {1}".format(OPERANDS_RELEASE, ".".join(map(str, minor)))
    return False, "{0} operands are certified for OpenShift {1}-{2}, not {3}".format(
        OPERANDS_RELEASE, OPERANDS_OPENSHIFT[0], OPERANDS_OPENSHIFT[1], version
    )
