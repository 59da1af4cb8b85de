# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The monitoring role's alerts, read by Prometheus' own rule checker.

The rules file is rendered by Ansible from the role's one template (the one the PrometheusRule is made from), then
``promtool check rules`` and ``promtool test rules tests/monitoring/alerts.test.yml`` (one test per alert: it fires,
then clears) run on it (tests/monitoring/run_promtool.sh). promtool is built from the Go module proxy with the
oracle programs (tests/monitoring/build_promtool.sh, `make oracle-binaries`); that every alert has exactly one such
test, and reads only series that exist, is a unit test (tests/unit/roles/test_monitoring.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

RUN_PROMTOOL = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "monitoring", "run_promtool.sh"
)


def test_promtool_checks_and_tests_the_rules():
    """`promtool check rules` and `promtool test rules` (builds promtool when it is missing: see the script)."""
    proc = subprocess.run(["bash", RUN_PROMTOOL], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out[-6000:]
    assert "SUCCESS" in out, out[-3000:]
