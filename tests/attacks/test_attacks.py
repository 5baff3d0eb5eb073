"""Text attacks: each does what it promises, reproducibly, and the watermark reads weaker after it."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from waterdrum_hf import attacks
from waterdrum_hf.attacks.sources import vocabulary_words

DEMO_DATA = (
    Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "demo" / "watermarked.jsonl"
)

# Distinct words, so that which words an attack touched can be read off the output.
WORDS = [f"w{i}" for i in range(50)]
TEXT = " ".join(WORDS)


def is_subsequence(short, long):
    remaining = iter(long)
    return all(word in remaining for word in short)


def test_names_lists_every_attack_and_the_package_exports_it():
    import subprocess
    import sys

    import waterdrum_hf

    assert attacks.names() == (
        "deletion", "substitution", "insertion", "copy_paste", "truncation", "paraphrase",
    )  # fmt: skip
    assert "attacks" in waterdrum_hf.__all__ and waterdrum_hf.attacks.apply is attacks.apply
    # Word-level attacks need no torch: importing them does not load it.
    code = "import sys, waterdrum_hf.attacks; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_parse_reads_name_colon_strength():
    assert attacks.parse("deletion:0.2") == ("deletion", 0.2)
    assert attacks.parse(" copy_paste : 1 ") == ("copy_paste", 1.0)
    with pytest.raises(ValueError, match="NAME:STRENGTH, e.g. deletion:0.2"):
        attacks.parse("deletion")
    with pytest.raises(ValueError, match="unknown attack 'synonym'"):
        attacks.parse("synonym:0.2")
    with pytest.raises(ValueError, match="must be a number in \\[0, 1\\], e.g. deletion:0.2"):
        attacks.parse("deletion:much")
    with pytest.raises(ValueError, match="`strength` must be in \\[0, 1\\]"):
        attacks.parse("deletion:1.5")


@pytest.mark.parametrize(
    ("num_words", "strength", "removed"),
    [
        (10, 0.2, 2),
        (10, 0.25, 3),
        (10, 0.24, 2),
        (10, 0.15, 2),
        (7, 0.5, 4),
        (3, 0.1, 0),
        (5, 1.0, 5),
    ],
)
def test_deletion_removes_the_share_rounded_half_up(num_words, strength, removed):
    text = " ".join(WORDS[:num_words])
    (out,) = attacks.apply([text], "deletion", strength)
    kept = out.split()
    assert len(kept) == num_words - removed
    assert attacks.affected(strength, num_words) == removed  # the documented rule: floor(s n + 1/2)
    assert is_subsequence(kept, WORDS[:num_words])  # the rest, in order


def test_deletion_at_0_2_removes_about_20_percent_of_real_text(texts):
    out = attacks.apply(texts, "deletion", 0.2, seed=3)
    before = sum(len(t.split()) for t in texts)
    after = sum(len(t.split()) for t in out)
    assert (before - after) / before == pytest.approx(0.2, abs=0.5 * len(texts) / before)


def test_every_attack_at_strength_0_is_the_identity():
    texts = ["  odd\twhitespace\n\nkept  ", TEXT, "", "one"]
    for name in attacks.names():
        # Strength 0 generates nothing, so placeholders stand in for the paraphraser.
        out = attacks.apply(texts, name, 0.0, model=object(), tokenizer=object(), source=["x y"])
        assert out == texts, name


def test_substitution_keeps_the_word_count_and_changes_the_share_asked():
    others = [" ".join(f"v{i}" for i in range(30))]
    out = attacks.apply([TEXT, *others], "substitution", 0.3, seed=1)
    changed = [a != b for a, b in zip(WORDS, out[0].split(), strict=True)]
    assert len(out[0].split()) == len(WORDS) and sum(changed) == 15
    pool = set(WORDS) | set(others[0].split())
    assert set(out[0].split()) <= pool  # words of the given texts


def test_substitution_keeps_punctuation_and_draws_vocabulary_words(tiny_model):
    _, tokenizer = tiny_model
    text = " ".join(["(such,", "words:", "are."] * 5)
    (out,) = attacks.apply([text], "substitution", 1.0, seed=0, tokenizer=tokenizer)
    vocabulary = set(vocabulary_words(tokenizer)[0])
    for before, after in zip(text.split(), out.split(), strict=True):
        core = before.strip("(,:.")
        start, end = before.index(core), before.index(core) + len(core)
        assert after.startswith(before[:start]) and after.endswith(before[end:])
        new = after[start : len(after) - (len(before) - end)]
        assert new in vocabulary and new.lower() != core.lower()


def test_insertion_adds_the_share_around_the_original_words():
    others = " ".join(f"v{i}" for i in range(30))
    out, _ = attacks.apply([TEXT, others], "insertion", 0.2, seed=4)
    words = out.split()
    assert len(words) == len(WORDS) + 10
    assert is_subsequence(WORDS, words)  # every original word, in order
    assert set(words) <= set(WORDS) | set(others.split())  # words of the given texts


def test_truncation_keeps_a_prefix():
    text = "The first words\nof a text, cut  from its end."
    for strength in (0.1, 0.5, 0.9):
        (out,) = attacks.apply([text], "truncation", strength)
        n = len(text.split())
        assert text.startswith(out) and out == out.rstrip()
        assert out.split() == text.split()[: n - attacks.affected(strength, n)]
    assert attacks.apply([text], "truncation", 1.0) == [""]


def test_copy_paste_replaces_a_run_of_the_share_with_source_text():
    source = ["alpha beta gamma delta", "epsilon zeta eta theta iota"]
    for seed in range(5):
        (out,) = attacks.apply([TEXT], "copy_paste", 0.2, seed=seed, source=source)
        words = out.split()
        assert len(words) == len(WORDS)
        changed = [i for i, (a, b) in enumerate(zip(WORDS, words, strict=True)) if a != b]
        assert len(changed) == 10 and changed == list(range(changed[0], changed[0] + 10))
        pasted = " ".join(words[changed[0] : changed[0] + 10])
        assert pasted in " ".join(source * 3)  # source words, in order, continued cyclically


def test_copy_paste_without_source_says_what_to_pass():
    with pytest.raises(ValueError, match="copy_paste needs `source`"):
        attacks.apply([TEXT], "copy_paste", 0.2)
    with pytest.raises(ValueError, match="`source` holds no word"):
        attacks.apply([TEXT], "copy_paste", 0.2, source=["", "  "])


def test_same_seed_same_output_and_texts_draw_independently():
    texts = [TEXT, TEXT, " ".join(reversed(WORDS))]
    for name in ("deletion", "substitution", "insertion", "copy_paste"):
        first = attacks.apply(texts, name, 0.3, seed=5, source=["a b c d e"])
        assert first == attacks.apply(texts, name, 0.3, seed=5, source=["a b c d e"])
        assert first != attacks.apply(texts, name, 0.3, seed=6, source=["a b c d e"])
        assert first[0] != first[1]  # a repeated text gets its own draws
        # A text is edited the same way wherever it stands in the list (unless it draws its
        # words from the texts given: then they are part of what it draws from).
        alone = attacks.apply(texts[2:], name, 0.3, seed=5, source=["a b c d e"])
        assert (alone[0] == first[2]) == (name in ("deletion", "copy_paste"))


def test_a_weaker_attack_touches_a_subset_of_the_words_of_a_stronger_one():
    weak, strong = (attacks.apply([TEXT], "deletion", s, seed=2)[0] for s in (0.2, 0.4))
    assert set(strong.split()) <= set(weak.split())
    weak, strong = (attacks.apply([TEXT], "substitution", s, seed=2)[0] for s in (0.2, 0.4))
    changed = [
        {i for i, (a, b) in enumerate(zip(WORDS, t.split(), strict=True)) if a != b}
        for t in (weak, strong)
    ]
    assert changed[0] < changed[1]


def test_bad_input_is_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="unknown attack 'typo'.*deletion"):
        attacks.apply([TEXT], "typo", 0.2)
    for strength in (-0.1, 1.5, math.nan):
        with pytest.raises(ValueError, match="`strength` must be in \\[0, 1\\]"):
            attacks.apply([TEXT], "deletion", strength)
    for strength in (True, "0.2"):
        with pytest.raises(TypeError, match="`strength` must be a number"):
            attacks.apply([TEXT], "deletion", strength)
    with pytest.raises(TypeError, match="texts must be a list of strings"):
        attacks.apply(TEXT, "deletion", 0.2)
    with pytest.raises(TypeError, match="texts\\[1\\] must be a str"):
        attacks.apply([TEXT, 3], "deletion", 0.2)
    with pytest.raises(ValueError, match="`seed` must be >= 0"):
        attacks.apply([TEXT], "deletion", 0.2, seed=-1)
    with pytest.raises(ValueError, match="paraphrase attack needs a paraphrasing `model`"):
        attacks.apply([TEXT], "paraphrase", 0.2)
    with pytest.raises(ValueError, match="need the model's `tokenizer`"):
        attacks.apply([TEXT], "substitution", 0.2, model=object())
    with pytest.raises(ValueError, match="at least two distinct words"):
        attacks.apply(["same same same"], "substitution", 0.5)


def brute_force_neighbour(word, embeddings, tokenizer):
    """The vocabulary word (decoded token, stripped, alphabetic, >= 2 letters, not ``word``)
    whose embedding has the largest cosine with the mean embedding of ``" " + word``."""
    target = embeddings[tokenizer(" " + word, add_special_tokens=False)["input_ids"]].mean(axis=0)
    best, best_cosine = None, -np.inf
    for token in range(tokenizer.vocab_size):
        piece = tokenizer.decode([token]).strip()
        if len(piece) < 2 or not piece.isalpha() or piece.lower() == word.lower():
            continue
        row = embeddings[token]
        cosine = row @ target / (np.linalg.norm(row) * np.linalg.norm(target))
        if cosine > best_cosine:
            best, best_cosine = piece, cosine
    return best


def test_embedding_substitution_picks_the_nearest_neighbour(tiny_model):
    model, tokenizer = tiny_model
    embeddings = model.get_input_embeddings().weight.detach().double().numpy()
    words = ["function", "class", "module", "returns", "value", "exception"]
    (out,) = attacks.apply([" ".join(words)], "substitution", 1.0, model=model, tokenizer=tokenizer)
    assert out.split() == [brute_force_neighbour(w, embeddings, tokenizer) for w in words]


def demo_sample():
    """The demo's committed watermarked passages and their owners' keys (the demo draws them
    with ``random_keys(owners, seed=0)``)."""
    from waterdrum_hf.keys import random_keys

    rows = [json.loads(line) for line in DEMO_DATA.read_text().splitlines()]
    keys = random_keys(6, seed=0).tolist()
    return [r["text"] for r in rows], [keys[int(r["owner"].split("-")[1]) - 1] for r in rows]


@pytest.mark.parametrize("name", ["deletion", "substitution", "insertion", "copy_paste"])
def test_watermark_scores_fall_as_the_strength_rises(tiny_model, name):
    from waterdrum_hf.data import toy_corpus
    from waterdrum_hf.scoring.verification import verify_texts

    _, tokenizer = tiny_model
    texts, keys = demo_sample()
    source = list(toy_corpus(6)["text"])  # unwatermarked passages
    means = []
    for strength in (0.0, 0.2, 0.5):
        edited = attacks.apply(texts, name, strength, source=source)
        means.append(float(np.nanmean(verify_texts(edited, keys, tokenizer))))
    assert means[0] > 0.5  # the committed sample carries its owners' keys
    assert means[0] > means[1] > means[2]


def test_paraphrase_rewrites_the_share_without_the_watermark(tiny_model):
    from waterdrum_hf.scoring.verification import verify_texts

    model, tokenizer = tiny_model
    texts, keys = demo_sample()
    texts, keys = texts[::10], keys[::10]
    half = attacks.apply(texts, "paraphrase", 0.5, seed=0, model=model, tokenizer=tokenizer)
    whole = attacks.apply(texts, "paraphrase", 1.0, seed=0, model=model, tokenizer=tokenizer)
    assert whole == attacks.apply(
        texts, "paraphrase", 1.0, seed=0, model=model, tokenizer=tokenizer
    )
    for text, edited in zip(texts, half, strict=True):  # one run of words rewritten in place
        words, new = text.split(), edited.split()
        same_start = next(i for i, (a, b) in enumerate(zip(words, new, strict=False)) if a != b)
        same_end = next(
            i for i, (a, b) in enumerate(zip(words[::-1], new[::-1], strict=False)) if a != b
        )
        assert same_start + same_end >= len(words) - attacks.affected(0.5, len(words))
    scores = [float(np.nanmean(verify_texts(t, keys, tokenizer))) for t in (texts, half, whole)]
    assert scores[0] > 0.5 and scores[0] > scores[1] > scores[2] and scores[2] < 0.25


def test_chain_applies_each_attack_in_order_to_every_querys_samples():
    samples = [[TEXT, TEXT], [TEXT]]
    chained = attacks.chain(samples, ["deletion:0.2", "truncation:0.5"], seed=4)
    flat = attacks.apply(attacks.apply([TEXT] * 3, "deletion", 0.2, 4), "truncation", 0.5, 4)
    assert chained == [flat[:2], flat[2:]]
    assert [len(s.split()) for q in chained for s in q] == [20, 20, 20]  # 50 - 10, then half
    assert chained[0][0] != chained[0][1]  # repeated samples draw independently
    assert attacks.chain(samples, [], seed=4) == samples
    assert attacks.spec(*attacks.parse("deletion: 0.20")) == "deletion:0.2"
    assert attacks.parse(attacks.spec("copy_paste", 1)) == ("copy_paste", 1.0)
    with pytest.raises(ValueError, match="needs a paraphrasing `model`"):
        attacks.chain(samples, ["paraphrase:0.5"])


def library_paraphrase(model, tokenizer, texts, seed, penalty):
    """What the paraphrase attack documents for a whole text: one sampled, unwatermarked
    (kappa 0) candidate of the library's paraphraser, no 3-gram repeated, with the model's
    repetition penalty; ``texts`` are generated as one batch, seeded from ``seed``."""
    from waterdrum_hf.generation.paraphraser import Paraphraser
    from waterdrum_hf.watermarking.config import WatermarkingConfig

    config = WatermarkingConfig(
        kappa=0.0, do_sample=True, num_beam_groups=1, beams_per_group=1,
        no_repeat_ngram_size=3, repetition_penalty=penalty, seed=seed,
    )  # fmt: skip
    watermark = config.watermark_scheme().logits_processor(
        tokenizer.vocab_size, 0, **config.writer_settings()
    )  # Waterfall at kappa 0: the attack runs without one, which must be the same
    paraphraser = Paraphraser(model, tokenizer, config, watermark)
    prompts = [paraphraser.prompt_ids(text) for text in texts]
    return [row[0] for row in paraphraser.candidates(prompts, texts, [0] * len(texts))]


def test_paraphrase_at_full_strength_is_one_unwatermarked_sample(tiny_model):
    """Strength 1 replaces each text by the library paraphraser's single sampled, unwatermarked
    candidate, generated with the tiny model's own repetition penalty (1.3) and no repeated
    3-gram (text 20 at seed 0 repeats one without that rule), batches seeded from ``seed``."""
    model, tokenizer = tiny_model
    texts, _ = demo_sample()
    assert model.generation_config.repetition_penalty == 1.3
    for batch, seed in (([texts[20]], 0), ([texts[5], texts[40]], 2)):
        expected = library_paraphrase(model, tokenizer, batch, seed, penalty=1.3)
        out = attacks.apply(batch, "paraphrase", 1.0, seed=seed, model=model, tokenizer=tokenizer)
        assert out == expected and out != batch


def test_paraphrase_without_a_model_penalty_uses_none(tiny_model, monkeypatch):
    """A model whose generation config sets no repetition penalty is paraphrased with penalty
    1, i.e. none."""
    model, tokenizer = tiny_model
    texts, _ = demo_sample()
    batch = [texts[5], texts[40]]
    expected = library_paraphrase(model, tokenizer, batch, 2, penalty=1.0)
    monkeypatch.setattr(model.generation_config, "repetition_penalty", None)
    out = attacks.apply(batch, "paraphrase", 1.0, seed=2, model=model, tokenizer=tokenizer)
    assert out == expected


class UpperCaseParaphraser:
    """Stands in for the library's paraphraser: "rewrites" each run in upper case and records
    the runs it was given, so the attack's splicing can be read off its output."""

    runs: list[str] = []

    def __init__(self, model, tokenizer, config):
        self.config = config

    def prompt_ids(self, text):
        return [0]

    def candidates(self, prompts, texts, ids):
        UpperCaseParaphraser.runs += texts
        return [[text.upper()] for text in texts]


