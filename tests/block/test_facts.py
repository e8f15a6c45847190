"""facts.compare: only the same words in the same order are the same information; every other
difference is named with its kind."""

from __future__ import annotations

from difflib import SequenceMatcher

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.dedupe_bench import FAMILIES, distinct_pair, duplicate_pair
from elfmem.block import facts
from elfmem.block import lexicon as lx
from elfmem.block.facts import KINDS, compare, differences, same_information, tokens

PROPERTY = settings(derandomize=True, deadline=None, max_examples=600)
SUBJECTS = [f"{a} {b}" for a in ("vesper", "serac", "quill", "tansy") for b in ("router", "loader")]

KIND_CASES = [
    ("Restart the vesper router now", "Restart the serac loader now", "word"),
    ("Ask Alice before changing it", "Ask Bob before changing it", "name"),
    ("Set MAX_CONN to 50", "Set MAX_POOL to 50", "identifier"),
    ("Start it with the --safe flag", "Start it with the --fast flag", "identifier"),
    ("Config lives in `cfg` here", "Config lives in `conf` here", "identifier"),
    ("It reads /etc/app/main.conf", "It reads /etc/app/alt.conf", "path"),
    ("Settings are in settings.yaml", "Settings are in settings.toml", "path"),
    ("The limit is 100 req/min", "The limit is 1000 req/min", "number"),
    ("It keeps three replicas", "It keeps five replicas", "number"),
    ("Timeout is 30 seconds", "Timeout is 30 minutes", "unit"),
    ("Timeout is 100ms", "Timeout is 100s", "unit"),
    ("Needs release 2.4.1 of the client", "Needs release 2.5.0 of the client", "version"),
    ("Speaks protocol version two", "Speaks protocol version three", "version"),
    ("Patched every Monday", "Patched every Thursday", "date"),
    ("Released on 2024-03-01", "Released on 2024-04-01", "date"),
    ("Deploys are allowed on Friday", "Deploys are not allowed on Friday", "negation"),
    ("Deploys aren't allowed on Friday", "Deploys are allowed on Friday", "negation"),
    ("Enable compression for payloads", "Disable compression for payloads", "antonym"),
    ("The lock is safe here", "The lock is unsafe here", "antonym"),
    ("Run the migration before the deploy", "Run the migration after the deploy", "preposition"),
    ("Mount it above the data disk", "Mount it below the data disk", "preposition"),
    ("The rollout is pending", "The rollout is done", "state"),
]


@pytest.mark.parametrize(("a", "b", "kind"), KIND_CASES)
def test_each_kind_of_difference_is_named(a: str, b: str, kind: str) -> None:
    found = compare(a, b)
    assert not found.same_information and found.kinds == (kind,)
    assert kind in KINDS and compare(b, a).kinds == (kind,)


def test_the_vesper_router_is_not_the_serac_loader() -> None:
    """The reported case: dream archived one as a duplicate of the other."""
    a = "After editing its config, restart the vesper router with the --safe flag; then check logs."
    b = "After editing its config, restart the serac loader with the --safe flag; then check logs."
    found = compare(a, b)
    assert not found.same_information and not found.revision_like
    assert differences(a, b) == [
        {"kind": "word", "left": ["vesper", "router"], "right": ["serac", "loader"]}
    ]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "The build cache lives in /var/cache/build",
            "the build cache lives in  /var/cache/build.",
        ),
        ("Deploys freeze on Fridays.", "DEPLOYS FREEZE ON FRIDAYS!"),
        ("Keep a cache warm, always", "keep the cache warm always"),
        ("Use an index for the rate-limit table", "Use index for rate limit table"),
        ("Call (and wait for) the gateway", "call and wait for the gateway..."),
    ],
)
def test_case_spacing_edge_punctuation_and_articles_are_the_same_information(
    a: str, b: str
) -> None:
    assert same_information(a, b) and compare(a, b).same_information and not differences(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Version 2.4.1 is live", "Version 241 is live"),  # punctuation inside a token counts
        ("Use the --safe flag", "Use the safe flag"),
        ("Retry 3 times", "Retry 3 times in staging"),
        ("Set x_y to 1", "Set xy to 1"),
    ],
)
def test_punctuation_inside_a_token_and_added_words_are_differences(a: str, b: str) -> None:
    assert not same_information(a, b) and compare(a, b).differences


@pytest.mark.parametrize(
    ("old", "new", "revision"),
    [
        ("The API rate limit is 100 req/min per key",
         "The API rate limit is now 1000 req/min per key since the March upgrade", True),
        ("Deploys are allowed on Friday afternoons",
         "Deploys are not allowed on Friday afternoons", True),
        ("The rollout is pending", "The rollout is done", True),
        ("Enable compression on the proxy", "Disable compression on the proxy", True),
        ("The client needs version two", "The client needs version three", True),
        ("Restart the vesper router", "Restart the serac loader", False),
        ("Ask Alice about the 3 replicas", "Ask Bob about the 5 replicas", False),
        ("Set MAX_CONN to 50", "Set MAX_POOL to 60", False),
        ("Run the migration before the deploy", "Run the migration after the deploy", False),
        ("Logs go to /var/log/a after 3 days", "Logs go to /var/log/b after 4 days", False),
    ],
)  # fmt: skip
def test_a_candidate_revision_changes_a_value_of_the_same_subject(
    old: str, new: str, revision: bool
) -> None:
    assert compare(old, new).revision_like is revision


