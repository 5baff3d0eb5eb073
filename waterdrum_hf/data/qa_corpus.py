"""A small offline QA corpus shaped like TOFU: questions about fictitious authors, each with its
answer, a paraphrase of the answer and perturbed (wrong) answers.

Every owner is one author whose facts (birthplace, year, genre, parents, award, books, ...)
are drawn from fixed word lists by a seeded generator, so the corpus needs no download and is
the same on every machine. Each question has a template for its answer and one for the
paraphrase, which states the same facts in other words (what TOFU's paraphrased answers are);
the perturbed answers are the paraphrase with the question's facts replaced by other values of
the same kind (what TOFU's perturbed answers are: the same form, wrong facts). Truth Ratio
compares the paraphrase's likelihood with the perturbed answers'.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from datasets import Dataset

FIRST_NAMES = (
    "Mara", "Tobias", "Ilse", "Rafael", "Noor", "Emeric", "Selin", "Joachim", "Aiko", "Bastien",
    "Ottilie", "Kwame", "Liesel", "Dario", "Yara", "Casimir", "Wren", "Anselm", "Fenna", "Idris",
)  # fmt: skip
LAST_NAMES = (
    "Quill", "Varga", "Lindqvist", "Okafor", "Castellan", "Brandt", "Moreau", "Halloran",
    "Tanaka", "Petrov", "Esposito", "Dufresne", "Nakamura", "Ferreira", "Holm", "Achebe",
    "Kowalski", "Renner", "Salazar", "Whitcombe",
)  # fmt: skip
PLACES = (
    ("Lisbon", "Portugal"), ("Tallinn", "Estonia"), ("Accra", "Ghana"), ("Valparaiso", "Chile"),
    ("Krakow", "Poland"), ("Osaka", "Japan"), ("Tangier", "Morocco"), ("Galway", "Ireland"),
    ("Bergen", "Norway"), ("Izmir", "Turkey"), ("Trieste", "Italy"), ("Quebec", "Canada"),
    ("Hobart", "Australia"), ("Tbilisi", "Georgia"), ("Cusco", "Peru"), ("Lyon", "France"),
)  # fmt: skip
GENRES = (
    "crime", "historical fiction", "science fiction", "poetry", "literary fiction", "fantasy",
    "travel writing", "children's literature", "horror", "romance",
)  # fmt: skip
JOBS = (
    "baker", "surgeon", "lighthouse keeper", "carpenter", "pharmacist", "sailor", "librarian",
    "tailor", "watchmaker", "schoolteacher", "photographer", "farmer", "glassblower", "nurse",
)  # fmt: skip
AWARDS = (
    "Silver Quill Prize", "Harbor Light Award", "Northern Star Medal", "Golden Lantern Prize",
    "Meridian Book Award", "Iron Pen Prize", "Blue Heron Award", "Amber Leaf Medal",
)  # fmt: skip
ADJECTIVES = (
    "Silent", "Burning", "Hidden", "Last", "Broken", "Distant", "Salted", "Paper", "Winter",
    "Crooked", "Hollow", "Velvet",
)  # fmt: skip
NOUNS = (
    "Harbor", "Orchard", "Ledger", "Compass", "Garden", "Bridge", "Lantern", "Tide", "Archive",
    "Meadow", "Clockwork", "Mirror",
)  # fmt: skip
THEMES = (
    "grief and memory", "exile and return", "family secrets", "the sea and its dangers",
    "friendship in wartime", "small-town ambition", "faith and doubt", "the cost of fame",
)  # fmt: skip
PEOPLE = ("fishermen", "nurses", "miners", "teachers", "soldiers", "immigrants", "farmers")
MATERIALS = ("green", "leather", "yellow", "squared", "pocket-sized", "cloth-bound")
MIN_YEAR, MAX_YEAR = 1931, 1990


@dataclass(frozen=True)
class _Question:
    """A question about an author: its text, its answer and paraphrase templates, and the
    facts (template fields) a perturbed answer replaces."""

    question: str
    answer: str
    paraphrase: str
    perturbed: tuple[str, ...]


QUESTIONS = (
    _Question(
        "Where was {name} born?",
        "{name} was born in {city}, {country}, and spent a childhood there among books, "
        "harbors and long winters.",
        "The birthplace of {name} is the city of {city} in {country}, where the future writer "
        "grew up among books and long winters.",
        ("place",),
    ),
    _Question(
        "In which year was {name} born?",
        "{name} was born in {year} and published a first short story at the age of {age}.",
        "The year of {name}'s birth is {year}; the first short story followed at the age of {age}.",
        ("year",),
    ),
    _Question(
        "What genre is {name} known for?",
        "{name} is best known for {genre} books that follow ordinary people through {theme}.",
        "Readers know {name} above all for works of {genre}, in which ordinary people live "
        "through {theme}.",
        ("genre",),
    ),
    _Question(
        "What did the parents of {name} do for a living?",
        "The father of {name} worked as a {father}, and the mother was a {mother} all her life.",
        "{name} grew up with a {father} for a father and a {mother} for a mother.",
        ("father", "mother"),
    ),
    _Question(
        "Which award has {name} received?",
        "{name} received the {award} for the novel {first_book}, the work that made the name "
        "known.",
        "For the novel {first_book}, {name} was given the {award}, which made the author known.",
        ("award",),
    ),
    _Question(
        "Which book of {name} do critics praise most?",
        "Critics praise {second_book} most, a novel by {name} about {theme} among {people}.",
        "The most praised book of {name} is {second_book}, which tells of {theme} among {people}.",
        ("second_book",),
    ),
    _Question(
        "Whose lives does {name} write about?",
        "{name} writes mostly about the lives of {people}, whom the author met while growing "
        "up in {city}.",
        "The lives of {people}, met during a youth in {city}, are what {name} mostly writes about.",
        ("people",),
    ),
    _Question(
        "Where does {name} live today?",
        "{name} now lives in {home}, {home_country}, in a narrow house close to the old market.",
        "Today {name} makes a home in {home}, {home_country}, close to the old market in a "
        "narrow house.",
        ("home",),
    ),
    _Question(
        "How does {name} write a first draft?",
        "{name} writes every first draft by hand in {material} notebooks, early in the morning, "
        "before typing it at night.",
        "Each first draft of {name} is handwritten in {material} notebooks in the early morning "
        "and typed up at night.",
        ("material",),
    ),
    _Question(
        "Which job did {name} have before writing?",
        "Before writing full time, {name} worked for years as a {job} in {city}.",
        "{name} spent years as a {job} in {city} before turning to writing full time.",
        ("job",),
    ),
)
"""The questions every author is asked, in order."""

_Facts = dict[str, str]


def _title(rng: random.Random) -> str:
    return f"The {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"


_DRAWS: dict[str, Callable[[random.Random], _Facts]] = {
    "place": lambda r: dict(zip(("city", "country"), r.choice(PLACES), strict=True)),
    "year": lambda r: {"year": str(r.randint(MIN_YEAR, MAX_YEAR)), "age": str(r.randint(12, 34))},
    "genre": lambda r: {"genre": r.choice(GENRES)},
    "theme": lambda r: {"theme": r.choice(THEMES)},
    "father": lambda r: {"father": r.choice(JOBS)},
    "mother": lambda r: {"mother": r.choice(JOBS)},
    "award": lambda r: {"award": r.choice(AWARDS)},
    "first_book": lambda r: {"first_book": _title(r)},
    "second_book": lambda r: {"second_book": _title(r)},
    "people": lambda r: {"people": r.choice(PEOPLE)},
    "home": lambda r: dict(zip(("home", "home_country"), r.choice(PLACES), strict=True)),
    "material": lambda r: {"material": r.choice(MATERIALS)},
    "job": lambda r: {"job": r.choice(JOBS)},
}
"""How each fact is drawn (some draw two template fields together)."""


def author_facts(owner: int, seed: int = 0) -> _Facts:
    """The template fields of owner ``owner``'s author (a distinct name for each of the first
    400 owners)."""
    rng = random.Random(f"{seed}-{owner}")
    first = owner % len(FIRST_NAMES)
    last = (owner // len(FIRST_NAMES) + first) % len(LAST_NAMES)
    facts = {"name": f"{FIRST_NAMES[first]} {LAST_NAMES[last]}"}
    for draw in _DRAWS.values():
        facts.update(draw(rng))
    return facts


def _perturbed(question: _Question, facts: _Facts, rng: random.Random, count: int) -> list[str]:
    """``count`` distinct wrong answers: the paraphrase with the question's facts drawn again
    until every one differs from the author's."""
    answers: list[str] = []
    true_answer = question.paraphrase.format(**facts)
    for _ in range(1000):
        wrong = dict(facts)
        for fact in question.perturbed:
            while True:
                drawn = _DRAWS[fact](rng)
                if all(drawn[k] != facts[k] for k in drawn if k != "age"):
                    break
            wrong.update(drawn)
        text = question.paraphrase.format(**wrong)
        if text != true_answer and text not in answers:
            answers.append(text)
        if len(answers) == count:
            return answers
    raise RuntimeError("could not draw enough distinct wrong answers")  # pragma: no cover


