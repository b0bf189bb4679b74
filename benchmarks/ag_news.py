"""AG News benchmark: a small Transformer against the EmbeddingBag baseline, side by side.

``python -m benchmarks.ag_news`` trains two models on the same data and prints, for
each, the validation and test accuracy, the training wall time and the training throughput (real
tokens per second), with the device, the thread count, the load average and the configuration:

* **transformer**: the architecture of notebook 06 (token embedding scaled by sqrt(d_model),
  learned positions, post-LN encoder layers with the padding mask built from the ids, mean
  pooling over the real tokens, a linear head), written here with PyTorch's
  ``nn.TransformerEncoder``; AdamW, linear warm-up then cosine decay, label smoothing,
  gradient clipping, length-bucketed batches, bfloat16 autocast on CUDA. The weights kept are
  those of the epoch with the best validation accuracy.
* **bag**: the model of PyTorch's text-classification tutorial ("Text classification with the
  torchtext library"): ``nn.EmbeddingBag(mode="mean")`` + ``nn.Linear``, uniform(-0.5, 0.5)
  init, SGD with lr 5, gradient clipping at 0.1, batch 64, 10 epochs, and the learning rate
  divided by 10 after every epoch whose validation accuracy does not improve: the tutorial's
  recipe (which cuts its validation slice, 5 %, from the training data too); the weights of the
  last epoch are kept.

Data (the same for both models), in three parts: **train** fits the weights, **validation** makes every choice,
**test** is scored once, at the end, for each model kept (:func:`load_data`; the parts and their sizes:
docs/reader-edition.md). ``--split-seed`` shuffles the split first: a check that a configuration is not fitted to one.

The Transformer's default configuration depends on the device: a small one on the CPU (the course's target: >= 90 %
on the full data in <= 15 min on 2 cores) and a larger one on CUDA (>= 92.5 % in <= 5 min); neither target has been
measured on the full data yet. ``--help`` lists the flags that change each value, and ``--choose``.

Why the Transformer's embeddings start at N(0, 1/d_model): ``nn.Embedding`` starts at N(0, 1);
multiplied by sqrt(d_model) the token vectors have a standard deviation of sqrt(d_model), while
the rest of the model works at the scale of a LayerNorm output, about 1. Adam moves every weight
by about ``lr`` per step whatever its size, so such embeddings change sqrt(d_model) times more
slowly, relative to their size. On the small split (4 epochs, d_model=64) that costs about 17
points of validation accuracy: 0.70-0.71 with ``embedding_std=1.0`` against 0.86-0.87 with the
default d_model**-0.5 (as fairseq initialises its embeddings), on the fixed split and three
shuffled ones (``--choose embedding_std=1.0`` kept the default on all four). Notebook 06,
section "Closing the gap", shows the measurements.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import math
import os
import platform
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from tfcourse.agnews import (
    BENCHMARK_TRAIN_PER_CLASS,
    CLASSES,
    locate_test_split,
    read_ag_news,
    stratified_split,
)
from tfcourse.training import train

# torchtext's ``basic_english`` rules (``_patterns`` and ``_replacements`` in torchtext/data/utils.py), applied in
# this order after lower-casing; then the text is split on whitespace.
PATTERNS = (r"\'", r"\"", r"\.", r"<br \/>", r",", r"\(", r"\)", r"\!", r"\?", r"\;", r"\:", r"\s+")
REPLACEMENTS = (" '  ", "", " . ", " ", " , ", " ( ", " ) ", " ! ", " ? ", " ", " ", " ")
BASIC_ENGLISH_RULES = tuple(zip(map(re.compile, PATTERNS), REPLACEMENTS, strict=True))
PAD, UNK = "<pad>", "<unk>"


def basic_english(text: str) -> list[str]:
    """torchtext's ``basic_english`` tokenizer: lower-case, the rules above in order, split on spaces."""
    return functools.reduce(lambda line, rule: rule[0].sub(rule[1], line), BASIC_ENGLISH_RULES, text.lower()).split()


