# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""One run of site.yml over several clusters (one inventory host each): the table of how each cluster ended (pure)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

COLUMNS = ("cluster", "platform", "result", "states", "GPU nodes", "seconds", "reports")


def _stamp(value):
    if not value:
        return None
    try:
        return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
    except (TypeError, ValueError):
        raise GpuopsError("fleet_summary: '{0}' is not a time of the run (YYYY-MM-DDTHH:MM:SS.ffffffZ)".format(value))


def platform_text(platform):
    """'OpenShift 4.19.3' / 'Kubernetes v1.33.1' / '?' (preflight did not get that far)."""
    platform = platform or {}
    if platform.get("openshift"):
        return "OpenShift {0}".format(platform.get("openshift_version") or "?")
    if platform.get("kubernetes_version"):
        return "Kubernetes {0}".format(platform["kubernetes_version"])
    return "?"


def row(result):
    """One cluster's row from what site.yml kept of its run (the gpuops_run_result fact)."""
    if not isinstance(result, dict) or not result.get("cluster"):
        raise GpuopsError("fleet_summary: every item needs 'cluster' (the inventory host); got {0!r}".format(result))
    failed = result.get("failed_state")
    ran, skipped = result.get("done_states") or [], result.get("skipped_states") or []
    summary = result.get("validation") or {}
    gpu = "-"
    if summary.get("nodes") is not None:
        gpu = "{0}/{1} passed".format(summary.get("passed", 0), summary["nodes"])
    start, end = _stamp(result.get("started")), _stamp(result.get("ended"))
    seconds = round((end - start).total_seconds(), 1) if start and end else None
    return {
        "cluster": result["cluster"],
        "platform": platform_text(result.get("platform")),
        "result": "FAILED in {0}".format(failed) if failed else "converged",
        "failed": bool(failed),
        "failed_state": failed,
        "states": "{0} ran, {1} skipped by the ledger".format(
            len(ran) - len([s for s in ran if s in skipped]), len(skipped)
        ),
        "GPU nodes": gpu,
        "seconds": seconds,
        "reports": result.get("reports") or "-",
    }


def _line(values, widths):
    return "  ".join(v.ljust(widths[i]) for i, v in enumerate(values)).rstrip()


def summary(results):
    """{rows, table (lines), failed (cluster -> state), converged (clusters)} of every cluster of the play."""
    rows = [row(r) for r in results or []]
    cells = [[str(r[c]) if r[c] is not None else "-" for c in COLUMNS] for r in rows]
    widths = [max([len(c)] + [len(line[i]) for line in cells]) for i, c in enumerate(COLUMNS)]
    table = [_line(COLUMNS, widths), _line(["-" * w for w in widths], widths)] + [_line(c, widths) for c in cells]
    failed = dict((r["cluster"], r["failed_state"]) for r in rows if r["failed"])
    converged = [r["cluster"] for r in rows if not r["failed"]]
    words = "{0} cluster(s): {1} converged, {2} failed".format(len(rows), len(converged), len(failed))
    if failed:
        words += " (" + ", ".join("{0} in {1}".format(c, s) for c, s in sorted(failed.items())) + ")"
    return {"rows": rows, "table": table + [words], "failed": failed, "converged": converged}