def test_paraphrase_splices_each_run_of_k_words_back_in_place(monkeypatch, capsys):
    """``counts[i]`` consecutive whole words of text ``i`` are rewritten (none for a count of
    0, one for 1) and spliced back with the whitespace around and inside the run kept; every
    batch's rewrites come back, and the progress bar is called "paraphrasing"."""
    import torch

    from waterdrum_hf.attacks.paraphrase import paraphrase_spans
    from waterdrum_hf.attacks.words import Words, text_rngs

    monkeypatch.setattr("waterdrum_hf.generation.paraphraser.Paraphraser", UpperCaseParaphraser)
    monkeypatch.setattr(UpperCaseParaphraser, "runs", [])
    texts = [
        "untouched text here",
        " alpha beta\tgamma  delta\nepsilon zeta eta ",
        "one two three four",
        "lonely",
    ]
    counts = [0, 3, 1, 1]
    for seed in range(4):
        out = paraphrase_spans(
            [Words.of(t) for t in texts], counts, text_rngs(texts, "paraphrase", seed),
            model=torch.nn.Module(), tokenizer=None, seed=seed, batch_size=1, show_progress=True,
        )  # fmt: skip
        assert [o.lower() for o in out] == texts  # only the runs changed, whitespace kept
        for text, edited, k in zip(texts, out, counts, strict=True):
            upper = [i for i, word in enumerate(edited.split()) if word.isupper()]
            assert upper == (list(range(upper[0], upper[0] + k)) if k else [])
            assert sum(w.islower() for w in edited.split()) == len(text.split()) - k
    runs = UpperCaseParaphraser.runs
    assert len(runs) == 4 * 3 and all(run == run.strip() for run in runs)
    assert re.search(r"(?:^|\r)paraphrasing: ", capsys.readouterr().err)
    paraphrase_spans(
        [Words.of(texts[2])], [1], text_rngs(texts[2:3], "paraphrase", 0), model=torch.nn.Module(),
        tokenizer=None, seed=0, batch_size=1, show_progress=False,
    )  # fmt: skip
    assert capsys.readouterr().err == ""