@dataclass
class TransformerConfig:
    """Everything that defines the Transformer run; the CPU and CUDA defaults differ."""

    d_model: int = 64
    num_heads: int = 4
    d_ff: int = 128
    num_layers: int = 1
    dropout: float = 0.2
    max_len: int = 256
    min_freq: int = 2
    epochs: int = 4
    batch_size: int = 64
    lr: float = 5e-3  # chosen on the validation split of the fixed split, against 3e-3 (notebook 06, section 11)
    weight_decay: float = 0.01
    warmup: float = 0.1  # fraction of the optimizer steps
    label_smoothing: float = 0.1
    max_grad_norm: float = 1.0
    embedding_std: float | None = None  # None: d_model ** -0.5
    position_std: float = 1.0


CPU_DEFAULT = TransformerConfig()
CUDA_DEFAULT = TransformerConfig(
    d_model=256, num_heads=8, d_ff=1024, num_layers=2, dropout=0.1, epochs=6, batch_size=128, lr=1e-3
)


@dataclass
class BagConfig:
    """The tutorial's EmbeddingBag recipe (``recipe="tutorial"``) or a tuned one (``"adam"``)."""

    recipe: str = "tutorial"  # "adam": Adam at lr 0.01, embeddings from N(0, 0.1), no clipping, no decay
    ngrams: int = 1  # 2 adds the bigrams of each text as extra tokens (the fastText trick)
    embed_dim: int = 64
    epochs: int = 10
    batch_size: int = 64
    lr: float = 5.0
    gamma: float = 0.1
    max_grad_norm: float | None = 0.1
    min_freq: int = 1


@dataclass
class Result:
    model: str  # "bag" or "transformer"
    setting: str  # the values --choose set ("" without --choose)
    valid_accuracy: float  # of the weights kept
    test_accuracy: float | None  # None: not chosen, so never scored on the test split
    train_seconds: float
    tokens_per_second: float
    parameters: int
    vocab_size: int
    epoch_valid_accuracy: list[float] = field(default_factory=list)
    kept_epoch: int = 0  # 1-based
    total_seconds: float = 0.0  # the whole run of this model: tokenizing, training, evaluating


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


@dataclass
class Data:
    train: pd.DataFrame  # fits the weights
    valid: pd.DataFrame  # makes every choice
    test: pd.DataFrame  # scored once, at the end
    description: str


