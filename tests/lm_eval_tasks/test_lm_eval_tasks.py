"""The lm-evaluation-harness tasks: the shipped configs, their documents (no ids), and an
offline run of lm-eval's ``hf`` backend whose values equal ``waterdrum score --generations``."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from hub_mirrors import write_ax_mirror, write_tofu_mirror

pytest.importorskip("lm_eval")

from lm_eval.tasks import TaskManager  # noqa: E402

from waterdrum_hf import lm_eval_tasks  # noqa: E402
from waterdrum_hf.generation.prompting import completion_queries, qa_queries  # noqa: E402
from waterdrum_hf.lm_eval_tasks import QuerySamples, Source, documents, tasks_path  # noqa: E402
from waterdrum_hf.scripts import main  # noqa: E402

KEYS = [3_000_000_017, 3_999_999_929]  # distinctive, so a leak would show in any file


@pytest.fixture(scope="module")
def local_data(tmp_path_factory):
    """Two owners' toy passages (two each) as JSON Lines, and the forget ids file."""
    from waterdrum_hf.data import toy_corpus

    corpus = toy_corpus(2, max_passages_per_owner=2)
    folder = tmp_path_factory.mktemp("local")
    rows = [
        {"text": text, "owner_id": KEYS[owner]}
        for text, owner in zip(corpus["text"], corpus["owner_id"], strict=True)
    ]
    (folder / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (folder / "forget.txt").write_text(f"{KEYS[1]}\n")
    return folder, rows


def load_task(name, metadata):
    return TaskManager(
        include_path=str(tasks_path()), include_defaults=False, metadata=metadata
    ).load([name])["tasks"]


def test_the_task_folder_holds_the_three_tasks():
    manager = TaskManager(include_path=str(tasks_path()), include_defaults=False)
    assert {"waterdrum_ax", "waterdrum_tofu", "waterdrum_local"} <= set(manager.all_tasks)


@pytest.mark.parametrize("benchmark", ["waterdrum-ax", "waterdrum-tofu"])
def test_benchmark_tasks_sample_ten_unfiltered_completions_of_the_papers_prompts(
    benchmark, tiny_folder, tmp_path
):
    ax = benchmark == "waterdrum-ax"
    mirror = (write_ax_mirror if ax else write_tofu_mirror)(tmp_path / "mirror")
    name = benchmark.replace("-", "_")
    model = str(tiny_folder)
    tasks = load_task(
        name, {"pretrained": model, "dataset_path": mirror, "watermark_tokenizer": model}
    )
    task = next(iter(tasks.values()))
    config = task.config
    assert config.repeats == 10
    assert config.filter_list[0]["filter"] == [{"function": "take_first_k", "k": 10}]
    kwargs = config.generation_kwargs
    assert kwargs["do_sample"] is True and kwargs["temperature"] == 1.0
    assert kwargs["top_p"] == 1.0 and kwargs["top_k"] == 0 and kwargs["repetition_penalty"] == 1.0
    assert kwargs["max_gen_toks"] == 200 and kwargs["until"] == []  # not lm-eval's "\n\n"
    docs = list(task.test_docs())
    assert set(docs[0]) == {"query", "owner", "row", "source"}
    source = Source.from_json(docs[0]["source"])
    rows = source.rows()
    order = [doc["row"] for doc in docs]
    assert order == lm_eval_tasks.interleave_by_owner(rows["owner_id"])
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_folder)
    if ax:  # 50-token completion prompts of forget_01's full split
        expected = completion_queries(rows["text"], tokenizer, 50)
        assert source.forget_ids() == [19]
    else:  # the questions in the model's chat format
        expected = qa_queries(rows["question"], tokenizer)
        assert expected[0].startswith(tokenizer.bos_token) and "<|assistant|>" in expected[0]
        assert source.forget_ids() == [1]
    expected = [expected[row] for row in order]
    assert [doc["query"] for doc in docs] == expected
    assert [task.doc_to_text(doc) for doc in docs] == expected
    # Published ids are public: the owner index is the id, in the published layout.
    assert [doc["owner"] for doc in docs] == [rows["owner_id"][row] for row in order]
    owners = len(set(rows["owner_id"]))
    assert len({doc["owner"] for doc in docs[:owners]}) == owners  # every owner, first


def test_interleaving_takes_the_owners_in_turn_in_order_of_first_appearance():
    assert lm_eval_tasks.interleave_by_owner([7, 7, 7, 2, 9, 9]) == [0, 3, 4, 1, 5, 2]
    assert lm_eval_tasks.interleave_by_owner([1, 2, 1, 2]) == [0, 1, 2, 3]
    assert lm_eval_tasks.interleave_by_owner([]) == []


def test_forget_ids_follow_the_benchmark_config(tmp_path):
    mirror = write_ax_mirror(tmp_path / "ax")
    source = Source(benchmark="waterdrum-ax", config="forget_05", dataset_path=mirror)
    assert source.forget_ids() == [15, 16, 17, 18, 19]
    with pytest.raises(ValueError, match="give a forget config"):
        Source.from_metadata({"benchmark": "waterdrum-ax", "config": "full"})