def test_paraphrase_refuses_counts_or_generators_not_one_per_text(monkeypatch):
    """Texts, counts and generators of different lengths are refused, not silently cut."""
    import torch

    from waterdrum_hf.attacks.paraphrase import paraphrase_spans
    from waterdrum_hf.attacks.words import Words, text_rngs

    monkeypatch.setattr("waterdrum_hf.generation.paraphraser.Paraphraser", UpperCaseParaphraser)
    texts = ["one two", "three four"]
    with pytest.raises(ValueError, match="shorter|longer"):
        paraphrase_spans(
            [Words.of(t) for t in texts], [1], text_rngs(texts, "paraphrase", 0),
            model=torch.nn.Module(), tokenizer=None, seed=0, batch_size=1, show_progress=False,
        )  # fmt: skip


class PieceTokenizer:
    """A tokenizer stand-in: token ``i`` decodes to ``pieces[i]``; a word encodes to the token
    of its stripped text."""

    def __init__(self, pieces, vocab_size=None):
        self.pieces = list(pieces)
        self.vocab_size = len(self.pieces) if vocab_size is None else vocab_size

    def batch_decode(self, ids):
        return [self.pieces[i] for (i,) in ids]

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": [self.pieces.index(text.strip())]}


class EmbeddingModel:
    """A model stand-in with the given input embeddings."""

    def __init__(self, weight):
        import torch

        self.embedding = torch.nn.Embedding.from_pretrained(torch.tensor(weight))

    def get_input_embeddings(self):
        return self.embedding


