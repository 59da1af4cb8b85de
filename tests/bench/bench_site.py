# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Benchmark: the whole enablement (playbooks/site.yml), its no-op re-run and the teardown.

Two scenarios, each on its own local cluster (own work directory, started and stopped here):

* ``ocp``: the OpenShift profile, two GPU nodes (the GPU MachineSet scaled from zero to 2);
* ``k8s``: the plain Kubernetes profile with ``--gpu-nodes`` bare GPU nodes (default 100) among
  ``--nodes`` nodes (default 1,000), where NFD and the whole stack have to reach every GPU node.

Per scenario it prints the wall time of the first converge, of the no-op re-run (and the number of
mutating requests it sent, from the API server's audit log: it must be 0), of a second no-op re-run
with the ledger off (``gpuops_ledger=false``: every state runs its own no-op path; also 0 writes), of
``diagnose.yml`` on the converged cluster (every operand log read, one archive; 0 writes), and of the teardown; then
the ratios the targets are set for: the ledger-off re-run / the converge (<= 40 %, README, Benchmarks) and
k8s converge / ocp converge (<= 1.3); the converge of ocp with the default engine is to be under 90 s.
Figures are printed, not asserted; the script exits 1 only when a run fails.

Each scenario runs with ansible-core's default engine and with Mitogen's ``mitogen_linear`` strategy
(``--engine``), each on a fresh cluster.

    .venv/bin/python tests/bench/bench_site.py [--scenario ocp|k8s|all] [--engine default|mitogen|all]
                                               [--gpu-nodes 100] [--nodes 1000]
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from ansible_env import ENGINES, collection_env  # noqa: E402
from localcluster.audit import AuditLog  # noqa: E402
from localcluster.cluster import LocalCluster  # noqa: E402


def playbook(lc, name, extra_vars, engine):
    env = collection_env(lc.kubeconfig, engine=engine)
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        os.path.join(ROOT, "inventories", "local"),
        os.path.join(ROOT, "playbooks", name),
        "-e",
        json.dumps(extra_vars),
    ]
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    seconds = time.time() - t0
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        sys.stderr.write(out[-4000:] + proc.stderr.decode("utf-8", "replace")[-2000:])
        raise SystemExit("{0} failed (rc {1})".format(name, proc.returncode))
    result = json.loads(out[out.find("{") :])
    stats = result["stats"]["localhost"]
    if PROFILE_DIR:
        write_profile(name, extra_vars, result, seconds)
    return seconds, stats.get("changed", 0), len(result["plays"][0]["tasks"])


# --profile DIR: each run's tasks by wall time (from the json callback's per-task start and end), slowest first.
PROFILE_DIR = None


def _seconds(stamp):
    return time.mktime(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + stamp[19:].rstrip("Z"))


def task_times(result):
    """[(seconds, module or action, task name)] of every task the play ran (a loop counts once, all items)."""
    rows = []
    for play in result["plays"]:
        for task in play["tasks"]:
            dur = task["task"].get("duration") or {}
            if not dur.get("end"):
                continue
            hosts = task.get("hosts") or {}
            action = next((h.get("action") for h in hosts.values() if h.get("action")), "")
            skipped = all(h.get("skipped") for h in hosts.values()) if hosts else False
            rows.append((_seconds(dur["end"]) - _seconds(dur["start"]), action, task["task"]["name"], skipped))
    return rows


def write_profile(name, extra_vars, result, seconds):
    rows = task_times(result)
    tag = "{0}-{1}{2}".format(
        name.replace(".yml", ""),
        len(os.listdir(PROFILE_DIR)),
        "-ledger-off" if extra_vars.get("gpuops_ledger") is False else "",
    )
    modules = [r for r in rows if not r[3] and "." in r[1] and not r[1].startswith("ansible.builtin.")]
    lines = [
        "{0}: {1:.1f}s wall, {2} tasks ({3} skipped), {4} module tasks run taking {5:.1f}s".format(
            tag, seconds, len(rows), sum(1 for r in rows if r[3]), len(modules), sum(r[0] for r in modules)
        )
    ]
    by_action = {}
    for sec, action, _name, skipped in rows:
        n, total = by_action.get(action, (0, 0.0))
        by_action[action] = (n + 1, total + sec)
    lines.append("by action:")
    for action, (n, total) in sorted(by_action.items(), key=lambda kv: -kv[1][1]):
        lines.append("  {0:8.1f}s {1:4}x {2}".format(total, n, action))
    lines.append("slowest tasks:")
    for sec, action, tname, skipped in sorted(rows, key=lambda r: -r[0])[:60]:
        lines.append("  {0:7.2f}s {1:36} {2}".format(sec, action, tname))
    with open(os.path.join(PROFILE_DIR, tag + ".txt"), "w") as handle:
        handle.write("\n".join(lines) + "\n")


