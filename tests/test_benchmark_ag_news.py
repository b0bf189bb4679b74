"""The AG News benchmark script's plumbing, on a tiny slice of the committed sample (not a timed benchmark)."""

import json
import shutil
from collections import Counter

import pytest
import torch

from benchmarks import ag_news as benchmark_ag_news
from benchmarks.ag_news import (
    NewsTransformer,
    TransformerConfig,
    basic_english,
    bucketed_batches,
    make_vocab,
    with_ngrams,
)
from tfcourse import agnews

TINY = ["--epochs", "1", "--bag-epochs", "2", "--d-model", "16", "--num-heads", "2", "--d-ff", "16"]


def test_basic_english_follows_torchtext():
    # The example of torchtext's get_tokenizer docstring, then each rule of its table.
    assert basic_english("You can now install TorchText using pip!") == [
        "you", "can", "now", "install", "torchtext", "using", "pip", "!",
    ]
    assert basic_english('China\'s "G.D.P." (up), yes; no: <br />end?') == [
        "china", "'", "s", "g", ".", "d", ".", "p", ".", "(", "up", ")", ",", "yes", "no", "end", "?",
    ]
    assert basic_english("  ") == []


def test_vocabulary_orders_by_count_then_alphabet_and_ngrams_follow_the_tokens():
    vocab = make_vocab([["b", "a", "c"], ["a", "c", "d"], ["d"]], min_freq=1)
    assert list(vocab) == ["<pad>", "<unk>", "a", "c", "d", "b"]
    assert list(make_vocab([["b", "a", "a"]], min_freq=2)) == ["<pad>", "<unk>", "a"]
    assert with_ngrams(["oil", "prices", "rise"], 2) == ["oil", "prices", "rise", "oil prices", "prices rise"]


def test_bucketed_batches_cover_every_example_once_with_similar_lengths():
    lengths = [int(n) for n in torch.randint(1, 200, (1000,), generator=torch.Generator().manual_seed(0))]
    batches = bucketed_batches(lengths, 32, torch.Generator().manual_seed(1))
    assert sorted(i for batch in batches for i in batch) == list(range(1000))
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches) / len(batches)
    assert spread < 40, "a batch should hold texts of similar length"


def test_transformer_ignores_padding():
    torch.manual_seed(0)
    model = NewsTransformer(50, 4, TransformerConfig(d_model=16, num_heads=2, d_ff=16, max_len=20)).eval()
    text = torch.tensor([[5, 6, 7]])
    padded = torch.tensor([[5, 6, 7, 0, 0, 0, 0]])
    with torch.no_grad():
        assert torch.allclose(model(text), model(padded), atol=1e-5)


def test_full_data_mode_runs_both_models_and_reports(tmp_path, capsys):
    output = tmp_path / "result.json"
    report = benchmark_ag_news.main(
        ["--data-dir", str(agnews.SAMPLE_DIR), "--limit", "20", *TINY, "--json", str(output)]
    )
    assert [r["model"] for r in report["results"]] == ["bag", "transformer"]
    for result in report["results"]:
        assert 0.0 <= result["valid_accuracy"] <= 1.0 and 0.0 <= result["test_accuracy"] <= 1.0
        assert result["tokens_per_second"] > 0 and result["train_seconds"] > 0
    assert (
        len(report["results"][0]["epoch_valid_accuracy"]) == 2
        and len(report["results"][1]["epoch_valid_accuracy"]) == 1
    )
    assert report["train_rows"] == 80 and report["valid_rows"] == 80 and report["test_rows"] == 80
    assert report["transformer_config"]["d_model"] == 16 and report["device"].startswith("cpu")
    assert json.loads(output.read_text())["results"][1]["model"] == "transformer"
    printed = capsys.readouterr().out
    assert "train.csv" in printed and "tokens/s" in printed and "load average" in printed and "whole run" in printed
    assert "valid accuracy" in printed and "test accuracy" in printed


def test_choose_picks_on_validation_and_scores_the_test_split_for_the_chosen_setting_only(monkeypatch):
    scored = []
    run_transformer = benchmark_ag_news.run_transformer

    def counting(*args, **kwargs):
        result, score_test = run_transformer(*args, **kwargs)
        return result, lambda: scored.append(result.setting) or score_test()

    monkeypatch.setattr(benchmark_ag_news, "run_transformer", counting)
    args = ["--data-dir", str(agnews.SAMPLE_DIR), "--limit", "20", "--models", "transformer", *TINY]
    report = benchmark_ag_news.main([*args, "--epochs", "2", "--choose", "lr=0.01", "--choose", "lr=0.01,dropout=0.0"])
    results = report["results"]
    assert [r["setting"] for r in results] == ["base", "lr=0.01", "lr=0.01,dropout=0.0"]
    best = max(results, key=lambda r: r["valid_accuracy"])  # max() keeps the first of equal ones, as the script
    assert report["chosen"] == best["setting"] and scored == [best["setting"]], "the test split is scored once"
    assert [r["test_accuracy"] is not None for r in results] == [r is best for r in results]
    for result in results:  # the weights kept are those of the best epoch on validation (the first of equals)
        epochs = result["epoch_valid_accuracy"]
        assert result["kept_epoch"] == epochs.index(max(epochs)) + 1 and result["valid_accuracy"] == max(epochs)
    with pytest.raises(SystemExit, match="--choose"):
        benchmark_ag_news.main([*args, "--choose", "nonsense=1"])


def test_test_split_alone_is_cut_into_a_stratified_split(tmp_path):
    shutil.copy(agnews.SAMPLE_DIR / "test.csv", tmp_path / "test.csv")  # 150 rows per class
    args = ["--data-dir", str(tmp_path), "--train-per-class", "100", "--models", "bag", *TINY]
    report = benchmark_ag_news.main(args)
    assert report["train_rows"] == 360 and report["valid_rows"] == 40 and report["test_rows"] == 200
    assert "first 100 rows of" in report["data"] and "file order" in report["data"]
    # Validation is the last 10 % of each class of the training part; the test part is untouched.
    data = benchmark_ag_news.load_data(str(tmp_path), 100, None)
    first, rest = agnews.stratified_split(agnews.read_ag_news(tmp_path / "test.csv"), 100)
    assert Counter(data.train["text"]) + Counter(data.valid["text"]) == Counter(first["text"])
    assert data.valid["text"].tolist() == first.groupby("label").tail(10)["text"].tolist()
    assert data.test["text"].tolist() == rest["text"].tolist()
    shuffled = benchmark_ag_news.main([*args, "--split-seed", "3", "--bag-recipe", "adam", "--bag-ngrams", "2"])
    assert "seed 3" in shuffled["data"] and shuffled["bag_config"]["recipe"] == "adam"


def test_missing_data_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv(agnews.DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(SystemExit, match="no AG News test split found"):
        benchmark_ag_news.main(["--data-dir", str(tmp_path), *TINY])