def test_vocabulary_words_are_alphabetic_tokens_of_two_letters_or_more():
    """Decoded tokens below ``vocab_size``, stripped, that are alphabetic and at least two
    letters long (non-ASCII letters too), with their ids in id order."""
    pieces = [" the", "a", "to", "12", "a1", " Zebra ", "", "ét", "\n", "x-y", "added"]
    tokenizer = PieceTokenizer(pieces, vocab_size=10)  # "added" is above the base vocabulary
    assert vocabulary_words(tokenizer) == (["the", "to", "Zebra", "ét"], [0, 2, 5, 7])


def test_pool_sources_never_return_the_word_asked_about_case_ignored():
    """Two distinct words are enough to draw from, and a draw is never the word asked about,
    whatever its case."""
    from waterdrum_hf.attacks.sources import TextWords, VocabularyWords

    rng = np.random.default_rng(0)
    for source in (TextWords(["yes, No"]), VocabularyWords(PieceTokenizer(["yes", "No", "!"]))):
        assert {source.draw(rng, "yes") for _ in range(20)} == {"No"}
        assert {source.draw(rng, "YES") for _ in range(20)} == {"No"}
        assert {source.draw(rng, "no") for _ in range(20)} == {"yes"}
        assert {source.draw(rng, "other") for _ in range(50)} == {"yes", "No"}