def scenario(name, engine, profile, up_kwargs, extra_vars, reports):
    label = "{0}/{1}".format(name, engine)
    lc = LocalCluster(os.path.join(ROOT, ".localcluster-bench-" + name))
    t0 = time.time()
    lc.up(profile=profile, **up_kwargs)
    print("[{0}] cluster up in {1:.0f}s ({2})".format(label, time.time() - t0, up_kwargs), flush=True)
    audit = AuditLog(lc.audit_log, lc.api_client(), user="admin")
    extra_vars = dict(extra_vars, gpuops_reports_dir=os.path.join(reports, name, engine))
    figures = {}
    try:
        figures["converge"] = playbook(lc, "site.yml", extra_vars, engine)
        print(
            "[{0}] converge  {1[0]:7.1f}s  changed={1[1]} tasks={1[2]}".format(label, figures["converge"]), flush=True
        )
        mark = audit.mark()
        figures["noop"] = playbook(lc, "site.yml", extra_vars, engine)
        figures["noop_writes"] = len(audit.writes_since(mark))
        print(
            "[{0}] no-op     {1[0]:7.1f}s  changed={1[1]} tasks={1[2]} writes={2}".format(
                label, figures["noop"], figures["noop_writes"]
            ),
            flush=True,
        )
        mark = audit.mark()
        figures["forced"] = playbook(lc, "site.yml", dict(extra_vars, gpuops_ledger=False), engine)
        figures["forced_writes"] = len(audit.writes_since(mark))
        print(
            "[{0}] no-op, every state (ledger off) {1[0]:7.1f}s  changed={1[1]} tasks={1[2]} writes={2}".format(
                label, figures["forced"], figures["forced_writes"]
            ),
            flush=True,
        )
        # diagnose.yml on the converged cluster: every GPU node's pods, logs (all of them) and events, one archive.
        mark = audit.mark()
        figures["diagnose"] = playbook(lc, "diagnose.yml", extra_vars, engine)
        figures["diagnose_writes"] = len(audit.writes_since(mark))
        print(
            "[{0}] diagnose  {1[0]:7.1f}s  tasks={1[2]} writes={2}".format(
                label, figures["diagnose"], figures["diagnose_writes"]
            ),
            flush=True,
        )
        figures["teardown"] = playbook(lc, "teardown.yml", extra_vars, engine)
        print("[{0}] teardown  {1[0]:7.1f}s  changed={1[1]}".format(label, figures["teardown"]), flush=True)
    finally:
        lc.down()
    return figures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenario", choices=["ocp", "k8s", "all"], default="all")
    p.add_argument(
        "--engine",
        choices=list(ENGINES) + ["all"],
        default="all",
        help="ansible-core's default strategy, Mitogen's mitogen_linear, or both (tests/ansible_env.py)",
    )
    p.add_argument("--gpu-nodes", type=int, default=100, help="GPU nodes of the k8s scenario")
    p.add_argument("--nodes", type=int, default=1000, help="all nodes of the k8s scenario (3 are control plane)")
    p.add_argument("--reports", default=os.path.join(ROOT, "reports", "bench"))
    p.add_argument("--profile", metavar="DIR", help="write each run's tasks by wall time to DIR/<playbook>-<n>.txt")
    args = p.parse_args()
    if args.profile:
        global PROFILE_DIR
        PROFILE_DIR = args.profile
        os.makedirs(PROFILE_DIR, exist_ok=True)
    engines = ENGINES if args.engine == "all" else (args.engine,)
    results = {}
    for engine in engines:
        if args.scenario in ("ocp", "all"):
            results[("ocp", engine)] = scenario(
                "ocp",
                engine,
                "openshift",
                {},
                {"gpu_machineset_replicas": 2},
                args.reports,
            )
        if args.scenario in ("k8s", "all"):
            workers = args.nodes - 3 - args.gpu_nodes
            results[("k8s", engine)] = scenario(
                "k8s",
                engine,
                "kubernetes",
                {"workers": workers, "gpu_nodes": args.gpu_nodes, "gpu_node_mode": "bare"},
                {"gpuops_expected_gpu_nodes": args.gpu_nodes},
                args.reports,
            )
    print("")
    print(
        "{0:<14} {1:>10} {2:>10} {3:>8} {4:>8} {5:>12} {6:>8} {7:>10} {8:>12}".format(
            "", "converge", "no-op", "writes", "no-op %", "every state", "writes", "teardown", "ledger off %"
        )
    )
    for (name, engine), fig in results.items():
        print(
            "{0:<14} {1:>9.1f}s {2:>9.1f}s {3:>8} {4:>7.0f}% {5:>11.1f}s {6:>8} {7:>9.1f}s {8:>11.0f}%".format(
                name + "/" + engine,
                fig["converge"][0],
                fig["noop"][0],
                fig["noop_writes"],
                100.0 * fig["noop"][0] / fig["converge"][0],
                fig["forced"][0],
                fig["forced_writes"],
                fig["teardown"][0],
                100.0 * fig["forced"][0] / fig["converge"][0],
            )
        )
    for engine in engines:
        if ("ocp", engine) in results and ("k8s", engine) in results:
            ratio = results[("k8s", engine)]["converge"][0] / results[("ocp", engine)]["converge"][0]
            print(
                "{0}: k8s ({1} GPU nodes) converge / ocp (2 GPU nodes) converge: {2:.2f} (target <= 1.3)".format(
                    engine, args.gpu_nodes, ratio
                )
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
