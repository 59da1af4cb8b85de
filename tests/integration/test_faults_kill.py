# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""ansible-playbook killed (SIGKILL, with its workers) in the middle of each state of site.yml.

As test_faults_apiserver.py, the run cut by a SIGKILL of its whole process group (a lost controller node, a
cancelled AWX job's container): no rescue runs, nothing is said. The next run passes that state, the last one
converges, and the cluster is then as after a converge without faults.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from faults import fault_chain

pytestmark = pytest.mark.integration


def test_run_killed_in_each_state(cluster, _shared_main, tmp_path):
    if cluster.profile != "openshift":
        pytest.skip("every state writes on the openshift profile")
    fault_chain("kill", cluster, _shared_main, tmp_path)