def test_too_few_words_to_draw_from_names_the_input_to_change():
    """Fewer than two distinct words is refused, naming where the words came from."""
    from waterdrum_hf.attacks.sources import EmbeddingNeighbours, TextWords, VocabularyWords

    with pytest.raises(ValueError, match="and the given texts has 1: pass longer texts"):
        TextWords(["same, same", ""])
    with pytest.raises(ValueError, match="and the tokenizer's vocabulary has 1: pass longer"):
        VocabularyWords(PieceTokenizer(["word", "!", "x"]))
    model = EmbeddingModel([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="fewer than two whole words"):
        EmbeddingNeighbours(model, PieceTokenizer(["word", "WORD", "!"]))


def test_embedding_neighbours_of_a_two_word_vocabulary():
    """With two whole words in the vocabulary, each word's neighbour is the other one, and a
    word outside it gets the one nearest by cosine (not the first)."""
    from waterdrum_hf.attacks.sources import EmbeddingNeighbours

    pieces = ["ab", "cd", "!", "ef-gh"]
    model = EmbeddingModel([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.1, 5.0]])
    neighbours = EmbeddingNeighbours(model, PieceTokenizer(pieces))
    assert neighbours.draw(None, "ab") == "cd" and neighbours.draw(None, "cd") == "ab"
    assert neighbours.draw(None, "ef-gh") == "cd"