def cut_validation(frame: pd.DataFrame, fraction: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(train, valid)``: the last ``fraction`` of each class's rows, in order, to validate; the others to train.

    With unequal classes the cut is made at the same row count for every class (a fraction of the
    smallest), so the validation split gets the larger classes' extra rows.
    """
    smallest = int(frame["label"].value_counts().min())
    return stratified_split(frame, smallest - round(smallest * fraction))


def load_data(
    data_dir: str | None,
    train_per_class: int,
    split_seed: int | None,
    limit: int | None = None,
    valid_fraction: float = 0.1,
) -> Data:
    """The benchmark's train, validation and test frames: ``data_dir``'s train.csv and test.csv, else the test split
    cut in three (the first ``train_per_class`` rows of each class to train and validate, the others to test)."""
    if data_dir is not None and all((Path(data_dir) / name).is_file() for name in ("train.csv", "test.csv")):
        train_frame, valid_frame = cut_validation(read_ag_news(Path(data_dir) / "train.csv"), valid_fraction)
        test_frame = read_ag_news(Path(data_dir) / "test.csv")
        description = (
            f"train.csv in {data_dir} ({len(train_frame):,} rows to train, the last {valid_fraction:.0%} of each "
            f"class, {len(valid_frame):,} rows, to validate) and test.csv ({len(test_frame):,} rows) to test"
        )
        return _limited(Data(train_frame, valid_frame, test_frame, description), limit)
    test_path = locate_test_split(data_dir)
    if test_path is None:
        raise SystemExit(
            "no AG News test split found: pass --data-dir DIR (holding train.csv and test.csv, or test.csv alone), "
            "set TFCOURSE_AG_NEWS_DIR, or run `make data`"
        )
    frame = read_ag_news(test_path)
    order = "file order"
    if split_seed is not None:
        frame = frame.sample(frac=1.0, random_state=split_seed).reset_index(drop=True)
        order = f"shuffled with seed {split_seed}"
    first, rest = stratified_split(frame, train_per_class)
    train_frame, valid_frame = cut_validation(first, valid_fraction)
    description = (
        f"the official test split {test_path} cut in three ({order}): of the first {train_per_class:,} rows of "
        f"each class, {len(train_frame):,} to train and the last {valid_fraction:.0%} of each class "
        f"({len(valid_frame):,}) to validate; the other {len(rest):,} to test"
    )
    return _limited(Data(train_frame, valid_frame, rest, description), limit)


def _limited(data: Data, limit: int | None) -> Data:
    """At most ``limit`` rows of each class in each part (smoke tests)."""
    if limit is None:
        return data
    parts = (data.train, data.valid, data.test)
    cut = [part.groupby("label", sort=False).head(limit).reset_index(drop=True) for part in parts]
    return Data(*cut, f"{data.description}; at most {limit} rows per class of each part")


def with_ngrams(tokens: list[str], n: int) -> list[str]:
    """The tokens followed by their 2-grams .. n-grams (``"oil prices"``), as torchtext's ``ngrams_iterator``."""
    grams = list(tokens)
    for size in range(2, n + 1):
        grams += [" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)]
    return grams


def make_vocab(token_lists: Sequence[Sequence[str]], min_freq: int) -> dict[str, int]:
    """token -> id: <pad> 0, <unk> 1, then tokens seen >= min_freq times, most frequent first (ties alphabetical)."""
    counts = Counter(token for tokens in token_lists for token in tokens)
    kept = sorted(
        (token for token, n in counts.items() if n >= min_freq and token not in (PAD, UNK)),
        key=lambda token: (-counts[token], token),
    )
    return {token: index for index, token in enumerate([PAD, UNK, *kept])}


def encode(token_lists: Sequence[Sequence[str]], vocab: dict[str, int], max_len: int | None) -> list[torch.Tensor]:
    unknown = vocab[UNK]
    return [torch.tensor([vocab.get(t, unknown) for t in tokens[:max_len]] or [unknown]) for tokens in token_lists]


def bucketed_batches(
    lengths: Sequence[int], batch_size: int, generator: torch.Generator | None, pool: int = 50
) -> list[list[int]]:
    """Batches of indices of similar length: shuffle, sort pools of ``pool`` batches by length, shuffle the batches."""
    count = len(lengths)
    order = torch.randperm(count, generator=generator).tolist() if generator is not None else list(range(count))
    step = batch_size * pool
    order = [i for start in range(0, count, step) for i in sorted(order[start : start + step], key=lengths.__getitem__)]
    batches = [order[start : start + batch_size] for start in range(0, count, batch_size)]
    if generator is not None:
        batches = [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
    return batches


def pad_batch(items: Sequence[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor]:
    sequences, labels = zip(*items, strict=True)
    return nn.utils.rnn.pad_sequence(list(sequences), batch_first=True, padding_value=0), torch.tensor(labels)


def loader(ids: list[torch.Tensor], labels: Sequence[int], batches: list[list[int]], pin: bool):
    pairs = list(zip(ids, labels, strict=True))
    return torch.utils.data.DataLoader(pairs, batch_sampler=batches, collate_fn=pad_batch, pin_memory=pin)


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------


class NewsTransformer(nn.Module):
    """Embedding * sqrt(d) + learned positions -> post-LN encoder (mask from the ids) -> mean over tokens -> linear."""

    def __init__(self, vocab_size: int, num_classes: int, config: TransformerConfig) -> None:
        super().__init__()
        self.scale = math.sqrt(config.d_model)
        self.tokens = nn.Embedding(vocab_size, config.d_model, padding_idx=0)
        std = config.embedding_std if config.embedding_std is not None else config.d_model**-0.5
        nn.init.normal_(self.tokens.weight, std=std)
        self.positions = nn.Parameter(torch.randn(config.max_len, config.d_model) * config.position_std)
        self.dropout = nn.Dropout(config.dropout)
        block = nn.TransformerEncoderLayer(
            config.d_model, config.num_heads, config.d_ff, config.dropout, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(block, config.num_layers, enable_nested_tensor=False)
        self.classifier = nn.Linear(config.d_model, num_classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        real = ids.ne(0)  # (B, L): True for tokens, False for padding
        hidden = self.tokens(ids) * self.scale + self.positions[: ids.size(1)]  # (B, L, D)
        hidden = self.encoder(self.dropout(hidden), src_key_padding_mask=real.logical_not())  # (B, L, D)
        weights = real.unsqueeze(-1).to(hidden.dtype)  # (B, L, 1)
        pooled = torch.einsum("bld,blo->bd", hidden, weights) / weights.sum(dim=1).clamp(min=1.0)  # (B, D)
        return self.classifier(pooled)  # (B, C)


class TextBag(nn.Module):
    """The tutorial's model: the mean of the token embeddings of each text, then a linear layer."""

    def __init__(self, vocab_size: int, embed_dim: int, num_classes: int) -> None:
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.fc = nn.Linear(embed_dim, num_classes)
        nn.init.uniform_(self.embedding.weight, -0.5, 0.5)
        nn.init.uniform_(self.fc.weight, -0.5, 0.5)
        nn.init.zeros_(self.fc.bias)

    def forward(self, flat_ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.fc(self.embedding(flat_ids, offsets))  # (B, C)


def flatten(sequences: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """EmbeddingBag's input: all ids in one row and where each text starts."""
    lengths = torch.tensor([len(s) for s in sequences])
    return torch.cat(list(sequences)), torch.cumsum(lengths, 0) - lengths


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


def cosine_with_warmup(total_steps: int, warmup_steps: int):
    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return factor


@torch.no_grad()
def transformer_accuracy(model: nn.Module, ids: list[torch.Tensor], labels: Sequence[int], device, autocast) -> float:
    model.eval()
    lengths = [len(s) for s in ids]
    correct = 0
    for batch in loader(ids, labels, bucketed_batches(lengths, 256, None), pin=device.type == "cuda"):
        with autocast():
            logits = model(batch[0].to(device, non_blocking=True))
        correct += int((logits.argmax(-1).cpu() == batch[1]).sum())
    return correct / len(ids)


def run_transformer(
    data: Data, config: TransformerConfig, device: torch.device, autocast_dtype, seed: int, setting: str = ""
) -> tuple[Result, Callable[[], float]]:
    """Train on ``data.train``, keep the epoch with the best validation accuracy; the result and a test scorer."""
    begin = time.perf_counter()
    torch.manual_seed(seed)
    train_tokens = [basic_english(t) for t in data.train["text"]]
    vocab = make_vocab(train_tokens, config.min_freq)
    train_ids = encode(train_tokens, vocab, config.max_len)
    valid_ids = encode([basic_english(t) for t in data.valid["text"]], vocab, config.max_len)
    train_labels, valid_labels = data.train["label"].tolist(), data.valid["label"].tolist()

    model = NewsTransformer(len(vocab), len(CLASSES), config).to(device)
    no_decay = [p for name, p in model.named_parameters() if p.dim() < 2 or name in ("tokens.weight", "positions")]
    decay = [p for name, p in model.named_parameters() if not (p.dim() < 2 or name in ("tokens.weight", "positions"))]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr,
        betas=(0.9, 0.98),
    )
    steps = math.ceil(len(train_ids) / config.batch_size) * config.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, cosine_with_warmup(steps, max(1, round(config.warmup * steps)))
    )
    criterion = nn.CrossEntropyLoss(label_smoothing=config.label_smoothing)

    def loss_fn(net: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        ids, labels = (t.to(device, non_blocking=True) for t in batch)
        return criterion(net(ids), labels)

    def autocast():
        return torch.autocast(device.type, dtype=autocast_dtype, enabled=autocast_dtype is not None)

    lengths = [len(s) for s in train_ids]
    generator = torch.Generator().manual_seed(seed)
    tokens = 0
    epoch_accuracy = []
    kept_state, kept_epoch = None, 0
    seconds = 0.0
    for epoch in range(config.epochs):
        batches = bucketed_batches(lengths, config.batch_size, generator)
        tokens += sum(lengths)
        _synchronize(device)
        start = time.perf_counter()
        train(
            model,
            loader(train_ids, train_labels, batches, pin=device.type == "cuda"),
            loss_fn,
            optimizer,
            scheduler=scheduler,
            max_grad_norm=config.max_grad_norm,
            autocast_dtype=autocast_dtype,
            desc=f"transformer epoch {epoch + 1}",
        )
        _synchronize(device)
        seconds += time.perf_counter() - start
        epoch_accuracy.append(transformer_accuracy(model, valid_ids, valid_labels, device, autocast))
        if epoch_accuracy[-1] > max(epoch_accuracy[:-1], default=-1.0):  # ties: the earlier epoch stays
            kept_state, kept_epoch = copy.deepcopy(model.state_dict()), epoch + 1
    model.load_state_dict(kept_state)

    def score_test() -> float:
        test_ids = encode([basic_english(t) for t in data.test["text"]], vocab, config.max_len)
        return transformer_accuracy(model, test_ids, data.test["label"].tolist(), device, autocast)

    result = Result(
        "transformer",
        setting,
        epoch_accuracy[kept_epoch - 1],
        None,
        seconds,
        tokens / seconds,
        sum(p.numel() for p in model.parameters()),
        len(vocab),
        epoch_accuracy,
        kept_epoch,
        time.perf_counter() - begin,
    )
    return result, score_test


@torch.no_grad()
def bag_accuracy(model: nn.Module, ids: list[torch.Tensor], labels: Sequence[int], device) -> float:
    model.eval()
    correct = 0
    for start in range(0, len(ids), 512):
        flat, offsets = flatten(ids[start : start + 512])
        predicted = model(flat.to(device), offsets.to(device)).argmax(-1).cpu()
        correct += int((predicted == torch.tensor(labels[start : start + 512])).sum())
    return correct / len(ids)


def run_bag(data: Data, config: BagConfig, device: torch.device, seed: int) -> tuple[Result, Callable[[], float]]:
    """The tutorial's recipe on ``data.train``, learning rate decayed on ``data.valid``; the result, a test scorer."""
    begin = time.perf_counter()
    torch.manual_seed(seed)

    def ids_of(frame: pd.DataFrame) -> list[torch.Tensor]:
        return encode([with_ngrams(basic_english(t), config.ngrams) for t in frame["text"]], vocab, None)

    train_tokens = [with_ngrams(basic_english(t), config.ngrams) for t in data.train["text"]]
    vocab = make_vocab(train_tokens, config.min_freq)
    train_ids = encode(train_tokens, vocab, None)
    valid_ids = ids_of(data.valid)
    train_labels, valid_labels = data.train["label"].tolist(), data.valid["label"].tolist()
    generator = torch.Generator().manual_seed(seed)

    model = TextBag(len(vocab), config.embed_dim, len(CLASSES)).to(device)
    if config.recipe == "adam":
        nn.init.normal_(model.embedding.weight, std=0.1)
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=config.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=config.gamma)

    def loss_fn(net: nn.Module, batch: list[int]) -> torch.Tensor:
        flat, offsets = flatten([train_ids[i] for i in batch])
        labels = torch.tensor([train_labels[i] for i in batch], device=device)
        return F.cross_entropy(net(flat.to(device), offsets.to(device)), labels)

    best = None
    tokens = 0
    seconds = 0.0
    epoch_accuracy = []
    for epoch in range(config.epochs):
        order = torch.randperm(len(train_ids), generator=generator).tolist()
        batches = [order[i : i + config.batch_size] for i in range(0, len(order), config.batch_size)]
        tokens += sum(len(ids) for ids in train_ids)
        _synchronize(device)
        start = time.perf_counter()
        train(
            model,
            batches,
            loss_fn,
            optimizer,
            max_grad_norm=config.max_grad_norm,
            desc=f"bag epoch {epoch + 1}",
        )
        _synchronize(device)
        seconds += time.perf_counter() - start
        epoch_accuracy.append(bag_accuracy(model, valid_ids, valid_labels, device))
        if best is not None and epoch_accuracy[-1] < best:
            scheduler.step()  # the tutorial: divide the learning rate by 10 when validation accuracy drops
        else:
            best = epoch_accuracy[-1]

    def score_test() -> float:
        return bag_accuracy(model, ids_of(data.test), data.test["label"].tolist(), device)

    result = Result(
        "bag",
        "",
        epoch_accuracy[-1],
        None,
        seconds,
        tokens / seconds,
        sum(p.numel() for p in model.parameters()),
        len(vocab),
        epoch_accuracy,
        config.epochs,
        time.perf_counter() - begin,
    )
    return result, score_test


def candidates(config: TransformerConfig, choices: Sequence[str]) -> list[tuple[str, TransformerConfig]]:
    """``(setting, config)``: ``config`` itself ("base"), then one per ``--choose NAME=VALUE[,NAME=VALUE]``."""
    kinds = {name: float if isinstance(v, float) or v is None else int for name, v in asdict(config).items()}
    result = [("base", config)]
    for choice in choices:
        changes = {}
        for assignment in choice.split(","):
            name, _, value = assignment.partition("=")
            name = name.strip().replace("-", "_")
            if name not in kinds or not value.strip():
                raise SystemExit(
                    f"--choose {choice!r}: expected NAME=VALUE[,NAME=VALUE] with NAME one of {list(kinds)}"
                )
            changes[name] = None if value.strip().lower() == "none" else kinds[name](value)
        result.append((choice, replace(config, **changes)))
    return result


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.ag_news",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    data = parser.add_argument_group("data")
    data.add_argument("--data-dir", help="folder with train.csv and test.csv (the real benchmark) or test.csv alone")
    data.add_argument(
        "--train-per-class",
        type=int,
        default=BENCHMARK_TRAIN_PER_CLASS,
        help="rows per class to train on (validation included) when only the test split is there",
    )
    data.add_argument(
        "--valid-fraction",
        type=float,
        default=0.1,
        help="the last fraction of each class's training rows, cut off to validate",
    )
    data.add_argument("--split-seed", type=int, help="shuffle the test split with this seed before cutting it")
    data.add_argument("--limit", type=int, help="at most this many rows per class in each part (smoke tests)")
    run = parser.add_argument_group("run")
    run.add_argument("--device", default="auto", help="auto (cuda if available), cpu, cuda, cuda:1, ...")
    run.add_argument(
        "--threads",
        type=int,
        help="torch.set_num_threads; default 1 on the CPU: this model's matrices are small, and on a 2-core machine "
        "shared with other jobs 2 threads ran 6 to 12 times slower than 1 (try 2 on an idle machine)",
    )
    run.add_argument(
        "--autocast",
        choices=("auto", "bf16", "none"),
        default="auto",
        help="auto: bfloat16 on CUDA, float32 on the CPU",
    )
    run.add_argument("--models", choices=("both", "transformer", "bag"), default="both")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--json", help="also write the results to this JSON file")
    model = parser.add_argument_group("transformer (defaults: the CPU or the CUDA configuration, by device)")
    for name, value in asdict(CPU_DEFAULT).items():
        kind = float if isinstance(value, float) or value is None else int
        model.add_argument(
            f"--{name.replace('_', '-')}", type=kind, help=f"CPU {value}, CUDA {getattr(CUDA_DEFAULT, name)}"
        )
    model.add_argument(
        "--choose",
        action="append",
        default=[],
        metavar="NAME=VALUE[,NAME=VALUE]",
        help="a candidate: the configuration with these values (repeat for more); the best of the configuration "
        "and the candidates on the validation split is kept, and the test split scored for it only; "
        "e.g. --choose embedding_std=1.0",
    )
    bag = parser.add_argument_group("bag baseline")
    bag.add_argument(
        "--bag-recipe",
        choices=("tutorial", "adam"),
        default="tutorial",
        help="tutorial: SGD lr 5, clip 0.1, lr / 10 when validation accuracy drops; "
        "adam: Adam lr 0.01, N(0, 0.1) embeddings, no clipping, constant lr",
    )
    bag.add_argument("--bag-epochs", type=int, default=BagConfig.epochs)
    bag.add_argument("--bag-lr", type=float, help="default: 5 (tutorial) or 0.01 (adam)")
    bag.add_argument("--bag-ngrams", type=int, default=1, help="2: add bigrams as tokens")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict:
    """Run the benchmark with the command line ``argv``; print the table and return the report as a dict."""
    args = parse_args(argv)
    threads = torch.get_num_threads()
    try:
        return run(args)
    finally:
        torch.set_num_threads(threads)  # main() may be called from other code (the tests): leave no trace


def run(args: argparse.Namespace) -> dict:
    begin = time.perf_counter()
    device = (
        torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if args.device == "auto"
        else torch.device(args.device)
    )
    if args.threads or device.type == "cpu":
        torch.set_num_threads(args.threads or 1)
    base = CUDA_DEFAULT if device.type == "cuda" else CPU_DEFAULT
    config = TransformerConfig(
        **{
            name: getattr(args, name) if getattr(args, name) is not None else value
            for name, value in asdict(base).items()
        }
    )
    autocast_dtype = {"bf16": torch.bfloat16, "none": None}.get(args.autocast)
    if args.autocast == "auto":
        autocast_dtype = torch.bfloat16 if device.type == "cuda" else None
    if args.bag_recipe == "adam":
        bag_config = BagConfig(recipe="adam", lr=args.bag_lr or 0.01, gamma=1.0, max_grad_norm=None)
    else:
        bag_config = BagConfig(lr=args.bag_lr or BagConfig.lr)
    bag_config.epochs, bag_config.ngrams = args.bag_epochs, args.bag_ngrams

    data = load_data(args.data_dir, args.train_per_class, args.split_seed, args.limit, args.valid_fraction)
    settings = candidates(config, args.choose)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    header = {
        "device": torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else f"cpu ({platform.processor() or platform.machine()})",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in load],
        "autocast": str(autocast_dtype).replace("torch.", "") if autocast_dtype else "none",
        "data": data.description,
        "train_rows": len(data.train),
        "valid_rows": len(data.valid),
        "test_rows": len(data.test),
        "transformer_config": asdict(config),
        "bag_config": asdict(bag_config),
    }
    print(
        f"AG News benchmark | torch {header['torch']} | device {header['device']} | threads {header['threads']} "
        f"of {header['cpu_count']} CPUs | load average {header['load_average_at_start']} "
        f"| autocast {header['autocast']}"
    )
    print(f"data: {data.description}")
    print(f"transformer: {asdict(config)}")
    print(f"bag: {asdict(bag_config)}")
    sys.stdout.flush()

    results = []
    if args.models in ("both", "bag"):
        result, score_test = run_bag(data, bag_config, device, args.seed)
        result.test_accuracy = score_test()  # nothing is chosen after the bag's run: its test score is final
        results.append(result)
    if args.models in ("both", "transformer"):
        chosen = None
        for setting, candidate in settings:
            result, score_test = run_transformer(data, candidate, device, autocast_dtype, args.seed, setting)
            results.append(result)
            if chosen is None or result.valid_accuracy > chosen[0].valid_accuracy:  # ties: the first listed
                chosen = (result, score_test)
        chosen[0].test_accuracy = chosen[1]()  # the test split, once, for the configuration chosen on validation
        header["chosen"] = chosen[0].setting
    load_end = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    header["load_average_at_end"] = [round(x, 2) for x in load_end]
    header["total_seconds"] = round(time.perf_counter() - begin, 1)

    table = pd.DataFrame(
        [
            {
                "model": r.model,
                **({"setting": r.setting} if args.choose else {}),
                "valid accuracy": round(r.valid_accuracy, 4),
                "test accuracy": "-" if r.test_accuracy is None else round(r.test_accuracy, 4),
                "epoch kept": r.kept_epoch,
                "train seconds": round(r.train_seconds, 1),
                "total seconds": round(r.total_seconds, 1),
                "tokens/s": round(r.tokens_per_second),
                "parameters": r.parameters,
                "vocabulary": r.vocab_size,
                "valid accuracy per epoch": " ".join(f"{a:.3f}" for a in r.epoch_valid_accuracy),
            }
            for r in results
        ]
    )
    print(table.to_string(index=False))
    if args.choose:
        print(f"chosen on the validation split: {header['chosen']} (test accuracy scored for it only)")
    print(
        f"whole run {header['total_seconds']} s (reading the data, both models, evaluation) | "
        f"load average at the end: {header['load_average_at_end']}"
    )
    report = {**header, "results": [asdict(r) for r in results]}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
