"""The closed word lists ``facts.compare`` names differences with.

They only name a difference; they never decide whether one exists. Any token that differs keeps
both blocks whatever its kind, so a word missing here is reported as ``word`` (still kept, still
reviewable), never lost. The kinds matter for one more decision: a pair whose only differences
are values (numbers, units, versions, dates, negations, antonyms, states) is a candidate revision.
"""

from __future__ import annotations

ARTICLES = frozenset({"a", "an", "the"})

NEGATIONS = frozenset(
    (
        "not no never none nobody nothing neither nor cannot without nowhere disallowed "
        "forbidden isnt arent wasnt werent dont doesnt didnt wont cant couldnt shouldnt "
        "mustnt neednt hasnt havent hadnt anymore"
    ).split()
)

_PAIRS = (
    "enable disable|enabled disabled|enables disables|allow deny|allowed denied|allow forbid|"
    "allowed forbidden|allowed blocked|on off|true false|yes no|start stop|started stopped|"
    "starts stops|open closed|open close|opens closes|increase decrease|increases decreases|"
    "increased decreased|up down|min max|minimum maximum|success failure|succeeds fails|"
    "pass fail|passes fails|passed failed|include exclude|includes excludes|included excluded|"
    "accept reject|accepts rejects|accepted rejected|public private|read write|add remove|"
    "adds removes|added removed|more less|more fewer|higher lower|larger smaller|bigger smaller|"
    "faster slower|first last|earliest latest|early late|new old|newer older|always sometimes|"
    "must may|required optional|mandatory optional|sync async|synchronous asynchronous|"
    "online offline|valid invalid|safe unsafe|stable unstable|supported unsupported|"
    "lock unlock|locked unlocked|show hide|shown hidden|visible hidden|internal external|"
    "inbound outbound|ascending descending|left right|strict lenient|good bad|best worst|"
    "better worse|hot cold|warm cold|light dark|white black|win lose|wins loses|keep drop|"
    "keeps drops|encrypted unencrypted|signed unsigned|mutable immutable"
)
ANTONYMS: frozenset[frozenset[str]] = frozenset(
    frozenset(pair.split()) for pair in _PAIRS.split("|")
)
ANTONYM_PREFIXES = ("un", "dis", "in", "im", "non", "non-", "de")

PREPOSITIONS = frozenset(
    (
        "before after above below over under inside outside in out into onto from to within "
        "behind beyond until till since during between by at for of per with against toward "
        "towards across through via upon beneath beside near past around"
    ).split()
)

STATES = frozenset(
    (
        "enabled disabled active inactive running stopped paused pending done finished "
        "complete completed incomplete failed failing passing broken fixed deprecated "
        "supported unsupported required optional allowed blocked forbidden permitted open "
        "closed locked unlocked available unavailable online offline up down healthy "
        "unhealthy ready draft published archived merged reverted approved rejected on off "
        "true false live retired experimental stable frozen mandatory"
    ).split()
)

UNITS = frozenset(
    (
        "ms s sec secs second seconds min mins minute minutes h hr hrs hour hours d day days "
        "week weeks month months year years ns us µs b kb mb gb tb pb kib mib gib tib bytes "
        "byte bit bits kbps mbps gbps % percent px em rem pt km m cm mm kg g mg l ml c f k "
        "rpm rps qps req reqs requests tokens token cores core cpus cpu gbit mbit hz khz mhz ghz"
    ).split()
)

MONTHS = frozenset(
    (
        "january february march april may june july august september october november december "
        "jan feb mar apr jun jul aug sep sept oct nov dec"
    ).split()
)
DAYS = frozenset(
    (
        "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur "
        "thurs fri sat sun today tomorrow yesterday tonight weekday weekdays weekend weekends "
        "mondays tuesdays wednesdays thursdays fridays saturdays sundays morning afternoon "
        "evening night mornings afternoons evenings nights noon midnight"
    ).split()
)

NUMBER_WORDS = frozenset(
    (
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
        "eighty ninety hundred thousand million billion first second third fourth fifth sixth "
        "seventh eighth ninth tenth once twice thrice half double triple dozen few several many "
        "all both single"
    ).split()
)
VERSION_CUES = frozenset("version versions v release releases python node api schema".split())
