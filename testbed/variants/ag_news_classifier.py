"""Variants of the answers of 06_ag_news_classifier: realistic mistakes (mutants) and other correct answers."""

from testbed.variants.spec import alternative, mutant

ASSIGNMENT = "06_ag_news_classifier"

VARIANTS = [
    # --- tokenize: mistakes ---
    mutant("tokenize", "no_lowercase", ("    text = text.lower()\n", "")),
    mutant("tokenize", "apostrophe_not_split", ('        (r"\\\'", " \'  "),\n', "")),
    mutant("tokenize", "quotes_kept", ('        (r"\\"", ""),\n', "")),
    mutant("tokenize", "period_not_split", ('        (r"\\.", " . "),\n', "")),
    mutant("tokenize", "line_break_kept", ('        (r"<br \\/>", " "),\n', "")),
    mutant(
        "tokenize",
        "semicolon_and_colon_as_tokens",
        ('(r"\\;", " ")', '(r"\\;", " ; ")'),
        ('(r"\\:", " ")', '(r"\\:", " : ")'),
    ),
    mutant("tokenize", "split_on_single_space", ("return text.split()", 'return text.split(" ")')),
    mutant(
        "tokenize",
        "punctuation_dropped",
        source="""
        def tokenize(text):
            return re.findall(r"[\\w$%#-]+", text.lower())
        """,
    ),
    mutant(
        "tokenize",
        "whitespace_split_only",
        source="""
        def tokenize(text):
            return text.lower().split()
        """,
    ),
    # --- tokenize: other correct answers ---
    alternative(
        "tokenize",
        "str_replace_per_character",
        """
        def tokenize(text):
            text = text.lower().replace('"', "").replace("<br />", " ")
            for mark in "'.,()!?":
                text = text.replace(mark, f" {mark} ")
            for mark in ";:":
                text = text.replace(mark, " ")
            return text.split()
        """,
    ),
    alternative(
        "tokenize",
        "compiled_rules_and_reduce",
        """
        PATTERNS = [r"\\'", r'\\"', r"\\.", r"<br \\/>", r",", r"\\(", r"\\)", r"\\!", r"\\?", r"\\;", r"\\:", r"\\s+"]
        REPLACEMENTS = [" '  ", "", " . ", " ", " , ", " ( ", " ) ", " ! ", " ? ", " ", " ", " "]
        COMPILED = [(re.compile(p), r) for p, r in zip(PATTERNS, REPLACEMENTS)]


        def tokenize(text):
            return functools.reduce(lambda line, rule: rule[0].sub(rule[1], line), COMPILED, text.lower()).split()
        """,
    ),
    # --- build_vocab: mistakes ---
    mutant(  # ranks the specials with the words, cuts, then drops them: a special in the text costs a word
        "build_vocab",
        "cut_before_removing_specials",
        (
            "kept = [token for token, count in counts.items() if count >= min_freq and token not in specials]",
            "kept = [token for token, count in counts.items() if count >= min_freq]",
        ),
        (
            "    itos = list(specials) + kept\n    if max_size is not None:\n        itos = itos[:max_size]\n",
            "    if max_size is not None:\n        kept = kept[: max_size - len(specials)]\n"
            "    itos = list(specials) + [token for token in kept if token not in specials]\n",
        ),
    ),
    mutant(  # a special seen in the text is counted twice towards max_size: as a special and as a word
        "build_vocab",
        "specials_in_the_text_counted_twice",
        (
            "        itos = itos[:max_size]\n",
            "        itos = itos[: max_size - sum(special in counts for special in specials)]\n",
        ),
    ),
    # Ties in the order of first appearance (a sort by count alone, Counter.most_common()): the visible toy data
    # sees d before b, so build_vocab_order's visible part catches both, not only its hidden part.
    mutant(
        "build_vocab",
        "ties_by_first_appearance",
        ("kept.sort(key=lambda token: (-counts[token], token))", "kept.sort(key=lambda token: -counts[token])"),
    ),
    mutant(
        "build_vocab",
        "most_common_order",
        (
            "    kept = [token for token, count in counts.items() if count >= min_freq and token not in specials]\n"
            "    kept.sort(key=lambda token: (-counts[token], token))\n",
            "    kept = [token for token, count in counts.most_common()\n"
            "            if count >= min_freq and token not in specials]\n",
        ),
    ),
    mutant(
        "build_vocab",
        "specials_outside_max_size",
        (
            "    itos = list(specials) + kept\n    if max_size is not None:\n        itos = itos[:max_size]\n",
            "    if max_size is not None:\n        kept = kept[:max_size]\n    itos = list(specials) + kept\n",
        ),
    ),
    mutant("build_vocab", "min_freq_off_by_one", ("count >= min_freq", "count > min_freq")),
    mutant("build_vocab", "least_frequent_first", ("(-counts[token], token)", "(counts[token], token)")),
    mutant("build_vocab", "specials_counted_as_tokens", (" and token not in specials", "")),
    mutant("build_vocab", "specials_sorted", ("itos = list(specials) + kept", "itos = sorted(specials) + kept")),
    mutant(
        "build_vocab",
        "no_error_for_tiny_max_size",
        (
            "    if max_size is not None and max_size < len(specials):\n"
            '        raise ValueError(f"max_size={max_size} cannot hold the {len(specials)} special tokens")\n',
            "",
        ),
    ),
    # --- build_vocab: other correct answers ---
    alternative(
        "build_vocab",
        "dict_count_and_two_stable_sorts",
        """
        def build_vocab(token_lists, min_freq=1, max_size=None, specials=("<pad>", "<unk>")):
            if max_size is not None and max_size < len(specials):
                raise ValueError("max_size is smaller than the number of specials")
            counts = {}
            for tokens in token_lists:
                for token in tokens:
                    counts[token] = counts.get(token, 0) + 1
            words = sorted(t for t in counts if t not in specials and counts[t] >= min_freq)  # alphabetical
            words.sort(key=counts.get, reverse=True)  # stable: equal counts stay alphabetical
            itos = [*specials, *words]
            return Vocab(itos if max_size is None else itos[:max_size])
        """,
    ),
    alternative(
        "build_vocab",
        "counter_sum_and_heapq",
        """
        import heapq


        def build_vocab(token_lists, min_freq=1, max_size=None, specials=("<pad>", "<unk>")):
            if max_size is not None and len(specials) > max_size:
                raise ValueError("max_size too small")
            counts = collections.Counter(token for tokens in token_lists for token in tokens)
            for special in specials:
                counts.pop(special, None)
            candidates = [(-n, token) for token, n in counts.items() if n >= min_freq]
            room = len(candidates) if max_size is None else max_size - len(specials)
            return Vocab(list(specials) + [token for _, token in heapq.nsmallest(room, candidates)])
        """,
    ),
    # --- NewsDataset: mistakes ---
    mutant(
        "dataset",
        "numpy_labels",
        (
            'self.labels = [int(label) for label in frame["label"].tolist()]',
            'self.labels = list(frame["label"].to_numpy())',
        ),
    ),
    mutant("dataset", "keeps_last_ids", ("[:max_len]", "[-max_len:]")),
    mutant("dataset", "no_truncation", ("[:max_len]", "")),
    mutant("dataset", "float_ids", ("dtype=torch.long", "dtype=torch.float32")),
    mutant(
        "dataset",
        "label_as_tensor",
        ("return self.ids[index], self.labels[index]", "return self.ids[index], torch.tensor(self.labels[index])"),
    ),
    mutant(
        "dataset",
        "index_label_lookup",
        source="""
        class NewsDataset(Dataset):
            def __init__(self, frame, vocab, max_len=256):
                self.frame, self.vocab, self.max_len = frame, vocab, max_len
                self.ids = [torch.tensor(vocab(tokenize(t))[:max_len]) for t in frame["text"]]

            def __len__(self):
                return len(self.frame)

            def __getitem__(self, index):
                ids = torch.tensor(self.vocab(tokenize(self.frame["text"][index]))[: self.max_len])
                return ids, int(self.frame["label"][index])
        """,
    ),
    # --- NewsDataset: other correct answers ---
    alternative(
        "dataset",
        "itertuples_and_as_tensor",
        """
        class NewsDataset(Dataset):
            def __init__(self, frame, vocab, max_len=256):
                self.ids, self.labels = [], []
                for row in frame.itertuples(index=False):
                    ids = vocab(tokenize(row.text))
                    if max_len is not None:
                        ids = ids[:max_len]
                    self.ids.append(torch.as_tensor(ids, dtype=torch.int64))
                    self.labels.append(int(row.label))

            def __len__(self):
                return len(self.ids)

            def __getitem__(self, index):
                return self.ids[index], self.labels[index]
        """,
    ),
    alternative(
        "dataset",
        "iloc_per_row",
        """
        class NewsDataset(Dataset):
            def __init__(self, frame, vocab, max_len=256):
                self.ids = [
                    torch.LongTensor(vocab(tokenize(frame.iloc[i]["text"]))[slice(max_len)]) for i in range(len(frame))
                ]
                self.labels = frame["label"].astype(int).tolist()

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, index):
                return self.ids[index], self.labels[index]
        """,
    ),
    # --- collate_batch: mistakes ---
    mutant("collate", "pads_with_zero", ("padding_value=pad_idx", "padding_value=0")),
    mutant("collate", "time_first", ("batch_first=True", "batch_first=False")),
    mutant("collate", "float_labels", ("dtype=torch.long)  # (B,)", "dtype=torch.float32)  # (B,)")),
    mutant(
        "collate",
        "sorted_by_length",
        (
            "    sequences = [ids for ids, _ in batch]\n",
            "    batch = sorted(batch, key=lambda item: len(item[0]), reverse=True)\n"
            "    sequences = [ids for ids, _ in batch]\n",
        ),
    ),
    mutant(
        "collate",
        "left_padding",
        source="""
        def collate_batch(batch, pad_idx):
            flipped = [ids.flip(0) for ids, _ in batch]
            ids = nn.utils.rnn.pad_sequence(flipped, batch_first=True, padding_value=pad_idx).flip(1)
            return ids, torch.tensor([label for _, label in batch])
        """,
    ),
    mutant(
        "collate",
        "padded_to_max_len",
        source="""
        def collate_batch(batch, pad_idx):
            ids = torch.full((len(batch), 256), pad_idx, dtype=torch.long)
            for row, (sequence, _) in enumerate(batch):
                ids[row, : len(sequence)] = sequence
            return ids, torch.tensor([label for _, label in batch])
        """,
    ),
    # --- collate_batch: other correct answers ---
    alternative(
        "collate",
        "full_and_copy",
        """
        def collate_batch(batch, pad_idx):
            longest = max(len(ids) for ids, _ in batch)
            out = torch.full((len(batch), longest), pad_idx, dtype=torch.long)
            for row, (ids, _) in enumerate(batch):
                out[row, : len(ids)] = ids
            return out, torch.tensor([label for _, label in batch], dtype=torch.long)
        """,
    ),
    alternative(
        "collate",
        "functional_pad",
        """
        def collate_batch(batch, pad_idx):
            sequences, labels = zip(*batch)
            longest = max(s.numel() for s in sequences)
            rows = [torch.nn.functional.pad(s, (0, longest - s.numel()), value=pad_idx) for s in sequences]
            return torch.stack(rows), torch.as_tensor(labels).long()
        """,
    ),
    # --- masked_mean: mistakes ---
    mutant("masked_mean", "divides_by_length", ("count = weights.sum(dim=1).clamp(min=1)", "count = hidden.size(1)")),
    mutant("masked_mean", "no_clamp_nan_for_empty_rows", (".clamp(min=1)", "")),
    mutant("masked_mean", "padding_in_the_sum", ("total = (hidden * weights).sum(dim=1)", "total = hidden.sum(dim=1)")),
    mutant("masked_mean", "float32_weights", (".to(hidden.dtype)", ".float()")),
    mutant(
        "masked_mean",
        "count_floor_made_on_the_cpu",
        (
            "count = weights.sum(dim=1).clamp(min=1)",
            "count = torch.maximum(weights.sum(dim=1), torch.ones(hidden.size(0), 1, dtype=hidden.dtype))",
        ),
    ),
    mutant(
        "masked_mean",
        "flattened_batch",
        source="""
        def masked_mean(hidden, keep):
            return hidden[keep].mean(dim=0)
        """,
    ),
    mutant(
        "masked_mean",
        "mean_over_batch_axis",
        ("(hidden * weights).sum(dim=1)", "(hidden * weights).sum(dim=0)"),
        ("weights.sum(dim=1)", "weights.sum(dim=0)"),
    ),
    # --- masked_mean: other correct answers ---
    alternative(
        "masked_mean",
        "plain_mean_without_padding",  # reads keep: cannot run on the meta device
        """
        def masked_mean(hidden, keep):
            if keep.all():  # no padding anywhere: the plain mean
                return hidden.mean(dim=1)
            weights = keep.unsqueeze(-1).to(hidden.dtype)  # (B, L, 1)
            return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1)
        """,
    ),
    alternative(
        "masked_mean",
        "where_and_einsum",
        """
        def masked_mean(hidden, keep):
            zeroed = torch.where(keep[..., None], hidden, torch.zeros_like(hidden))
            count = keep.sum(dim=-1, keepdim=True).clamp_min(1).to(hidden.dtype)
            return torch.einsum("bld->bd", zeroed) / count
        """,
    ),
    alternative(
        "masked_mean",
        "loop_over_texts",
        """
        def masked_mean(hidden, keep):
            rows = []
            for b in range(hidden.shape[0]):
                real = hidden[b][keep[b]]
                rows.append(real.mean(dim=0) if real.shape[0] else hidden.new_zeros(hidden.shape[-1]))
            return torch.stack(rows)
        """,
    ),
    # --- TransformerClassifier: mistakes ---
    mutant(
        "classifier",
        "scale_tensor_on_the_default_device",
        ("self.embedding(ids) * math.sqrt(self.d_model)", "self.embedding(ids) * torch.tensor(self.d_model).sqrt()"),
    ),
    mutant(
        "classifier",
        "no_sqrt_scaling",
        ("x = self.embedding(ids) * math.sqrt(self.d_model)  # (B, L, D)", "x = self.embedding(ids)  # (B, L, D)"),
    ),
    mutant("classifier", "scaled_by_d_model", ("* math.sqrt(self.d_model)", "* self.d_model")),
    mutant(
        "classifier",
        "default_embedding_init",
        ("        nn.init.normal_(self.embedding.weight, mean=0.0, std=d_model**-0.5)\n", ""),
    ),
    mutant("classifier", "init_std_one_over_d", ("std=d_model**-0.5", "std=1 / d_model")),
    mutant(
        "classifier",
        "pad_row_left_random",
        (
            "        with torch.no_grad():\n"
            "            self.embedding.weight[pad_idx].zero_()  # the zeros that padding_idx put there\n",
            "",
        ),
    ),
    mutant("classifier", "pooling_over_padding", ("masked_mean(x, keep)", "x.mean(dim=1)")),
    mutant("classifier", "mask_inverted", ("mask = keep[:, None, None, :]", "mask = ~keep[:, None, None, :]")),
    mutant("classifier", "mask_not_passed", ("x = layer(x, mask)", "x = layer(x)")),
    mutant("classifier", "mask_axes_misplaced", ("keep[:, None, None, :]", "keep[:, None, :, None]")),
    mutant(
        "classifier",
        "mask_from_embeddings",
        (
            "        mask = keep[:, None, None, :]",
            "        keep = x.sum(dim=-1) != 0\n        mask = keep[:, None, None, :]",
        ),
    ),
    mutant("classifier", "pad_idx_hard_coded_zero", ("keep = ids != self.pad_idx", "keep = ids != 0")),
    mutant(
        "classifier",
        "one_shared_layer",
        (
            "nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])",
            "nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout)] * num_layers)",
        ),
    ),
    mutant(
        "classifier",
        "layers_without_dropout",
        ("EncoderLayer(d_model, num_heads, d_ff, dropout)", "EncoderLayer(d_model, num_heads, d_ff)"),
    ),
    mutant(
        "classifier",
        "pre_ln_layers",
        ("EncoderLayer(d_model, num_heads, d_ff, dropout)", "EncoderLayer(d_model, num_heads, d_ff, dropout, True)"),
    ),
    mutant(
        "classifier",
        "positions_scaled_too",
        (
            "        x = self.embedding(ids) * math.sqrt(self.d_model)  # (B, L, D)\n"
            "        x = self.positions(x)  # (B, L, D)\n",
            "        x = self.positions(self.embedding(ids)) * math.sqrt(self.d_model)  # (B, L, D)\n",
        ),
    ),
    mutant(
        "classifier",
        "embeddings_cast_to_float32",  # right under autocast, where they are float32 anyway; a bfloat16 model fails
        ("x = self.embedding(ids) * math.sqrt", "x = self.embedding(ids).float() * math.sqrt"),
        spares=("classifier_structure", "classifier_init", "classifier_values", "classifier_padding"),
    ),
    # --- TransformerClassifier: other correct answers ---
    alternative(
        "classifier",
        "append_loop_and_view",
        """
        class TransformerClassifier(nn.Module):
            def __init__(self, vocab_size, num_classes=4, d_model=128, num_heads=4, d_ff=256, num_layers=2,
                         dropout=0.1, pad_idx=0, max_len=256):
                super().__init__()
                self.d_model, self.pad_idx = d_model, pad_idx
                self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_idx)
                with torch.no_grad():
                    self.embedding.weight.normal_(0.0, 1.0 / math.sqrt(d_model))
                    self.embedding.weight[pad_idx] = 0.0
                self.positions = LearnedPositionalEncoding(d_model, max_len=max_len, dropout=dropout)
                self.layers = nn.ModuleList()
                for _ in range(num_layers):
                    self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout=dropout))
                self.head = nn.Linear(d_model, num_classes)

            def forward(self, ids):
                batch, length = ids.shape
                keep = ids.ne(self.pad_idx)
                x = self.positions(self.embedding(ids) * self.d_model**0.5)
                for layer in self.layers:
                    x = layer(x, mask=keep.view(batch, 1, 1, length))
                return self.head(masked_mean(x, keep))
        """,
    ),
    # --- FixedBlogClassifier: mistakes ---
    mutant(
        "blog_fix",
        "bug_left_in",
        (
            "        padding = ids == self.pad_idx  # (B, L): True at padding, PyTorch's convention\n",
            "",
        ),
        (
            "        x = self.encoder(x, src_key_padding_mask=padding)",
            "        padding = x.sum(dim=-1) == 0\n        x = self.encoder(x, src_key_padding_mask=padding)",
        ),
    ),
    mutant(
        "blog_fix", "course_convention_inverted", ("padding = ids == self.pad_idx", "padding = ids != self.pad_idx")
    ),
    mutant("blog_fix", "pad_id_hard_coded_zero", ("padding = ids == self.pad_idx", "padding = ids == 0")),
    mutant(
        "blog_fix",
        "mask_from_embeddings_before_positions",
        ("padding = ids == self.pad_idx", "padding = self.token_embedding(ids).sum(dim=-1) == 0"),
    ),
    mutant("blog_fix", "pooling_not_fixed", ("masked_mean(x, ~padding)", "x.mean(dim=1)")),
    mutant(
        "blog_fix",
        "positions_dropped",  # padding-safe, but no longer the blog's model
        (
            "x = self.token_embedding(ids) + self.position_embedding(positions)",
            "x = self.token_embedding(ids)",
        ),
        spares=("blog_fix_mask", "blog_fix_padding_invariance"),
    ),
    mutant("blog_fix", "attention_not_masked", ("self.encoder(x, src_key_padding_mask=padding)", "self.encoder(x)")),
    mutant(
        "blog_fix",
        "keep_mask_given_to_pytorch",
        ("src_key_padding_mask=padding", "src_key_padding_mask=~padding"),
    ),
    # --- FixedBlogClassifier: other correct answers ---
    alternative(
        "blog_fix",
        "keep_mask_first",
        """
        class FixedBlogClassifier(BlogClassifier):
            def forward(self, ids):
                keep = ids.ne(self.pad_idx)
                x = self.token_embedding(ids) + self.position_embedding.weight[: ids.shape[1]]
                x = self.encoder(x, src_key_padding_mask=keep.logical_not())
                return self.classifier(masked_mean(x, keep))
        """,
    ),
    # --- extra_credit_pooling (extra credit): mistakes ---
    mutant(
        "extra_credit_pooling",
        "gated_sum_over_the_padding",
        ("(gates * hidden).masked_fill(~keep.unsqueeze(-1), 0.0)", "gates * hidden"),
        spares=("extra_credit_pooling_keyword", "extra_credit_pooling_device"),
    ),
    mutant(
        "extra_credit_pooling",
        "divided_by_the_padded_length",  # values at the padding cannot matter, but their number does
        ("return terms.sum(dim=1)", "return terms.sum(dim=1) / hidden.shape[1]"),
    ),
    mutant(
        "extra_credit_pooling",
        "divided_by_the_text_length",  # a gated mean: the count becomes a proportion again
        ("return terms.sum(dim=1)", "return terms.sum(dim=1) / keep.sum(dim=1, keepdim=True)"),
        spares=("extra_credit_pooling_padding", "extra_credit_pooling_device"),
    ),
    mutant(
        "extra_credit_pooling",
        "mean_over_every_position",
        source="""
        def make_pooling(d_model):
            class Mean(nn.Module):
                def forward(self, hidden, keep):
                    return hidden.mean(dim=1)

            return Mean()
        """,
    ),
    mutant(
        "extra_credit_pooling",
        "masked_mean_dilutes_the_keyword",
        source="""
        def make_pooling(d_model):
            class Mean(nn.Module):
                def forward(self, hidden, keep):
                    weights = keep.to(hidden.dtype).unsqueeze(-1)
                    kept = hidden.masked_fill(~keep.unsqueeze(-1), 0.0)  # NaN at the padding stays out
                    return kept.sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)

            return Mean()
        """,
        spares=("extra_credit_pooling_padding", "extra_credit_pooling_device"),
    ),
    mutant(
        "extra_credit_pooling",
        "attention_pooling_sees_one_keyword_as_two",  # weights that sum to 1: one keyword or two, the same vector
        source="""
        def make_pooling(d_model):
            class AttentionPooling(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.score = nn.Linear(d_model, 1)

                def forward(self, hidden, keep):
                    scores = self.score(hidden).squeeze(-1).masked_fill(~keep, torch.finfo(hidden.dtype).min)
                    kept = hidden.masked_fill(~keep.unsqueeze(-1), 0.0)  # NaN at the padding stays out
                    return (scores.softmax(dim=-1).unsqueeze(-1) * kept).sum(dim=1)

            return AttentionPooling()
        """,
        spares=("extra_credit_pooling_padding", "extra_credit_pooling_device"),
    ),
    mutant(
        "extra_credit_pooling",
        "max_after_a_projection_sees_one_keyword_as_two",
        source="""
        def make_pooling(d_model):
            class ProjectedMax(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.project = nn.Linear(d_model, d_model)

                def forward(self, hidden, keep):
                    features = self.project(hidden)
                    return features.masked_fill(~keep[..., None], torch.finfo(features.dtype).min).amax(dim=1)

            return ProjectedMax()
        """,
        spares=("extra_credit_pooling_padding", "extra_credit_pooling_device"),
    ),
    mutant(
        "extra_credit_pooling",
        "padding_filled_with_zero_before_the_max",
        source="""
        def make_pooling(d_model):
            class Max(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.project = nn.Linear(d_model, d_model)

                def forward(self, hidden, keep):
                    return self.project(hidden).masked_fill(~keep.unsqueeze(-1), 0.0).amax(dim=1)

            return Max()
        """,
    ),
    mutant(
        "extra_credit_pooling",
        "padding_zeros_made_on_the_default_device",
        (
            "terms = (gates * hidden).masked_fill(~keep.unsqueeze(-1), 0.0)",
            "terms = torch.where(keep.unsqueeze(-1), gates * hidden, torch.zeros(hidden.shape))",
        ),
        spares=("extra_credit_pooling_padding", "extra_credit_pooling_keyword"),
    ),
    # Sums without a learned choice of words: 1,000 words in 64 features leave no direction of the vectors that reads
    # the keyword alone, so every other word adds its share to the count (about 80 % on the keyword-count task).
    mutant(
        "extra_credit_pooling",
        "sum_without_parameters",
        source="""
        def make_pooling(d_model):
            class MaskedSum(nn.Module):
                def forward(self, hidden, keep):
                    return hidden.masked_fill(~keep.unsqueeze(-1), 0.0).sum(dim=1)

            return MaskedSum()
        """,
        spares=("extra_credit_pooling_padding", "extra_credit_pooling_device"),
    ),
    mutant(
        "extra_credit_pooling",
        "sum_of_a_linear_projection",  # W h + b summed is W (sum of h) + n b: still the plain sum, and the length
        source="""
        def make_pooling(d_model):
            class ProjectedSum(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.project = nn.Linear(d_model, d_model)

                def forward(self, hidden, keep):
                    return torch.where(keep[..., None], self.project(hidden), 0.0).sum(dim=1)

            return ProjectedSum()
        """,
        spares=("extra_credit_pooling_padding", "extra_credit_pooling_device"),
    ),
    # --- extra_credit_pooling: other correct answers ---
    alternative(
        "extra_credit_pooling",
        "attention_with_a_learned_sink",
        """
        def make_pooling(d_model):
            # Attention pooling plus one learned score for "nothing": the weights of the real tokens no longer
            # sum to 1, so two keywords get more weight than one.
            class SinkAttention(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.score = nn.Linear(d_model, 1)
                    self.sink = nn.Parameter(torch.zeros(1))

                def forward(self, hidden, keep):
                    scores = self.score(hidden).squeeze(-1)
                    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
                    with_sink = torch.cat([scores, self.sink.expand(scores.shape[0], 1)], dim=1)
                    weights = with_sink.softmax(dim=-1)[:, :-1]
                    return torch.einsum("bl,bld->bd", weights, hidden.masked_fill(~keep[..., None], 0.0))

            return SinkAttention()
        """,
    ),
    alternative(
        "extra_credit_pooling",
        "sum_of_relu_features",
        """
        def make_pooling(d_model):
            # Deep Sets: a feature per token, then a sum. The ReLU lets a feature fire for the keyword and stay at
            # zero for the other words, which a linear projection cannot.
            class FeatureSum(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.features = nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU())

                def forward(self, hidden, keep):
                    return self.features(hidden).masked_fill(~keep.unsqueeze(-1), 0.0).sum(dim=1)

            return FeatureSum()
        """,
    ),
]

# --- Issue 51: answers gamed to pass the visible tests; the hidden tests fail each ---
VARIANTS += [
    mutant(
        "extra_credit_pooling",
        "padding_multiplied_by_the_mask",  # large values times 0 are 0; NaN times 0 is NaN, inf times 0 too
        ("(gates * hidden).masked_fill(~keep.unsqueeze(-1), 0.0)", "gates * hidden * keep.unsqueeze(-1)"),
        spares=("extra_credit_pooling_keyword", "extra_credit_pooling_device"),
    ),
    mutant(
        "extra_credit_pooling",
        "sum_started_on_the_cpu",  # a fixed device: right wherever hidden is on the CPU
        ("return terms.sum(dim=1)  # (B, D)",
         'pooled = torch.zeros(hidden.size(0), hidden.size(2), device="cpu")  # (B, D)\n'
         "            return pooled + terms.sum(dim=1)"),
        spares=("extra_credit_pooling_padding", "extra_credit_pooling_keyword"),
    ),
]
