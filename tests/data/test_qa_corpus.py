"""The built-in QA corpus: TOFU's columns, one fictitious author per owner, paraphrases that
keep the facts and perturbed answers that change exactly the facts asked about."""

from __future__ import annotations

import re

import pytest

from waterdrum_hf.data import toy_qa_corpus
from waterdrum_hf.data.qa_corpus import QUESTIONS, author_facts


def test_rows_are_authors_times_questions_in_order_and_the_same_every_time():
    corpus = toy_qa_corpus(3, questions_per_owner=4, perturbed_answers=2)
    assert corpus.column_names == [
        "question", "answer", "paraphrased_answer", "perturbed_answer", "owner_id"
    ]  # fmt: skip
    assert corpus["owner_id"] == [0] * 4 + [1] * 4 + [2] * 4
    facts = author_facts(1)
    assert corpus["question"][4:8] == [q.question.format(**facts) for q in QUESTIONS[:4]]
    assert all(len(wrong) == 2 for wrong in corpus["perturbed_answer"])
    assert toy_qa_corpus(3, questions_per_owner=4, perturbed_answers=2).to_dict() == (
        corpus.to_dict()
    )
    assert toy_qa_corpus(3, seed=1)["answer"] != toy_qa_corpus(3)["answer"]


def test_every_author_of_400_has_its_own_name():
    names = {author_facts(owner)["name"] for owner in range(400)}
    assert len(names) == 400
    assert len({author_facts(owner)["name"].split()[0] for owner in range(20)}) == 20


def _fields(fact: str) -> tuple[str, ...]:
    """The template fields a fact fills (a place a city and its country, a year an age too)."""
    both = {"place": ("city", "country"), "home": ("home", "home_country"), "year": ("year", "age")}
    return both.get(fact, (fact,))


def _template_pattern(template: str, facts: dict[str, str], free: tuple[str, ...]) -> str:
    """``template`` as a regular expression: ``free`` fields any text, the others ``facts``."""
    pattern, start = "", 0
    for match in re.finditer(r"\{(\w+)\}", template):
        name = match.group(1)
        pattern += re.escape(template[start : match.start()])
        first = f"(?P={name})" if f"(?P<{name}>" in pattern else f"(?P<{name}>.+?)"
        pattern += first if name in free else re.escape(facts[name])
        start = match.end()
    return pattern + re.escape(template[start:])


def test_the_paraphrase_keeps_the_facts_and_each_wrong_answer_changes_those_asked_about():
    corpus = toy_qa_corpus(5)
    for i, row in enumerate(corpus):
        facts = author_facts(row["owner_id"])
        question = QUESTIONS[i % len(QUESTIONS)]
        assert row["answer"] == question.answer.format(**facts)
        assert row["paraphrased_answer"] == question.paraphrase.format(**facts) != row["answer"]
        free = tuple(f for fact in question.perturbed for f in _fields(fact))
        pattern = _template_pattern(question.paraphrase, facts, free)
        assert len(set(row["perturbed_answer"])) == 3
        for wrong in row["perturbed_answer"]:  # the paraphrase's words, other facts
            match = re.fullmatch(pattern, wrong)
            assert match, (wrong, pattern)
            changed = [f for f in free if f != "age"]
            assert all(match.group(f) != facts[f] for f in changed), (wrong, facts)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"num_owners": 0}, "num_owners must be an int in 1..400"),
        ({"num_owners": 401}, "num_owners must be an int in 1..400"),
        ({"questions_per_owner": 11}, "questions_per_owner must be an int in 1..10"),
        ({"perturbed_answers": 0}, "perturbed_answers must be an int >= 1"),
    ],
)
def test_bad_sizes_are_refused(keywords, message):
    with pytest.raises(ValueError, match=message):
        toy_qa_corpus(**{"num_owners": 2, **keywords})