@PROPERTY
@given(
    kind=st.sampled_from(sorted(FAMILIES)),
    family=st.integers(0, 8),
    variant=st.integers(0, 8),
    pick=st.permutations(range(len(SUBJECTS))),
)
def test_property_one_token_of_any_kind_is_never_the_same_information(
    kind: str, family: int, variant: int, pick: list[int]
) -> None:
    a, b = distinct_pair(kind, family, variant, SUBJECTS[pick[0]], SUBJECTS[pick[1]])
    found = compare(a, b)
    assert not found.same_information and found.differences
    expected = {"name": {"name", "word"}}.get(kind, {kind})
    assert set(found.kinds) <= expected


@PROPERTY
@given(
    kind=st.sampled_from(sorted(FAMILIES)),
    family=st.integers(0, 8),
    variant=st.integers(0, 8),
    style=st.integers(0, 20),
    subject=st.sampled_from(SUBJECTS),
)
def test_property_rewritten_duplicates_are_the_same_information(
    kind: str, family: int, variant: int, style: int, subject: str
) -> None:
    sentence, _ = distinct_pair(kind, family, variant, subject, subject)
    a, b = duplicate_pair(sentence, style)
    assert compare(a, b).same_information


WORD = st.text(st.characters(categories=("L", "N"), max_codepoint=0x17F), min_size=1, max_size=8)


@PROPERTY
@given(words=st.lists(WORD, min_size=1, max_size=12), at=st.integers(0, 11), new=WORD)
def test_property_replacing_any_word_keeps_the_pair_apart_unless_only_case_or_article(
    words: list[str], at: int, new: str
) -> None:
    at %= len(words)
    changed = [*words[:at], new, *words[at + 1 :]]
    a, b = " ".join(words), " ".join(changed)
    folded = [t.key for t in tokens(words[at])], [t.key for t in tokens(new)]
    assert same_information(a, b) is (folded[0] == folded[1])
    assert same_information(a, b) is same_information(b, a)


def test_two_values_replaced_at_once_are_left_for_review_not_taken_as_a_revision() -> None:
    pair = compare("Service 0 listens on port 8000", "Service 3 listens on port 8003")
    assert not pair.same_information and not pair.revision_like
    assert compare("The limit is 100 per key", "The limit is now 1000 per key").revision_like


def _antonyms_pairwise(left: set[str], right: set[str]) -> bool:
    """The definition ``facts._antonyms`` caches per word: a listed pair, or one word is the
    other with a negating prefix."""
    for a in left:
        for b in right:
            if frozenset((a, b)) in lx.ANTONYMS:
                return True
            short, long = sorted((a, b), key=len)
            prefix = long[: len(long) - len(short)]
            if prefix and long.endswith(short) and prefix in lx.ANTONYM_PREFIXES:
                return True
    return False


LEXICON_WORD = st.one_of(
    st.sampled_from(sorted({w for pair in lx.ANTONYMS for w in pair})),
    st.builds(
        lambda p, w: p + w,
        st.sampled_from(lx.ANTONYM_PREFIXES),
        st.sampled_from(["stable", "able", "lock", "safe", "x", "-y", "n", "on"]),
    ),
    st.sampled_from([*lx.ANTONYM_PREFIXES, "un-", "nonon", "stable", "abled", "on"]),
    WORD,
)


@PROPERTY
@given(left=st.sets(LEXICON_WORD, max_size=4), right=st.sets(LEXICON_WORD, max_size=4))
def test_property_cached_antonyms_agree_with_the_pairwise_definition(
    left: set[str], right: set[str]
) -> None:
    left, right = {w.casefold() for w in left}, {w.casefold() for w in right}
    assert facts._antonyms(left, right) is _antonyms_pairwise(left, right)


VALUE_WORDS = ["3", "5", "8000", "v2.1", "2024-03-01", "Monday", "100ms", "not", "isn't",
               "enabled", "disabled", "pending", "done", "Alice", "Bob", "MAX_CONN", "/etc/a",
               "version", "two", "the", "port", "limit", "now", "is"]  # fmt: skip


@PROPERTY
@given(
    a=st.lists(st.sampled_from("abcdefg"), max_size=14),
    b=st.lists(st.sampled_from("abcdefg"), max_size=14),
    stop=st.integers(1, 4),
)
def test_property_replaced_stretches_counts_what_the_matcher_reports(
    a: list[str], b: list[str], stop: int
) -> None:
    """The count dream refuses pairs by is the matcher's own count of replaced stretches (capped
    at ``stop``): the same alignment, so no pair compare calls a revision is refused."""
    opcodes = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    replaced = sum(1 for op, *_ in opcodes if op == "replace")
    assert facts.replaced_stretches(a, b, stop) == min(replaced, stop)
