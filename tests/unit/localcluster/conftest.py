# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Put tests/localcluster on sys.path: the simulation imports itself as ``simopenshift``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "localcluster")
if HERE not in sys.path:
    sys.path.insert(0, HERE)
