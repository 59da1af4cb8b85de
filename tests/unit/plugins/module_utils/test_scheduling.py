"""The scheduling role's decisions (module_utils/scheduling.py): inputs, node roles, conflicts, probes, summary."""

from ansible_collections.gpuops.cluster.plugins.module_utils import scheduling as s

BASE = {
    "scheduling_taint": True,
    "scheduling_taint_key": "nvidia.com/gpu",
    "scheduling_taint_value": "",
    "scheduling_taint_effect": "NoSchedule",
    "scheduling_node_role_label": "gpuops.cluster/gpu-role",
    "scheduling_node_role_kubernetes_label": False,
    "scheduling_gpu_resource": "nvidia.com/gpu",
    "scheduling_object_name": "gpuops-gpu",
    "scheduling_verify_image": "registry.k8s.io/pause:3.10",
    "scheduling_node_roles": [],
    "scheduling_priority_classes": [],
    "scheduling_quotas": [],
}
GPUS = [{"name": n, "gpu": True} for n in ("gpu-2", "gpu-0", "gpu-1")] + [{"name": "cpu-0", "gpu": False}]


def v(**kw):
    return dict(BASE, **kw)


def labelled(name, role):
    return {"metadata": {"name": name, "labels": {"gpuops.cluster/gpu-role": role}}}


def pc(name, value, owner="scheduling", **kw):
    return dict({"metadata": {"name": name, "labels": {"gpuops.cluster/owner": owner}}, "value": value}, **kw)


def test_good_inputs_have_no_problem_and_each_bad_one_is_named():
    assert s.input_problems(v()) == []
    cases = [
        (v(scheduling_taint="maybe"), "scheduling_taint (gpuops_gpu_taint) must be true or false, got 'maybe'."),
        (v(scheduling_taint_key="nvidia.com/"), "scheduling_taint_key must be a qualified name"),
        (v(scheduling_gpu_resource="gpu"), "scheduling_gpu_resource must be an extended resource name"),
        (
            v(scheduling_node_roles={"a": 1}),
            'scheduling_node_roles must be a list of {name, nodes} or {name, count}, got {"a": 1}.',
        ),
        (
            v(scheduling_node_roles=[{"name": "Training", "count": 1}]),
            "scheduling_node_roles[0].name must be a lowercase DNS label",
        ),
        (v(scheduling_node_roles=[{"name": "a"}]), "scheduling_node_roles[0] (a) needs exactly one of nodes"),
        (
            v(scheduling_node_roles=[{"name": "a", "count": "x"}]),
            "scheduling_node_roles[0].count must be an integer >= 0, got 'x'.",
        ),
        (
            v(scheduling_node_roles=[{"name": "a", "count": 1}, {"name": "a", "count": 1}]),
            "names each role once; listed twice: a.",
        ),
        (
            v(scheduling_node_roles=[{"name": "a", "nodes": ["n"]}, {"name": "b", "nodes": ["n"]}]),
            "gives node(s) n more than one role",
        ),
        (v(scheduling_priority_classes=[{"name": "system-x", "value": 1}]), "the system- prefix is reserved"),
        (
            v(scheduling_priority_classes=[{"name": "hi", "value": 2000000000}]),
            "scheduling_priority_classes[0].value (hi) must be an integer <= 1000000000",
        ),
        (
            v(scheduling_priority_classes=[{"name": "hi", "value": 1, "preemptionPolicy": "Always"}]),
            "preemptionPolicy (hi) must be one of",
        ),
        (
            v(
                scheduling_priority_classes=[
                    {"name": "a", "value": 1, "globalDefault": True},
                    {"name": "b", "value": 1, "globalDefault": "yes"},
                ]
            ),
            "at most one class can be globalDefault",
        ),
        (
            v(scheduling_quotas=[{"namespace": "t", "gpus": "2Gi"}]),
            "scheduling_quotas[0].gpus (t) must be an integer >= 0 (the quota on requests.nvidia.com/gpu)",
        ),
        (
            v(scheduling_quotas=[{"namespace": "t", "gpus": 2, "default_gpus": 2, "max_gpus": 1}]),
            "is above max_gpus (1) in t",
        ),
        (
            v(scheduling_quotas=[{"namespace": "t", "gpus": 1, "default_gpus": 2}]),
            "is above the quota gpus (1) in t; no defaulted pod could start.",
        ),
        (
            v(scheduling_quotas=[{"namespace": "t", "gpus": 1}, {"namespace": "t", "gpus": 1}]),
            "lists a namespace twice",
        ),
    ]
    for variables, expected in cases:
        problems = s.input_problems(variables)
        assert len(problems) == 1 and expected in problems[0], (expected, problems)


