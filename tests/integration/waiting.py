# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The one polling helper of the integration tests and benchmarks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time


def wait_until(fn, timeout=60, interval=0.3, what="condition"):
    """Poll ``fn()`` until it returns something truthy, and return that."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out after {0}s waiting for {1} (last: {2!r})".format(timeout, what, last))
