# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""k8s_ensure: does the server already hold what we want? (pure functions)

The compare-before-write test (normalize.matches) is what keeps a no-op run
free of write requests: a desired field must be present with the same value;
fields the server added (defaults, status, metadata) and its own rewrites
(quantities, omitted zero values) are ignored.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.cluster.plugins.module_utils.ensure.normalize import matches
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import diff_entry, merge_patch

MASK = "VALUE_HIDDEN"


def decide(existing, desired, state):
    """The action for one object: created | updated | unchanged (present), deleted | absent (absent)."""
    if state == "absent":
        return "deleted" if existing else "absent"
    if existing is None:
        return "created"
    return "unchanged" if matches(existing, desired) else "updated"


def predicted(existing, desired):
    """What the object will look like after the write (for diffs and check mode results)."""
    if existing is None:
        return copy.deepcopy(desired)
    return merge_patch(existing, desired)


def _masked(obj):
    """Secret values never appear in a diff."""
    if not obj or obj.get("kind") != "Secret":
        return obj
    obj = copy.deepcopy(obj)
    for field in ("data", "stringData"):
        if obj.get(field):
            obj[field] = dict((k, MASK) for k in obj[field])
    return obj


def item_diff(item):
    """The diff entry of one item after ``decide`` (None when it does not change)."""
    if item.action in ("unchanged", "absent"):
        return None
    header = item.describe()
    after = {} if item.action == "deleted" else predicted(item.existing, item.body)
    return diff_entry(header, _masked(item.existing), _masked(after))
