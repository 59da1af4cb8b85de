# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Names of the GPU MachineSets: ``name`` / ``name_pattern``, collisions, and who owns a name already.

Two sources in one zone (a worker and an infra MachineSet, say) give the same
name with a pattern that only uses the zone part; a GPU MachineSet cloned
from one source is never handed to another (``check_targets``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import string

from ansible_collections.gpuops.cluster.plugins.module_utils.common import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    GpuopsError,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.kube import name_of
from ansible_collections.gpuops.cluster.plugins.module_utils.machineset.model import (
    LABEL_CLUSTER,
    LABEL_MACHINESET,
    describe,
    is_managed,
    names,
    source_of,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.validators import dns_label_problem

DEFAULT_NAME_PATTERN = "{infra}-gpu-{suffix}"
NAME_FIELDS = ("source", "infra", "role", "zone", "region", "suffix", "instance_type")
DISTINCT_PATTERN = "{infra}-gpu-{role}-{suffix}"


def name_problem(name):
    """Why ``name`` cannot name a MachineSet (it is also a label value: a DNS label), or None."""
    problem = dns_label_problem(name)
    if problem:
        return "'{0}' is not a valid MachineSet name ({1} value): {2}".format(name, LABEL_MACHINESET, problem)
    return None


def pattern_fields(pattern):
    """The placeholders used in ``pattern``; GpuopsError for unknown or malformed ones."""
    try:
        fields = [f for dummy, f, dummy2, dummy3 in string.Formatter().parse(pattern) if f is not None]
    except ValueError as exc:
        raise GpuopsError(
            "'{0}' is not a valid pattern ({1}); use placeholders like {{infra}}-gpu-{{zone}}.".format(pattern, exc),
            param="name_pattern",
        )
    bad = [f for f in fields if f not in NAME_FIELDS]
    if bad:
        raise GpuopsError(
            "unknown placeholder(s) {0} in '{1}'; use {2}.".format(
                ", ".join("{" + b + "}" for b in bad), pattern, ", ".join("{" + f + "}" for f in NAME_FIELDS)
            ),
            param="name_pattern",
        )
    return fields


def _suffix(source, infra, role, zone):
    for prefix in ("{0}-{1}-".format(infra, role), "{0}-".format(infra)):
        if infra and source.startswith(prefix) and len(source) > len(prefix):
            return source[len(prefix) :]
    return zone


def name_values(machineset, instance_type):
    """Values of the name_pattern placeholders for one source MachineSet."""
    info = describe(machineset)
    infra = info["infra"] or ""
    zone = info["zone"] or ""
    return {
        "source": info["name"],
        "infra": infra,
        "role": info["role"] or "",
        "zone": zone.lower(),
        "region": (info["region"] or "").lower(),
        "suffix": _suffix(info["name"], infra, info["role"] or "", zone),
        "instance_type": (instance_type or "").lower().replace(".", "-").replace("_", "-"),
    }


def target_name(machineset, pattern, instance_type):
    values = name_values(machineset, instance_type)
    empty = [f for f in pattern_fields(pattern) if not values[f]]
    if empty:
        raise GpuopsError(
            "MachineSet {0} has no value for {1} (infra comes from the {2} label, zone from the providerSpec); "
            "use a pattern without it or give name.".format(
                values["source"], ", ".join("{" + f + "}" for f in empty), LABEL_CLUSTER
            ),
            param="name_pattern",
        )
    return pattern.format(**values)


def _check_unique(pairs, name, pattern):
    seen = {}
    for source, target in pairs:
        if target in seen:
            raise GpuopsError(
                "'{0}' gives the same name '{1}' for {2} and {3}; put what tells them apart in the pattern: "
                "{{role}} or {{source}} (e.g. '{4}'), {{suffix}} or {{zone}}.".format(
                    pattern, target, seen[target], name_of(source), DISTINCT_PATTERN
                ),
                param="name_pattern",
            )
        seen[target] = name_of(source)
        if target == name_of(source):
            raise GpuopsError(
                "the GPU MachineSet name '{0}' equals its source's name; choose another.".format(target),
                param="name" if name else "name_pattern",
            )


def target_names(sources, name, pattern, instance_type):
    """[(source, target name)], checked for validity and collisions."""
    if name and len(sources) > 1:
        raise GpuopsError(
            "one name ('{0}') for {1} source MachineSets ({2}); use name_pattern (e.g. '{3}') to get one GPU "
            "MachineSet per source.".format(name, len(sources), names(sources), DEFAULT_NAME_PATTERN),
            param="name",
        )
    pairs = []
    for source in sources:
        target = name or target_name(source, pattern, instance_type)
        problem = name_problem(target)
        if problem:
            raise GpuopsError(
                "{0}. Choose a shorter or valid name.".format(problem), param="name" if name else "name_pattern"
            )
        pairs.append((source, target))
    _check_unique(pairs, name, pattern)
    return pairs


def check_targets(pairs, existing_by_name, name=None):
    """Refuse names taken by a MachineSet this module did not make, or made from another source.

    Without the second check, cloning an infra MachineSet after the worker of
    the same zone would patch the worker's GPU MachineSet (new source, type,
    role and replicas: running GPU machines scaled away).
    """
    param = "name" if name else "name_pattern"
    for source, target in pairs:
        current = existing_by_name.get(target)
        if current is None:
            continue
        if not is_managed(current):
            raise GpuopsError(
                "a MachineSet named '{0}' already exists and was not created by gpuops.cluster (no {1}={2} label); "
                "choose another name, or add that label to let this module manage it.".format(
                    target, MANAGED_BY_LABEL, MANAGED_BY
                ),
                param=param,
            )
        check_owner(source, target, current, param, "take it over (other source, instance type, role and replicas)")


def check_owner(source, target, current, param, would):
    """Refuse to touch a GPU MachineSet cloned from another source than ``source``."""
    owner = source_of(current)
    if owner and owner != name_of(source):
        raise GpuopsError(
            "the GPU MachineSet '{0}' was cloned from '{1}', not from '{2}'; this task would {3}. Nothing was "
            "changed. Give each source its own name with name_pattern, e.g. '{4}' or '{{source}}-gpu' "
            "(or name).".format(target, owner, name_of(source), would, DISTINCT_PATTERN),
            param=param,
        )
