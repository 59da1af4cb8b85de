# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Where the oracle programs are (tests/oracles/build.sh --locate): a missing one fails the test, never skips it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "build.sh")


def oracle(name, build=False):
    """The path of oracle program ``name``; the test fails (pytest.fail) when it is not built.

    ``build=True`` builds it first when missing, or waits under its lock for a build in progress (`make test` builds
    the oracle programs beside the integration tests, one of which needs helm).
    """
    args = [name] if build else ["--locate", name]
    proc = subprocess.run(
        ["bash", BUILD] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False
    )
    paths = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    path = paths.get(name)
    if path is None or not os.access(path, os.X_OK):
        pytest.fail(
            "oracle program %s is not built (%s): run `make binaries` (tests/oracles/build.sh builds it from the Go "
            "module proxy). %s" % (name, path, proc.stderr.strip())
        )
    return path
