# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""ansible-playbook killed (SIGKILL, with its workers) in the middle of each state of site.yml.

As test_faults_apiserver.py, the run cut by a SIGKILL of every process of the run: ansible-playbook, its workers
(which leave its process group) and the modules they run (under Mitogen, which this file uses, its multiplexer and
its contexts), as a lost controller node or a cancelled AWX job's container takes them (faults.kill_tree). No rescue
runs, nothing is said. The next run passes that state, the last one converges, and the cluster is then as after a
converge without faults.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys
import time

import pytest
from faults import alive, fault_chain, kill_tree

pytestmark = pytest.mark.integration
# Mitogen (conftest.engine_of): the kill takes every process of the run whatever the engine (kill_tree); what this
# chain proves is the next run's repair of the cluster, which the engine does not change. README, Test suite.
ANSIBLE_ENGINE = "mitogen"


def test_run_killed_in_each_state(cluster, _shared_main, tmp_path):
    if cluster.profile != "openshift":
        pytest.skip("every state writes on the openshift profile")
    fault_chain("kill", cluster, _shared_main, tmp_path)


def test_the_kill_takes_the_processes_that_left_the_process_group(tmp_path):
    """As ansible-core's workers do (setsid in WorkerProcess._detach): a child in a session of its own, with a child
    of its own, survives a signal to the run's process group; kill_tree takes all three."""
    pids = os.path.join(str(tmp_path), "pids")
    script = (
        "import os, subprocess, sys, time\n"
        "worker = subprocess.Popen([sys.executable, '-c', 'import subprocess, time; "
        'p = subprocess.Popen(["sleep", "60"]); print(p.pid, flush=True); time.sleep(60)\'], '
        "start_new_session=True, stdout=subprocess.PIPE)\n"
        "module = worker.stdout.readline().strip().decode()\n"
        "open(sys.argv[1], 'w').write('%d %s' % (worker.pid, module))\n"
        "time.sleep(60)\n"
    )
    run = subprocess.Popen([sys.executable, "-c", script, pids], start_new_session=True)
    try:
        deadline = time.time() + 20
        while not (os.path.exists(pids) and len(open(pids).read().split()) == 2) and time.time() < deadline:
            time.sleep(0.05)
        worker, module = (int(p) for p in open(pids).read().split())
        assert os.getpgid(worker) != os.getpgid(run.pid)  # out of the group a killpg would reach
        assert kill_tree(run.pid) == []
        run.wait(10)
        assert not alive(worker) and not alive(module)
    finally:
        if run.poll() is None:
            run.kill()
