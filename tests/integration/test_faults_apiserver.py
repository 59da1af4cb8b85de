# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The API server stopped in the middle of each state of site.yml, and started again.

On OpenShift with every state writing (entitlement mode, the GPU taint): each run is cut in one state, at the
first write of one of its tasks (faults.CUTS), by a SIGKILL of kube-apiserver, which comes back once the run has
ended. The run must fail naming the state and the cause; the next run passes that state; the last one converges.
Then nothing is duplicated or left half-written: every state re-checked writes nothing, and the cluster is the
same, object for object (faults.shape), as after a converge without faults from the seed state.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from faults import fault_chain

pytestmark = pytest.mark.integration


def test_apiserver_stopped_in_each_state(cluster, _shared_main, tmp_path):
    if cluster.profile != "openshift":
        pytest.skip("every state writes on the openshift profile")
    fault_chain("apiserver", cluster, _shared_main, tmp_path)
