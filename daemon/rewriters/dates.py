"""Date and time candidates for readings such as きょう, あした, いま and ことし.

`now` is always a parameter so the output is deterministic and testable.
"""

from datetime import date, datetime, timedelta

from daemon.rewriters.base import Rewrite

SOURCE = "date"

_DAY_OFFSETS = {
    "おととい": -2,
    "きのう": -1,
    "きょう": 0,
    "あした": 1,
    "あす": 1,
    "あさって": 2,
}
_YEAR_OFFSETS = {"きょねん": -1, "ことし": 0, "らいねん": 1}
_TIME_READINGS = {"いま", "じこく"}

_WEEKDAYS = "月火水木金土日"  # indexed by date.weekday(): Monday is 0

# Era start dates (改元日). Earlier eras are left out: the calendar before 1873 was lunisolar.
_ERAS = (
    ("大正", date(1912, 7, 30)),
    ("昭和", date(1926, 12, 25)),
    ("平成", date(1989, 1, 8)),
    ("令和", date(2019, 5, 1)),
)


def date_rewrites(reading: str, now: datetime) -> list[Rewrite]:
    """Date, year or time candidates for `reading`; [] when it is not such a word."""
    if reading in _DAY_OFFSETS:
        return format_date(now.date() + timedelta(days=_DAY_OFFSETS[reading]))
    if reading in _YEAR_OFFSETS:
        return format_year(now.year + _YEAR_OFFSETS[reading])
    if reading in _TIME_READINGS:
        return format_time(now)
    return []


def format_date(day: date) -> list[Rewrite]:
    weekday = _WEEKDAYS[day.weekday()]
    rewrites = [
        Rewrite(f"{day.year}/{day.month:02}/{day.day:02}", "日付 スラッシュ", SOURCE),
        Rewrite(day.isoformat(), "日付 ISO 8601", SOURCE),
        Rewrite(f"{day.year}年{day.month}月{day.day}日", "日付 西暦", SOURCE),
    ]
    era_year = japanese_era_year(day)
    if era_year:
        rewrites.append(Rewrite(f"{era_year}{day.month}月{day.day}日", "日付 和暦", SOURCE))
    rewrites += [
        Rewrite(f"{day.month}月{day.day}日({weekday})", "日付 月日(曜)", SOURCE),
        Rewrite(f"{weekday}曜日", "曜日", SOURCE),
    ]
    return rewrites


def format_year(year: int) -> list[Rewrite]:
    """西暦 plus every era that covers part of the year (2019 is both 平成31年 and 令和元年)."""
    rewrites = [Rewrite(f"{year}年", "西暦", SOURCE)]
    for index, (name, start) in enumerate(_ERAS):
        next_start = _ERAS[index + 1][1] if index + 1 < len(_ERAS) else None
        if start.year <= year and (next_start is None or year <= next_start.year):
            rewrites.append(Rewrite(f"{name}{_era_year_text(year - start.year + 1)}年", "和暦", SOURCE))
    return rewrites


def format_time(moment: datetime) -> list[Rewrite]:
    # Japanese 12-hour time counts noon as 午後0時, not 午後12時.
    half_day = "午前" if moment.hour < 12 else "午後"
    return [
        Rewrite(f"{moment.hour}:{moment.minute:02}", "時刻", SOURCE),
        Rewrite(f"{moment.hour}時{moment.minute}分", "時刻", SOURCE),
        Rewrite(f"{half_day}{moment.hour % 12}時{moment.minute}分", "時刻 12時間制", SOURCE),
    ]


def japanese_era_year(day: date) -> str | None:
    """'令和8年' for a day in 2026, '令和元年' for 2019-05-01; None before 大正."""
    for name, start in reversed(_ERAS):
        if day >= start:
            return f"{name}{_era_year_text(day.year - start.year + 1)}年"
    return None


def _era_year_text(era_year: int) -> str:
    return "元" if era_year == 1 else str(era_year)