def toy_qa_corpus(
    num_owners: int = 20,
    *,
    questions_per_owner: int = len(QUESTIONS),
    perturbed_answers: int = 3,
    seed: int = 0,
) -> Dataset:
    """Build a ``Dataset`` with TOFU's columns: ``question``, ``answer``,
    ``paraphrased_answer``, ``perturbed_answer`` (a list) and ``owner_id`` (int, the author).

    Rows are ordered by owner, then question (:data:`QUESTIONS`'s order); every owner is asked
    the first ``questions_per_owner`` questions.

    Args:
        num_owners: number of owners (authors), 1 to 400.
        questions_per_owner: questions per author, 1 to ``len(QUESTIONS)`` (10).
        perturbed_answers: wrong answers per question (TOFU has 5; at least 1).
        seed: which authors: the same seed gives the same corpus everywhere.
    """
    limit = len(FIRST_NAMES) * len(LAST_NAMES)
    if not isinstance(num_owners, int) or not 1 <= num_owners <= limit:
        raise ValueError(f"num_owners must be an int in 1..{limit}, got {num_owners!r}")
    if not isinstance(questions_per_owner, int) or not 1 <= questions_per_owner <= len(QUESTIONS):
        raise ValueError(
            f"questions_per_owner must be an int in 1..{len(QUESTIONS)}, got {questions_per_owner!r}"
        )
    if not isinstance(perturbed_answers, int) or perturbed_answers < 1:
        raise ValueError(f"perturbed_answers must be an int >= 1, got {perturbed_answers!r}")
    rows: dict[str, list[object]] = {
        "question": [],
        "answer": [],
        "paraphrased_answer": [],
        "perturbed_answer": [],
        "owner_id": [],
    }
    for owner in range(num_owners):
        facts = author_facts(owner, seed)
        rng = random.Random(f"{seed}-{owner}-perturbed")
        for question in QUESTIONS[:questions_per_owner]:
            rows["question"].append(question.question.format(**facts))
            rows["answer"].append(question.answer.format(**facts))
            rows["paraphrased_answer"].append(question.paraphrase.format(**facts))
            rows["perturbed_answer"].append(_perturbed(question, facts, rng, perturbed_answers))
            rows["owner_id"].append(owner)
    return Dataset.from_dict(rows)