def test_embedding_neighbour_of_words_outside_the_vocabulary(tiny_model):
    """Words the vocabulary does not hold as one token get their nearest vocabulary word too."""
    model, tokenizer = tiny_model
    embeddings = model.get_input_embeddings().weight.detach().double().numpy()
    words = ["xylophonequux", "Zebrafish", "qqzz"]
    (out,) = attacks.apply([" ".join(words)], "substitution", 1.0, model=model, tokenizer=tokenizer)
    assert out.split() == [brute_force_neighbour(w, embeddings, tokenizer) for w in words]


def test_attack_draws_are_pinned_so_committed_results_stay_reproducible():
    """The draws of a seed never change (benchmarks/results/robustness was computed from
    them): a text's first occurrence and its repeat get these deletions at seed 7."""
    text = " ".join(WORDS[:10])
    assert attacks.apply([text, text, "a b c d e"], "deletion", 0.3, seed=7) == [
        "w0 w1 w3 w4 w5 w6 w9",
        "w1 w2 w3 w5 w7 w8 w9",
        "c d e",
    ]


def test_words_of_a_text_without_words():
    """A text with no word (empty or whitespace only) splits into no words, no word ends,
    and whitespace that gives the text back; attacks return it unchanged beside others."""
    from waterdrum_hf.attacks.words import Words

    for text in ("", "  \n\t "):
        words = Words.of(text)
        assert (words.text, words.words, words.ends, words.strings()) == (text, (), (), [])
        assert words.lead + words.trail == text and len(words) == 0
    texts = ["  \n\t ", TEXT, ""]
    for name in ("deletion", "substitution", "insertion", "copy_paste", "truncation"):
        out = attacks.apply(texts, name, 0.5, source=["x y"])
        assert out[0] == "  \n\t " and out[2] == "" and out[1] != TEXT, name


