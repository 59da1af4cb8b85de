# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: what the Builds and the ImageStream say (pure).

Build numbers and phases, the per-kernel decision (current / wait for a
running build / start one), image references from the ImageStream status,
stale BuildConfigs and the wording of build failures.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.render import (
    BC_NAME_KEY,
    BUILD_NUMBER_KEY,
    HASH_KEY,
    KERNEL_KEY,
)

ACTIVE_PHASES = ("New", "Pending", "Running")
FAILED_PHASES = ("Failed", "Error", "Cancelled")
DEFAULT_INTERNAL_REGISTRY = "image-registry.openshift-image-registry.svc:5000"


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


def _current(tag_present, same_tag, complete, desired_hash, bc_hash):
    """('current', build, why) when the image in the tag was built from the desired inputs, else None."""
    if not tag_present:
        return None
    if complete and build_hash(complete[0]) == desired_hash:
        return "current", complete[0], "image built by {0} with these inputs".format(complete[0]["metadata"]["name"])
    if not same_tag and bc_hash == desired_hash:
        return "current", None, "image present; build history pruned"
    return None


def _why_build(tag_present, same_tag, complete, desired_hash, tag):
    if not tag_present:
        why = "image tag {0} missing".format(tag)
    elif complete:
        why = "inputs changed since {0}".format(complete[0]["metadata"]["name"])
    else:
        why = "image present but no record of the inputs it was built with"
    failed = [b for b in same_tag if build_phase(b) in FAILED_PHASES and build_hash(b) == desired_hash]
    if failed and (not complete or build_number(failed[0]) > build_number(complete[0])):
        why += "; retrying after {0} {1}".format(failed[0]["metadata"]["name"], build_phase(failed[0]))
    return why


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
    current = _current(tag_present, same_tag, complete, desired_hash, bc_hash)
    if current:
        return current
    return "build", None, _why_build(tag_present, same_tag, complete, desired_hash, tag)


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
        repo = "{0}/{1}/{2}".format(DEFAULT_INTERNAL_REGISTRY, cfg.namespace, cfg.name)
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


def active_text(build):
    """'<name> (New: InvalidImageReference: Referenced image could not be resolved.)'."""
    status = build.get("status") or {}
    detail = ": ".join(x for x in (build_phase(build), status.get("reason"), status.get("message")) if x)
    return "{0} ({1})".format((build.get("metadata") or {}).get("name"), detail)


def build_summary(build):
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
