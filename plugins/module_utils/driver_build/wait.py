# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""driver_container_build: wait for the builds together and say why one failed or did not finish.

The wait is kubernetes.core's ``Waiter`` over the list of our Builds (one
request per look). A build that did not finish is explained from its pod's
Warning events before the timeout is blamed: a build pod stuck Pending on a
missing secret mount says so only there.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.kubernetes.core.plugins.module_utils.k8s.waiter import Waiter

from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.api import (
    build_log_tail,
    build_pod_name,
    build_pod_warnings,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.render import managed_selector
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build.state import (
    FAILED_PHASES,
    active_text,
    build_phase,
    describe_build_failure,
    summarize_builds,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import dig, name_of, wait_backoff

# kubelet: MountVolume.SetUp failed for volume "build-secret-0" : secret "etc-pki-entitlement" not found
MISSING_SECRET_RE = re.compile(r'secret "([^"]+)" not found')


def wait_builds(cfg, client, build_api, names, progress):
    """Look at all our builds together until each is Complete or failed, or the timeout.

    Returns (builds, failed, still active), the builds in the order of ``names``.
    """
    state = {"mine": []}

    def predicate(response):
        items = (response.to_dict().get("items") or []) if response else []
        current = dict((name_of(b), b) for b in items)
        mine = [current.get(n) or {"metadata": {"name": n}, "status": {"phase": "New"}} for n in names]
        state["mine"] = mine
        progress("builds: {0}".format(summarize_builds(mine)))
        return all(build_phase(b) in FAILED_PHASES + ("Complete",) for b in mine)

    # wait_backoff: a build can take half an hour; an API server away for a minute ends the wait, not the timeout.
    wait_backoff(
        Waiter(client, build_api, predicate),
        cfg.wait_timeout,
        cfg.wait_sleep,
        namespace=cfg.namespace,
        label_selectors=[managed_selector(cfg.name)],
    )
    mine = state["mine"]
    failed = [b for b in mine if build_phase(b) in FAILED_PHASES]
    active = [b for b in mine if build_phase(b) not in FAILED_PHASES + ("Complete",)]
    return mine, failed, active


def failed_error(client, mine, failed, **extra):
    """The error for failed builds: reason, message and the log tail of each."""
    texts = [
        describe_build_failure(b, None if dig(b, ("status", "logSnippet")) else build_log_tail(client, b))
        for b in failed
    ]
    return GpuopsError(
        "{0} of {1} driver build(s) failed:\n{2}".format(len(failed), len(mine), "\n".join(texts)), **extra
    )


def _stuck_text(build, warnings):
    text = active_text(build)
    if warnings:
        text += ": its build pod {0} reports {1}".format(
            build_pod_name(build),
            "; ".join("{0}: {1}".format(w["reason"], w["message"]) for w in warnings),
        )
    return text


def _missing_entitlement(cfg, warnings):
    """True when the build pod cannot mount the entitlement secret we configured."""
    return any(
        cfg.entitlement_secret in MISSING_SECRET_RE.findall(w.get("message") or "")
        for w in warnings
        if w.get("reason") == "FailedMount"
    )


def timeout_error(cfg, client, svc, active, **extra):
    """The error for builds that did not finish: the build pods' warnings first, then the timeout."""
    per_build = [(b, build_pod_warnings(client, svc, b)) for b in active]
    details = "; ".join(_stuck_text(b, w) for b, w in per_build)
    if any(_missing_entitlement(cfg, w) for dummy, w in per_build):
        return GpuopsError(
            "driver build(s) cannot start: {0}. The build mounts the entitlement secret {1}/{2}, which does not "
            "exist: create it (entitlement role, `oc create secret generic {2} --from-file ...`) or set "
            "entitlement_secret to the secret holding the entitlement certificate.".format(
                details, cfg.namespace, cfg.entitlement_secret
            ),
            param="entitlement_secret",
            **extra,
        )
    if any(w for dummy, w in per_build):
        advice = "Fix what the build pod's events report (`oc get events -n {0}`)".format(cfg.namespace)
    else:
        advice = "Raise wait_timeout or look at the builds"
    return GpuopsError(
        "driver build(s) not finished after {0}s: {1}. {2} (`oc describe -n {3} build/<name>`, "
        "`oc logs -n {3} build/<name>`).".format(cfg.wait_timeout, details, advice, cfg.namespace),
        param="wait_timeout",
        **extra,
    )
