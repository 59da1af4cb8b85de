# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""OLM helpers without I/O: a custom resource from a ClusterServiceVersion's ``alm-examples``.

An operator's CSV carries example custom resources in its ``alm-examples``
annotation (a JSON list). The order is not a contract: the Red Hat NFD operator
lists its NodeFeatureDiscovery first up to OpenShift 4.18 and after a
NodeFeatureRule from 4.19 on, so the example is chosen by kind (and, when
asked, by API group), never by index.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json


class AlmExampleError(ValueError):
    """The annotation cannot give the requested example."""


def parse_alm_examples(alm_examples):
    """The examples as a list of dicts, from the annotation's JSON text or an already parsed list."""
    if alm_examples is None or alm_examples == "":
        raise AlmExampleError("the CSV has no alm-examples annotation")
    data = alm_examples
    if isinstance(alm_examples, (str, bytes)):
        try:
            data = json.loads(alm_examples)
        except ValueError as exc:
            raise AlmExampleError("alm-examples is not valid JSON: {0}".format(exc))
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise AlmExampleError("alm-examples must be a JSON list of objects, not {0}".format(type(data).__name__))
    return data


def example_kinds(alm_examples):
    """The kinds the examples list, in their order."""
    return [str(item.get("kind")) for item in parse_alm_examples(alm_examples)]


def _group_of(api_version):
    return api_version.rsplit("/", 1)[0] if "/" in (api_version or "") else ""


def deep_merge(base, overrides):
    """``overrides`` merged into a copy of ``base``: dictionaries recursively, anything else replaced.

    A ``None`` value in ``overrides`` removes the key (so an example's field can be dropped).
    """
    result = copy.deepcopy(base)
    for key, value in (overrides or {}).items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def alm_example(alm_examples, kind, overrides=None, namespace=None, api_group=None):
    """The example of ``kind`` (and ``api_group`` when given), with ``overrides`` deep-merged.

    ``namespace`` (when given) is set last, so the object lands where the operator
    watches whatever the example or the overrides say. Raises AlmExampleError when
    no example, or more than one, has that kind.
    """
    if overrides is not None and not isinstance(overrides, dict):
        raise AlmExampleError("overrides must be a dictionary, not {0}".format(type(overrides).__name__))
    examples = parse_alm_examples(alm_examples)
    matches = [
        item
        for item in examples
        if item.get("kind") == kind and (api_group is None or _group_of(item.get("apiVersion")) == api_group)
    ]
    wanted = kind if api_group is None else "{0} ({1})".format(kind, api_group)
    if not matches:
        listed = ", ".join("{0} ({1})".format(i.get("kind"), i.get("apiVersion")) for i in examples) or "nothing"
        raise AlmExampleError("alm-examples has no {0}; it lists {1}".format(wanted, listed))
    if len(matches) > 1:
        raise AlmExampleError("alm-examples has {0} examples of {1}; pass api_group".format(len(matches), wanted))
    result = deep_merge(matches[0], overrides)
    result.setdefault("metadata", {})
    if not isinstance(result["metadata"], dict):
        raise AlmExampleError("the {0} example's metadata is not a dictionary".format(wanted))
    if namespace:
        result["metadata"]["namespace"] = namespace
    for field in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
        result["metadata"].pop(field, None)
    result.pop("status", None)
    return result
