# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import os

from ansible_collections.gpuops.cluster.plugins.module_utils import catalog

# The sourced fact table (a verbatim copy of shared/data/gpu-instance-types.csv,
# see tests/localcluster/simopenshift/data/SOURCES.md).
CSV = os.environ.get(
    "GPUOPS_INSTANCE_TYPES_CSV",
    os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "localcluster", "simopenshift", "data", "instance-types.csv"
    ),
)


def test_lookup_known_and_unknown():
    entry = catalog.lookup("aws", "g4dn.xlarge")
    assert entry == {
        "provider": "aws",
        "instance_type": "g4dn.xlarge",
        "gpu_count": 1,
        "gpu_model": "Tesla-T4",
        "gpu_memory_mib": 16384,
        "vcpu": 4,
        "memory_mib": 16384,
    }
    entry["gpu_count"] = 99  # a copy
    assert catalog.lookup("aws", "g4dn.xlarge")["gpu_count"] == 1
    assert catalog.lookup("aws", "nope") is None
    assert catalog.lookup("gcp", "g4dn.xlarge") is None
    assert catalog.lookup("aws", None) is None


def test_azure_names_case_insensitive():
    assert catalog.lookup("azure", "STANDARD_NC6S_V3")["instance_type"] == "Standard_NC6s_v3"


def test_has_gpu():
    assert catalog.has_gpu("aws", "p3.2xlarge") is True
    assert catalog.has_gpu("aws", "m5.2xlarge") is False
    assert catalog.has_gpu("aws", "x9.huge") is None


def test_every_gpu_row_is_complete():
    for entry in catalog.CATALOG.values():
        assert entry["provider"] in catalog.PROVIDERS
        if entry["gpu_count"]:
            assert entry["gpu_model"] and entry["gpu_memory_mib"] > 0
        else:
            assert entry["gpu_model"] is None and entry["gpu_memory_mib"] == 0
        assert entry["vcpu"] > 0 and entry["memory_mib"] > 0


def test_suggest():
    assert catalog.suggest("aws", "p3.2xlarg")[0] == "p3.2xlarge"
    assert catalog.suggest("gcp", "zzz") == catalog.gpu_instance_types("gcp")[:5]
    assert "m5.2xlarge" not in catalog.gpu_instance_types("aws")


def test_catalog_matches_source_csv():
    with open(CSV) as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(catalog.CATALOG)
    for row in rows:
        entry = catalog.lookup(row["provider"], row["instance_type"])
        assert entry is not None, row["instance_type"]
        assert entry["gpu_count"] == int(row["gpu_count"])
        assert (entry["gpu_model"] or "") == row["gpu_model"]
        assert entry["gpu_memory_mib"] == int(row["gpu_memory_mib_per_gpu"])
        assert entry["vcpu"] == int(row["vcpu"]) and entry["memory_mib"] == int(row["memory_mib"])