def test_local_documents_carry_owner_indices_only(local_data, tiny_folder, monkeypatch):
    folder, rows = local_data
    monkeypatch.setenv("WATERDRUM_DATA_FILE", str(folder / "rows.jsonl"))
    docs = documents(
        pretrained=str(tiny_folder),
        forget_ids_file=str(folder / "forget.txt"),
        watermark_tokenizer=str(tiny_folder),
    )["test"]
    assert docs["owner"] == [0, 1, 0, 1] and docs["row"] == [0, 2, 1, 3]  # owners in turn
    text = json.dumps(docs.to_list())
    assert not any(str(key) in text for key in KEYS)
    assert str(folder / "rows.jsonl") in docs[0]["source"]  # from the environment variable
    source = Source.from_json(docs[0]["source"])
    assert source.owner_ids() == KEYS and source.forget_ids() == [KEYS[1]]


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({}, "needs data_file: pass --metadata .* or set WATERDRUM_DATA_FILE"),
        ({"data_file": "x.jsonl"}, "needs forget_ids_file"),
        ({"data_file": "x", "forget_ids_file": "f"}, "needs watermark_tokenizer"),
        ({"benchmark": "waterdrum-x", "config": "forget_01"}, "benchmark must be one of"),
    ],
)
def test_a_local_task_without_its_files_says_which_setting_to_give(metadata, message, monkeypatch):
    for variable in lm_eval_tasks.ENVIRONMENT.values():
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ValueError, match=message):
        Source.from_metadata(metadata)


def test_documents_need_the_evaluated_models_tokenizer(local_data, monkeypatch):
    folder, _ = local_data
    with pytest.raises(ValueError, match="pass --model_args pretrained="):
        documents(
            data_file=str(folder / "rows.jsonl"),
            forget_ids_file=str(folder / "forget.txt"),
            watermark_tokenizer="tiny",
        )


SCHEMES_BY_NAME = [
    ({"scheme": "waterfall", "k_p": 3}, {"null": "analytic"}),
    ({"scheme": "synthid", "depth": 4}, {}),  # no null given: the analytic null, the default
    ({"scheme": "exp_edit", "key_length": 32}, {"null_keys": 5}),
]


@pytest.mark.parametrize(("scheme", "null"), SCHEMES_BY_NAME, ids=lambda v: v.get("scheme", ""))
def test_a_tasks_scoring_metadata_is_the_configuration_it_aggregates_with(
    local_data, tiny_folder, scheme, null
):
    """The ``scoring`` metadata (the flat settings the evaluate module takes, any scheme by its
    name and settings) is checked when the task is built, travels in the documents as JSON,
    and is what the aggregations score with (a scheme's settings dropped on the way fail
    here)."""
    from waterdrum_hf import NullConfig, WaterDrumConfig, waterdrum_metrics
    from waterdrum_hf.schemes import resolve_scheme

    folder, rows = local_data
    metadata = {
        "data_file": str(folder / "rows.jsonl"),
        "forget_ids_file": str(folder / "forget.txt"),
        "watermark_tokenizer": str(tiny_folder),
        "scoring": {**scheme, **null},
    }
    source = Source.from_metadata(metadata)
    settings = {k: v for k, v in scheme.items() if k != "scheme"}
    keys = null.get("null_keys", 0)
    config = WaterDrumConfig(
        scheme=resolve_scheme(scheme["scheme"], **settings),
        null=NullConfig("empirical" if keys else "analytic", keys=keys),
    )
    assert WaterDrumConfig.from_json(source.scoring) == config
    samples = [[row["text"][:60], row["text"][60:140]] for row in rows]
    items = [
        QuerySamples(source.to_json(), owner, tuple(pair))
        for owner, pair in zip([0, 0, 1, 1], samples, strict=True)
    ]
    expected = waterdrum_metrics(
        samples, [r["owner_id"] for r in rows], str(tiny_folder), config=config,
        forget_ids=[KEYS[1]],
    )  # fmt: skip
    assert lm_eval_tasks.aggregate_forget(items) == expected["forget"]
    assert lm_eval_tasks.aggregate_retain(items) == expected["retain"]
    with pytest.raises(ValueError, match="`pooling` must be"):
        Source.from_metadata({**metadata, "scoring": {"pooling": "max"}})
    with pytest.raises(ValueError, match="`scheme` must be one of"):  # the nested form: refused
        Source.from_metadata({**metadata, "scoring": {"scheme": {"scheme": "waterfall"}}})


def test_repeats_that_are_all_one_completion_are_refused_with_the_fix():
    """lm-eval's local-completions seeds every request alike: a seeded server's ten repeats of a
    query are then one completion, which would be read as ten."""
    copies = [QuerySamples("{}", o, ("same text",) * 10) for o in (0, 1)]
    with pytest.raises(ValueError, match=r"one completion repeated.*--gen_kwargs seed=None"):
        lm_eval_tasks.aggregate_forget(copies)
    # One query whose samples agree (a model that repeats itself there) is no such sign, nor
    # are empty completions (skipped as too short) or single samples.
    lm_eval_tasks.check_repeats_differ([copies[0], QuerySamples("{}", 1, ("a", "b"))])
    lm_eval_tasks.check_repeats_differ([QuerySamples("{}", 0, ("", ""))])
    lm_eval_tasks.check_repeats_differ([QuerySamples("{}", 0, ("a",))])