def test_words_of_keeps_the_whitespace_between_words():
    """Each word after the first carries the exact whitespace before it; the text is
    lead + w0 + space1 + w1 + ... + trail, with each word's end in the text."""
    from waterdrum_hf.attacks.words import Words

    text = " \tone  two\nthree\r\n\tfour "
    words = Words.of(text)
    assert words.strings() == ["one", "two", "three", "four"]
    assert [w.space for w in words.words[1:]] == ["  ", "\n", "\r\n\t"]
    assert (words.lead, words.trail, words.ends) == (" \t", " ", (5, 10, 16, 23))
    assert words.join(words.words) == text


ODD_SPACES = "w0\tw1  w2\nw3 w4\r\nw5\t\tw6 w7  w8\nw9"


def spaces(text):
    """The whitespace runs between a text's words, in order."""
    return re.findall(r"\s+", text.strip())


@pytest.mark.parametrize("name", ["substitution", "copy_paste"])
def test_in_place_attacks_keep_the_whitespace_between_words(name):
    """Substitution and copy_paste replace words in place: the whitespace between every two
    words (tabs, newlines, runs of spaces) stays as it was."""
    for seed in range(3):
        (out, _) = attacks.apply([ODD_SPACES, "v0 v1 v2 v3"], name, 0.5, seed=seed, source=["x y"])
        assert spaces(out) == spaces(ODD_SPACES) and out != ODD_SPACES


def test_copy_paste_at_full_strength_pastes_the_source_continued_cyclically():
    """At strength 1 every word is replaced, by the words of a drawn source text continued by
    the next ones in order (wrapping around to the first)."""
    source = ["a1 a2", "b1 b2 b3", "c1"]
    cycle = " ".join(source * 3).split()
    seen = set()
    for seed in range(8):
        (out,) = attacks.apply([" ".join(WORDS[:7])], "copy_paste", 1.0, seed=seed, source=source)
        pasted = out.split()
        first = cycle.index(pasted[0])
        assert pasted == cycle[first : first + 7]
        seen.add(pasted[0])
    assert seen == {"a1", "b1", "c1"}  # any source text may come first


class EchoSource:
    """A word source that answers ``CORE*`` for the core ``core``, so the word asked about can
    be read off the output."""

    def draw(self, rng, word):
        return word.upper() + "*"


def test_insertion_draws_for_the_word_before_the_gap_and_uses_every_gap():
    """One inserted word goes into any gap, after the last word and into a one-word text too;
    it is drawn for the core of the word before it (the word after it, at the start) and set
    off by single spaces, the rest of the text unchanged."""
    from waterdrum_hf.attacks import edits
    from waterdrum_hf.attacks.words import Words

    text = "(alpha, beta\tgamma. delta"
    cores = ["ALPHA*", "ALPHA*", "BETA*", "GAMMA*", "DELTA*"]
    gaps = set()
    for seed in range(40):
        out = edits.insertion(Words.of(text), 1, np.random.default_rng(seed), EchoSource())
        gap = next(i for i, word in enumerate(out.split()) if word.endswith("*"))
        gaps.add(gap)
        assert out.split()[gap] == cores[gap]
        expected = {
            0: "ALPHA* (alpha, beta\tgamma. delta",
            1: "(alpha, ALPHA* beta\tgamma. delta",
            2: "(alpha, beta BETA*\tgamma. delta",
            3: "(alpha, beta\tgamma. GAMMA* delta",
            4: "(alpha, beta\tgamma. delta DELTA*",
        }
        assert out == expected[gap]
    assert gaps == {0, 1, 2, 3, 4}
    for seed in range(2):
        out = edits.insertion(Words.of(" one! "), 1, np.random.default_rng(seed), EchoSource())
        assert out in (" ONE* one! ", " one! ONE* ")


# --- chain and apply pass each attack what it needs; their defaults and refusals. -----------

VOCABULARY = ["alpha", "beta", "gamma"]


