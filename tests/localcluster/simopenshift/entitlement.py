# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What an entitlement test pod prints: ``dnf search kernel-devel`` in a UBI container.

On OpenShift, CRI-O mounts the host's /etc/pki/entitlement (and /etc/rhsm)
into every container (``/usr/share/containers/mounts.conf``). With the
entitlement certificate there, dnf in a UBI image reaches the RHEL BaseOS and
AppStream repositories and finds ``kernel-devel``; without it only the UBI
repositories answer, which do not carry ``kernel-devel``, and dnf exits 1.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

REPO_LINE = "%-58s %8s | %6s     00:0%d"
# Packages of the RHEL BaseOS/AppStream repositories a driver build installs (besides kernel-*).
RHEL_PACKAGES = ("elfutils-libelf-devel", "gcc", "make", "kmod", "binutils")


def search_term(pod):
    """The package the pod searches for (``dnf search X``/``yum search X``), default kernel-devel."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        words = " ".join((container.get("command") or []) + (container.get("args") or [])).split()
        for index, word in enumerate(words[:-1]):
            if word.endswith(("dnf", "yum", "microdnf")) and words[index + 1] in ("search", "list", "install"):
                rest = [w for w in words[index + 2 :] if not w.startswith("-")]
                if rest:
                    return rest[0].strip("'\";|&")
    return "kernel-devel"


def rhel_major(kernel):
    match = re.search(r"\.el(\d+)", kernel or "")
    return match.group(1) if match else "9"


def _repos(major, entitled):
    lines = ["Updating Subscription Management repositories."]
    if entitled:
        lines += [
            REPO_LINE % ("Red Hat Enterprise Linux %s for x86_64 - BaseOS (RPMs)" % major, "41 MB/s", "52 MB", 1),
            REPO_LINE % ("Red Hat Enterprise Linux %s for x86_64 - AppStream (RPMs)" % major, "38 MB/s", "46 MB", 1),
        ]
    else:
        lines += [
            "Unable to read consumer identity",
            "This system is not registered with an entitlement server. You can use subscription-manager to register.",
        ]
    lines += [
        REPO_LINE % ("Red Hat Universal Base Image %s (RPMs) - BaseOS" % major, "2.9 MB/s", "519 kB", 0),
        REPO_LINE % ("Red Hat Universal Base Image %s (RPMs) - AppStream" % major, "9.1 MB/s", "2.2 MB", 0),
        REPO_LINE % ("Red Hat Universal Base Image %s (RPMs) - CodeReady Builder" % major, "1.1 MB/s", "280 kB", 0),
    ]
    return lines


def dnf_output(term, kernel, entitled):
    """(exit code, log text) of ``dnf search <term> --showduplicates`` on a node with/without entitlement."""
    major = rhel_major(kernel)
    lines = _repos(major, entitled)
    if not entitled or not (term.startswith("kernel") or term in RHEL_PACKAGES):
        return 1, "\n".join(lines + ["No matches found."]) + "\n"
    lines.append(("=" * 25) + " Name Exactly Matched: %s " % term + ("=" * 25))
    release = kernel if kernel and re.match(r"^\d+\.\d+\.\d+-", kernel) else "5.14.0-427.22.1.el9_4.x86_64"
    base, _sep, _arch = release.rpartition(".")
    older = re.sub(r"-(\d+)\.", lambda m: "-%d." % max(int(m.group(1)) - 5, 1), base, count=1)
    for version in (older, base):
        lines.append(
            "%s-%s.x86_64 : Development package for building kernel modules to match the kernel" % (term, version)
        )
    return 0, "\n".join(lines) + "\n"