def test_items_log_as_a_summary_and_one_result_serves_every_metric():
    item = lm_eval_tasks.process_results({"source": "{}", "owner": 1}, [["a b", "c d"]])
    assert set(item) == set(lm_eval_tasks.METRICS)
    assert str(item["forget"]) == "2 samples of owner index 1"
    assert item["forget"] == QuerySamples("{}", 1, ("a b", "c d"))


@pytest.mark.end_to_end  # ~25 s: lm-eval indexes its own tasks, loads the model and samples
def test_lm_eval_hf_run_reports_the_values_waterdrum_score_gives_and_logs_no_id(
    local_data, tiny_folder, tmp_path, capsys
):
    """lm-eval's own command line, offline, on the built-in model; then `waterdrum score
    --generations` on the samples file it wrote."""
    folder, _ = local_data
    out = tmp_path / "out"
    metadata = {
        "forget_ids_file": str(folder / "forget.txt"),
        "watermark_tokenizer": str(tiny_folder),
    }
    command = [
        sys.executable, "-m", "lm_eval", "run", "--model", "hf",
        "--model_args", f"pretrained={tiny_folder}", "--device", "cpu",
        "--include_path", str(tasks_path()), "--tasks", "waterdrum_local",
        "--metadata", json.dumps(metadata), "--gen_kwargs", "max_gen_toks=24",
        "--batch_size", "40", "--seed", "3", "--log_samples", "--output_path", str(out),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WATERDRUM_DATA_FILE": str(folder / "rows.jsonl")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    [results_file] = out.rglob("results_*.json")
    [samples_file] = out.rglob("samples_waterdrum_local_*.jsonl")
    reported = json.loads(results_file.read_text())["results"]["waterdrum_local"]

    samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
    assert len(samples) == 4 and all(len(s["filtered_resps"][0]) == 10 for s in samples)
    assert all(s["doc"]["owner"] in (0, 1) for s in samples)
    written = "\n".join(
        [*(path.read_text() for path in out.rglob("*") if path.is_file()), done.stdout, done.stderr]
    )
    assert not any(str(key) in written for key in KEYS)

    code = main(
        [
            "score", "--dataset-name", str(folder / "rows.jsonl"), "--watermark-tokenizer",
            str(tiny_folder), "--forget-ids-file", str(folder / "forget.txt"),
            "--generations", str(samples_file), "--null-keys", "0", "--output-dir", str(tmp_path / "r"),
        ]
    )  # fmt: skip
    assert code == 0
    ours = json.loads((tmp_path / "r" / "report.json").read_text())["models"]["model"]
    for name in lm_eval_tasks.METRICS:
        assert reported[f"{name},all_samples"] == ours[name], name
    assert ours["num_queries"] == 4 and ours["num_scored"] > 30
    assert 0 <= reported["separability_auroc,all_samples"] <= 1
    assert not any(str(key) in capsys.readouterr().out for key in KEYS)


def test_lm_eval_limit_keeps_every_owner_and_gives_finite_values(tiny_folder, tmp_path):
    """lm-eval itself (``simple_evaluate``, the ``hf`` backend, offline) with ``limit`` as small
    as the number of owners: data ordered by owner would keep the first owner alone (forget
    and AUROC NaN); owners taken in turn keep all three."""
    from lm_eval import simple_evaluate

    from waterdrum_hf.data import toy_corpus

    keys = [*KEYS, 3_555_555_529]
    corpus = toy_corpus(3, max_passages_per_owner=3)  # rows ordered by owner
    rows = [
        {"text": text, "owner_id": keys[owner]}
        for text, owner in zip(corpus["text"], corpus["owner_id"], strict=True)
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "forget.txt").write_text(f"{keys[2]}\n")
    metadata = {
        "data_file": str(tmp_path / "rows.jsonl"),
        "forget_ids_file": str(tmp_path / "forget.txt"),
        "watermark_tokenizer": str(tiny_folder),
        "pretrained": str(tiny_folder),
    }
    manager = TaskManager(include_path=str(tasks_path()), include_defaults=False, metadata=metadata)
    out = simple_evaluate(
        model="hf",
        model_args={"pretrained": str(tiny_folder)},
        tasks=["waterdrum_local"],
        task_manager=manager,
        limit=3,
        gen_kwargs={"max_gen_toks": 16},
        device="cpu",
        batch_size=30,
        random_seed=3,
    )
    docs = [sample["doc"] for sample in out["samples"]["waterdrum_local"]]
    assert sorted(doc["owner"] for doc in docs) == [0, 1, 2]  # one query of each owner
    assert sorted(doc["row"] for doc in docs) == [0, 3, 6]  # each owner's first row
    reported = out["results"]["waterdrum_local"]
    for name in ("forget", "retain", "separability_auroc"):
        assert math.isfinite(reported[f"{name},all_samples"]), name
    assert 0 <= reported["separability_auroc,all_samples"] <= 1