def test_chain_passes_substitution_and_insertion_the_tokenizer_and_copy_paste_the_source():
    """With a tokenizer, substituted and inserted words are its vocabulary's (never the
    samples' own ``w`` words); copy_paste pastes ``source``; each as apply would."""
    tokenizer = PieceTokenizer(VOCABULARY)
    samples = [[TEXT], [TEXT, " ".join(reversed(WORDS))]]
    flat = [TEXT, TEXT, " ".join(reversed(WORDS))]
    (substituted,), _ = attacks.chain(samples, ["substitution:1"], 3, tokenizer=tokenizer)
    assert set(substituted.split()) <= set(VOCABULARY)
    (inserted,), _ = attacks.chain(samples, ["insertion:0.5"], 3, tokenizer=tokenizer)
    new = [w for w in inserted.split() if not w.startswith("w")]
    assert len(new) == 25 and set(new) <= set(VOCABULARY)
    source = ["zz yy xx"]
    chained = attacks.chain(samples, ["copy_paste:0.2"], 3, source=source)
    pasted = attacks.apply(flat, "copy_paste", 0.2, 3, source=source)
    assert chained == [pasted[:1], pasted[1:]]
    assert sum(w in ("zz", "yy", "xx") for w in chained[0][0].split()) == 10


def test_chain_passes_the_paraphraser_and_its_progress_bar(monkeypatch, capsys):
    """The ``(model, tokenizer)`` pair reaches the paraphrase attack (not only its check),
    which paraphrases in batches of 16 with the progress bar asked for; a pair that is not
    two things is refused."""
    import torch

    batches = []

    class Recording(UpperCaseParaphraser):
        def candidates(self, prompts, texts, ids):
            batches.append(len(texts))
            return super().candidates(prompts, texts, ids)

    monkeypatch.setattr("waterdrum_hf.generation.paraphraser.Paraphraser", Recording)
    model, tokenizer = torch.nn.Module(), PieceTokenizer(VOCABULARY)
    samples = [[f"a{i} b{i}"] for i in range(17)]
    out = attacks.chain(
        samples, ["paraphrase:1"], paraphraser=(model, tokenizer), show_progress=True
    )
    assert out == [[f"A{i} B{i}"] for i in range(17)] and batches == [16, 1]
    assert re.search(r"(?:^|\r)paraphrasing: ", capsys.readouterr().err)
    attacks.chain(
        samples[:1], ["paraphrase:1"], paraphraser=(model, tokenizer), show_progress=False
    )
    assert capsys.readouterr().err == ""
    # Strength 0 edits nothing but still needs the pair.
    assert attacks.chain(samples, ["paraphrase:0"], paraphraser=(model, tokenizer)) == samples
    for pair in [(model,), (model, tokenizer, None)]:
        with pytest.raises(ValueError, match="zip"):
            attacks.chain(samples, [], paraphraser=pair)


def test_the_default_seed_is_0():
    assert attacks.chain([[TEXT]], ["deletion:0.5"]) == [attacks.apply([TEXT], "deletion", 0.5, 0)]
    assert attacks.apply([TEXT], "deletion", 0.5) == attacks.apply([TEXT], "deletion", 0.5, 0)
    assert attacks.apply([TEXT], "deletion", 0.5, 0) != attacks.apply([TEXT], "deletion", 0.5, 1)


def test_apply_needs_both_halves_of_a_pair_and_names_bad_arguments():
    """Paraphrase needs a model and a tokenizer, embedding neighbours (substitution and
    insertion with a model) a tokenizer; the argument at fault is named."""
    for half in ({"model": object()}, {"tokenizer": object()}):
        with pytest.raises(ValueError, match="paraphrase attack needs a paraphrasing `model`"):
            attacks.apply([TEXT], "paraphrase", 0.2, **half)
    for name in ("substitution", "insertion"):
        with pytest.raises(ValueError, match="need the model's `tokenizer`"):
            attacks.apply([TEXT], name, 0.2, model=object())
    with pytest.raises(ValueError, match="`batch_size` must be >= 1"):
        attacks.apply([TEXT], "deletion", 0.2, batch_size=0)
    with pytest.raises(TypeError, match="source must be a list of strings, not a single"):
        attacks.apply([TEXT], "copy_paste", 0.2, source="alpha beta")
