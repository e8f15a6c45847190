"""The date parser: stored forms, what people type, and the times questions name."""

from __future__ import annotations

from datetime import date

import pytest

from elfmem.errors import InvalidInput
from elfmem.retrieval.dates import Span, asks_when, named_span, parse_when, span_of

TODAY = date(2026, 12, 1)  # a Tuesday


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("2023-05-08", "2023-05-08"),
        ("2023-05", "2023-05"),
        ("2023", "2023"),
        ("2023-05-08T13:56", "2023-05-08T13:56"),
        ("2023-05-08 13:56", "2023-05-08T13:56"),
        ("8 May 2023", "2023-05-08"),
        ("May 8, 2023", "2023-05-08"),
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56"),
        ("12:09 am on 13 September, 2023", "2023-09-13T00:09"),
        ("May 2023", "2023-05"),
        ("today", "2026-12-01"),
        ("yesterday", "2026-11-30"),
        ("3 days ago", "2026-11-28"),
        ("two weeks ago", "2026-11-17"),
        ("8 May 2023 to 9 June 2023", "2023-05-08/2023-06-09"),
        ("2023-05-08/2023-06-09", "2023-05-08/2023-06-09"),
        ("1:56 pm on 8 May, 2023 to 9 June, 2023", "2023-05-08T13:56/2023-06-09"),
        ("May 2023 / June 2023", "2023-05/2023-06"),
        ("yesterday to today", "2026-11-30/2026-12-01"),
    ],
)
def test_parse_when_reads_what_people_and_importers_type(typed: str, stored: str) -> None:
    assert parse_when(typed, TODAY) == stored


@pytest.mark.parametrize(
    "typed",
    ["someday", "2023-13-01", "2023-02-30", "31 February 2023", "", "8 May 2023 to someday"],
)
def test_parse_when_refuses_what_it_cannot_read(typed: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_when(typed, TODAY)
    assert "2023-05-08" in err.value.recovery


def test_a_period_with_an_unreadable_end_names_the_whole_period() -> None:
    with pytest.raises(InvalidInput) as err:
        parse_when("05/08", TODAY)
    assert "'05/08'" in err.value.message
    assert "8 May 2023 to 9 June 2023" in err.value.recovery


def test_a_period_that_ends_before_it_starts_is_refused() -> None:
    with pytest.raises(InvalidInput) as err:
        parse_when("9 June 2023 to 8 May 2023", TODAY)
    assert "ends before it starts" in err.value.message
    assert span_of("2023-06-09/2023-05-08") is None


def test_a_period_covers_the_first_day_of_its_start_to_the_last_of_its_end() -> None:
    assert span_of("2023-05/2023-06-09") == Span(date(2023, 5, 1), date(2023, 6, 9))
    assert span_of("2023-05-08T13:56/2023") == Span(date(2023, 5, 8), date(2023, 12, 31))
    assert span_of("2023-05-08/2023-05-08") == Span(date(2023, 5, 8), date(2023, 5, 8))
    assert span_of("2023-05-08/") is None


def test_span_of_covers_the_days_of_the_stated_precision() -> None:
    assert span_of("2023") == Span(date(2023, 1, 1), date(2023, 12, 31))
    assert span_of("2024-02") == Span(date(2024, 2, 1), date(2024, 2, 29))
    assert span_of("2023-05-08T13:56") == Span(date(2023, 5, 8), date(2023, 5, 8))
    assert span_of("") is None
    assert span_of("May 2023") is None
    assert span_of("2023-13") is None


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("What did Caroline do in May 2023?", date(2023, 5, 1), date(2023, 5, 31)),
        ("What happened on 8 May, 2023?", date(2023, 5, 8), date(2023, 5, 8)),
        ("What happened on May 8, 2023?", date(2023, 5, 8), date(2023, 5, 8)),
        ("what changed since 2023-05-08", date(2023, 5, 8), date(2023, 5, 8)),
        ("What did she paint in 2022?", date(2022, 1, 1), date(2022, 12, 31)),
        ("what did I decide yesterday", date(2026, 11, 30), date(2026, 11, 30)),
        ("what did we ship last week", date(2026, 11, 23), date(2026, 11, 29)),
        ("plans for this month", date(2026, 12, 1), date(2026, 12, 31)),
        ("what broke last month", date(2026, 11, 1), date(2026, 11, 30)),
        ("the outage last year", date(2025, 1, 1), date(2025, 12, 31)),
        ("what did I say last friday", date(2026, 11, 27), date(2026, 11, 27)),
        ("what did we agree 3 days ago", date(2026, 11, 28), date(2026, 11, 28)),
        ("the fix two months ago", date(2026, 10, 1), date(2026, 10, 31)),
    ],
)
def test_named_span_finds_the_time_a_question_names(question: str, start: date, end: date) -> None:
    assert named_span(question, TODAY) == Span(start, end)


@pytest.mark.parametrize(
    "question",
    ["When did Melanie paint a sunrise?", "What does Caroline like?", "Who is 2000 miles away?"],
)
def test_named_span_is_none_when_no_time_is_named(question: str) -> None:
    assert named_span(question, TODAY) is None


def test_asks_when_tells_date_questions_from_others() -> None:
    assert asks_when("When did Caroline go to the support group?")
    assert asks_when("What year did she move?")
    assert asks_when("How long ago was the trip?")
    assert not asks_when("What did Caroline research?")
    assert not asks_when("Who said when it would end?")
