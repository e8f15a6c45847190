"""Dates in blocks and in questions: a small, deterministic parser (pure; no clock is read here).

A block's ``when:`` key holds the date it was said or learned in one stored form, ISO 8601 at the
precision known: ``2023``, ``2023-05``, ``2023-05-08`` or ``2023-05-08T13:56`` (no zone: the date
as the speaker meant it), or a period of two such dates, ``2023-05-08/2023-06-09`` (a document
written over weeks). ``parse_when`` turns what a person or an importer types into that form;
``span_of`` gives the days a stored value covers; ``named_span`` finds the time a question names
("in May 2023", "yesterday", "last week", "3 days ago"), relative expressions counted from the
``today`` the caller passes; ``asks_when`` tells a question that asks for a date.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from elfmem.block.model import WHEN_RE
from elfmem.errors import InvalidInput

MONTHS = {
    name: n
    for n in range(1, 13)
    for name in (calendar.month_name[n].lower(), calendar.month_abbr[n].lower())
}
MONTHS["sept"] = 9
WEEKDAYS = {calendar.day_name[n].lower(): n for n in range(7)}
UNITS = {"day": 1, "week": 7}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

_M = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_TIME = r"(?:(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\s*(?:on\s+)?,?\s*)?"
_DAY_MONTH_YEAR = re.compile(
    rf"\b{_TIME}(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_M},?\s+(\d{{4}})\b"
)
_MONTH_DAY_YEAR = re.compile(rf"\b{_TIME}{_M}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b{_M},?\s+(\d{{4}})\b")
_YEAR = re.compile(r"\b(?:in|during|of|since|from|year)\s+((?:19|20)\d{2})\b")
_ISO = re.compile(r"\b(\d{4}-\d{2}(?:-\d{2})?)\b")
_AGO = re.compile(r"\b(\d+|an?|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b")
_LAST = re.compile(r"\b(last|this|next|past)\s+(week|month|year|weekend)\b")
_LAST_WEEKDAY = re.compile(r"\blast\s+(" + "|".join(WEEKDAYS) + r")\b")
_PERIOD = re.compile(r"\s+to\s+|\s*/\s*", re.I)
"""What joins the two ends of a period a person types: ``to`` or a slash."""
_ASKS_WHEN = re.compile(
    r"^\s*(?:when\b|what\s+(?:date|day|time|year|month)\b|how\s+long\s+ago\b|"
    r"in\s+which\s+(?:year|month)\b|which\s+(?:year|month|day)\b)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Span:
    """The days from ``start`` to ``end``, both included."""

    start: date
    end: date

    def overlaps(self, other: Span) -> bool:
        return self.start <= other.end and other.start <= self.end


def _month_span(year: int, month: int) -> Span:
    return Span(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def span_of(when: str) -> Span | None:
    """The days a stored ``when:`` value covers; None for "", a value not in the stored form, or
    a period that ends before it starts."""
    if not WHEN_RE.fullmatch(when):
        return None
    if "/" in when:
        first, last = (span_of(part) for part in when.split("/"))
        if first is None or last is None or last.end < first.start:
            return None
        return Span(first.start, last.end)
    try:
        year = int(when[:4])
        if len(when) == 4:
            return Span(date(year, 1, 1), date(year, 12, 31))
        if len(when) == 7:
            return _month_span(year, int(when[5:7]))
        day = date.fromisoformat(when[:10])
    except ValueError:
        return None
    return Span(day, day)


def _clock(hour: str | None, minute: str | None, half: str | None) -> str:
    if hour is None or half is None:
        return ""
    h = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    m = int(minute or 0)
    if h > 23 or m > 59:
        return ""
    return f"T{h:02d}:{m:02d}"


def _day(year: str, month: int, day: str) -> date | None:
    try:
        return date(int(year), month, int(day))
    except ValueError:
        return None


def _period(text: str, ends: list[str], today: date) -> str:
    try:
        period = "/".join(parse_when(end, today) for end in ends)
    except InvalidInput as err:
        message = f"Cannot read {text!r} as a period: {err.message}"
        raise InvalidInput(message, err.recovery) from None
    if span_of(period) is None:
        raise InvalidInput(
            f"The period {text!r} ends before it starts.",
            "Give the earlier date first: '8 May 2023 to 9 June 2023'.",
        )
    return period


def parse_when(text: str, today: date) -> str:
    """``text`` in the stored form of ``when:``, or ``InvalidInput`` saying what is accepted.

    Accepted: the stored forms themselves (also ``2023-05-08 13:56``), ``8 May 2023``,
    ``May 8, 2023``, ``1:56 pm on 8 May, 2023``, ``May 2023``, ``today``, ``yesterday`` and
    ``N days ago`` / ``N weeks ago`` (counted from ``today``); and a period of two of them
    joined by ``to`` or ``/`` (``8 May 2023 to 9 June 2023``), stored as ``start/end``.
    """
    value = " ".join(text.strip().split())
    ends = _PERIOD.split(value)
    if len(ends) == 2:
        return _period(text, ends, today)
    iso = (
        value.replace(" ", "T", 1)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", value)
        else value
    )
    if WHEN_RE.fullmatch(iso) and span_of(iso) is not None:
        return iso
    low = value.lower()
    if low in ("today", "yesterday"):
        return (today - timedelta(days=low == "yesterday")).isoformat()
    ago = _AGO.fullmatch(low)
    if ago and ago[2] in UNITS:
        count = int(ago[1]) if ago[1].isdigit() else _NUMBERS[ago[1]]
        return (today - timedelta(days=count * UNITS[ago[2]])).isoformat()
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        found = pattern.fullmatch(low)
        if found:
            hour, minute, half, a, b, year = found.groups()
            day = _day(year, MONTHS[b], a) if order == "dmy" else _day(year, MONTHS[a], b)
            if day is not None:
                return day.isoformat() + _clock(hour, minute, half)
    found = _MONTH_YEAR.fullmatch(low)
    if found:
        return f"{found[2]}-{MONTHS[found[1]]:02d}"
    raise InvalidInput(
        f"Cannot read {text!r} as a date.",
        "Use an ISO date such as 2023-05-08 (or 2023-05, 2023, 2023-05-08T13:56), "
        "'8 May 2023', 'May 2023', 'today', 'yesterday' or '3 days ago'; "
        "a period as two of them: '8 May 2023 to 9 June 2023'.",
    )


def _week_of(day: date) -> Span:
    monday = day - timedelta(days=day.weekday())
    return Span(monday, monday + timedelta(days=6))


def _shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    n = year * 12 + month - 1 + by
    return n // 12, n % 12 + 1


def _relative(low: str, today: date) -> Span | None:
    if re.search(r"\byesterday\b", low):
        day = today - timedelta(days=1)
        return Span(day, day)
    if re.search(r"\btoday\b", low):
        return Span(today, today)
    found = _LAST_WEEKDAY.search(low)
    if found:
        back = (today.weekday() - WEEKDAYS[found[1]]) % 7 or 7
        day = today - timedelta(days=back)
        return Span(day, day)
    found = _AGO.search(low)
    if found:
        count = int(found[1]) if found[1].isdigit() else _NUMBERS[found[1]]
        if found[2] in UNITS:
            day = today - timedelta(days=count * UNITS[found[2]])
            return _week_of(day) if found[2] == "week" else Span(day, day)
        if found[2] == "month":
            return _month_span(*_shift_month(today.year, today.month, -count))
        return Span(date(today.year - count, 1, 1), date(today.year - count, 12, 31))
    found = _LAST.search(low)
    if found:
        by = {"last": -1, "past": -1, "this": 0, "next": 1}[found[1]]
        if found[2] in ("week", "weekend"):
            week = _week_of(today + timedelta(days=7 * by))
            return Span(week.end - timedelta(days=1), week.end) if found[2] == "weekend" else week
        if found[2] == "month":
            return _month_span(*_shift_month(today.year, today.month, by))
        return Span(date(today.year + by, 1, 1), date(today.year + by, 12, 31))
    return None


def named_span(query: str, today: date) -> Span | None:
    """The time ``query`` names, the most precise expression first; None when it names none."""
    low = query.lower()
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        found = pattern.search(low)
        if found:
            _, _, _, a, b, year = found.groups()
            day = _day(year, MONTHS[b], a) if order == "dmy" else _day(year, MONTHS[a], b)
            if day is not None:
                return Span(day, day)
    found = _ISO.search(low)
    if found and (span := span_of(found[1])) is not None:
        return span
    found = _MONTH_YEAR.search(low)
    if found:
        return _month_span(int(found[2]), MONTHS[found[1]])
    relative = _relative(low, today)
    if relative is not None:
        return relative
    found = _YEAR.search(low)
    if found:
        year = int(found[1])
        return Span(date(year, 1, 1), date(year, 12, 31))
    return None


def asks_when(query: str) -> bool:
    """True for a question that asks for a date or a time ("When did…", "What year…")."""
    return bool(_ASKS_WHEN.search(query))
