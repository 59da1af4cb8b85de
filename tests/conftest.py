# -*- coding: utf-8 -*-
"""Make the repository importable as ansible_collections.gpuops.cluster.

The collection is symlinked into .build/ansible_collections/gpuops/cluster, the
same layout ansible-test and ansible-playbook use, so unit tests import module
code exactly as Ansible does. tests/ goes on sys.path for the `localcluster`
test-bed package.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, ".build")
LINK = os.path.join(BUILD, "ansible_collections", "gpuops", "cluster")

if not os.path.lexists(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(ROOT, LINK)

for path in (BUILD, os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "localcluster")):
    if path not in sys.path:
        sys.path.insert(0, path)

# ansible_collections is a namespace package spread over site-packages
# (kubernetes.core from the ansible package) and .build (this collection).
import ansible_collections  # noqa: E402

if BUILD + "/ansible_collections" not in list(ansible_collections.__path__):
    ansible_collections.__path__.append(os.path.join(BUILD, "ansible_collections"))
