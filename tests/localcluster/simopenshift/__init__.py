# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Simulated OpenShift 4 layer for the local test cluster (see tests/localcluster/README.md).

Import name ``simopenshift`` with tests/localcluster on sys.path:

* ``simopenshift.install.install(api_client)``: CRDs + seed objects;
* ``python -m simopenshift.controllers --kubeconfig K --profile openshift|kubernetes --workdir D``:
  the simulated controllers (one process);
* ``simopenshift.control``: test levers (kernel upgrade, broken node).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