def test_roles_lists_first_then_counts_by_name_and_the_moves():
    variables = v(scheduling_node_roles=[{"name": "infer", "count": 1}, {"name": "train", "nodes": ["gpu-1"]}])
    plan = s.plan(variables, GPUS, [], [], [labelled("gpu-1", "infer"), labelled("gpu-2", "old")], "scheduling")
    assert plan["gpu_nodes"] == ["gpu-0", "gpu-1", "gpu-2"]
    assert plan["roles"] == {"gpu-1": "train", "gpu-0": "infer"}
    assert plan["by_role"] == {"infer": ["gpu-0"], "train": ["gpu-1"]}
    assert plan["stale"] == {"infer": ["gpu-1"], "old": ["gpu-2"]}
    assert plan["moves"] == {"infer": ["gpu-0"], "train": ["gpu-1"]}
    assert plan["problems"] == [] and plan["taint_text"] == "nvidia.com/gpu=:NoSchedule"


def test_conflicts_with_the_cluster():
    variables = v(
        scheduling_node_roles=[{"name": "a", "nodes": ["worker-0"]}, {"name": "b", "count": 4}],
        scheduling_priority_classes=[
            {"name": "theirs", "value": 1},
            {"name": "ours", "value": 2},
            {"name": "dflt", "value": 1, "globalDefault": True},
        ],
        scheduling_quotas=[{"namespace": "missing", "gpus": 1}],
    )
    existing = [pc("theirs", 1, owner="x"), pc("ours", 1), pc("other-default", 5, globalDefault=True)]
    problems = s.plan(variables, GPUS, ["default"], existing, [], "scheduling")["problems"]
    expected = [
        "scheduling: scheduling_quotas: namespace(s) missing do not exist",
        "scheduling: scheduling_priority_classes: PriorityClass theirs exists and was not created by this role",
        "scheduling: scheduling_priority_classes: PriorityClass ours has value 1 / PreemptLowerPriority",
        "scheduling: scheduling_priority_classes: dflt asks for globalDefault but PriorityClass other-default",
        "scheduling: scheduling_node_roles: worker-0 is not a GPU node",
        "scheduling: scheduling_node_roles: the counts ask for 4 GPU node(s) besides the listed ones, but only 3 are left",
    ]
    assert len(problems) == len(expected) and all(p.startswith(e) for p, e in zip(problems, expected)), problems


def test_machinesets_without_the_taint():
    def ms(name, taints):
        return {"metadata": {"name": name}, "spec": {"template": {"spec": {"taints": taints}}}}

    sets = [
        ms("ok", [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
        ms("valued", [{"key": "nvidia.com/gpu", "value": "x", "effect": "NoSchedule"}]),
        ms("bare", []),
    ]
    assert s.untainted_machinesets(sets, "nvidia.com/gpu", "", "NoSchedule") == ["valued", "bare"]
    assert s.untainted_machinesets(sets, "nvidia.com/gpu", "x", "NoSchedule") == ["bare"]


def test_probes_split_over_max_and_failures_are_named():
    variables = v(
        scheduling_quotas=[{"namespace": "t", "gpus": 4, "default_gpus": 1, "max_gpus": 2}],
        scheduling_priority_classes=[{"name": "hi", "value": 100}],
    )
    probes = s.probes(variables)
    assert [p["check"] for p in probes] == ["quota", "default", "priority"]
    limits = [c["resources"]["limits"]["nvidia.com/gpu"] for c in probes[0]["pod"]["spec"]["containers"]]
    assert limits == ["2", "2", "1"]
    good = [
        {"allowed": False, "status": 403, "message": "exceeded quota: gpuops-gpu"},
        {"allowed": True, "object": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}},
        {"allowed": True, "object": {"spec": {"priority": 100}}},
    ]
    assert s.probe_failures(variables, probes, good) == []
    bad = [
        {"allowed": True},
        {"allowed": True, "object": {"spec": {"containers": [{}]}}},
        {"allowed": False, "message": "no class"},
    ]
    assert s.probe_failures(variables, probes, bad) == [
        "ResourceQuota t/gpuops-gpu: a pod requesting 5 nvidia.com/gpu (quota 4) was admitted",
        "LimitRange t/gpuops-gpu: a pod without a GPU request got none, not the default 1 nvidia.com/gpu",
        "PriorityClass hi: a pod naming it got priority refused: no class, not 100",
    ]


def test_summary_lines():
    plan = s.plan(v(scheduling_node_roles=[{"name": "a", "count": 1}]), GPUS, [], [], [], "scheduling")
    plan["machinesets"] = ["ms-gpu"]
    objects = [{"kind": "PriorityClass", "namespace": None, "name": "hi", "action": "created"}]
    assert s.summary(v(), plan, ["gpu-0"], [], objects, True) == [
        "scheduling: taint nvidia.com/gpu=:NoSchedule on 3 GPU node(s), would be added on gpu-0 (GPU MachineSets ms-gpu carry it in their template)",
        "scheduling: role a: gpu-0",
        "scheduling: PriorityClass hi would be created",
    ]
    assert s.summary(v(scheduling_taint=False), dict(plan, by_role={}), [], ["gpu-1"], [], False) == [
        "scheduling: taint nvidia.com/gpu=:NoSchedule taken back from gpu-1"
    ]
    assert s.summary(v(scheduling_taint=False), dict(plan, by_role={}), [], [], [], False) == [
        "scheduling: nothing configured"
    ]
