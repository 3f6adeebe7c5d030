"""Tokenizing one example the way bash would (SPEC 4 step 1).

Tables pin every shell construct to its code and exact span; property tests prove the fast path
equal to the bashlex path and the expansion verdicts equal to a real bash; hostile and huge
inputs never raise and stay fast.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from exampleguard._tokenize import (
    MAX_CHARS,
    Tokens,
    _analyze_word,
    _argument_braces,
    _fast_tokenize,
    _fast_tokenize_continued,
    _lex,
    _tokenize_with_bashlex,
    tokenize,
)

REPO = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="the bash differential needs bash")
CODES = {"parse-error", "shell-construct", "shell-comment", "shell-expansion"}

SC = "shell-construct"
PE = "parse-error"
CM = "shell-comment"
EX = "shell-expansion"


def words_of(tokens: Tokens) -> list[tuple[str, int, int]]:
    return [(word.text, word.start, word.end) for word in tokens.words]


def problems_of(tokens: Tokens) -> list[tuple[str, int, int]]:
    return [(problem.code, problem.start, problem.end) for problem in tokens.problems]


# ---------------------------------------------------------------------------------------------
# Accepted examples: the words bash passes, with their raw spans, and no problem at all
# ---------------------------------------------------------------------------------------------

ACCEPTED = [
    pytest.param("notes list", [("notes", 0, 5), ("list", 6, 10)], id="plain"),
    pytest.param(
        'notes add "buy milk" --tag=x',
        [("notes", 0, 5), ("add", 6, 9), ("buy milk", 10, 20), ("--tag=x", 21, 28)],
        id="double-quoted",
    ),
    pytest.param("notes 'buy milk'", [("notes", 0, 5), ("buy milk", 6, 16)], id="single-quoted"),
    pytest.param(" \tnotes  list\t ", [("notes", 2, 7), ("list", 9, 13)], id="outer-blanks"),
    pytest.param('notes a"b"c', [("notes", 0, 5), ("abc", 6, 11)], id="adjacent-quotes"),
    pytest.param("notes ''", [("notes", 0, 5), ("", 6, 8)], id="empty-single-quotes"),
    pytest.param('notes ""', [("notes", 0, 5), ("", 6, 8)], id="empty-double-quotes"),
    pytest.param("notes '#urgent'", [("notes", 0, 5), ("#urgent", 6, 15)], id="quoted-hash"),
    pytest.param('notes "#x"', [("notes", 0, 5), ("#x", 6, 10)], id="double-quoted-hash"),
    pytest.param("notes a#b", [("notes", 0, 5), ("a#b", 6, 9)], id="hash-inside-word"),
    pytest.param("notes \\#b", [("notes", 0, 5), ("#b", 6, 9)], id="escaped-hash"),
    pytest.param("notes ''#b", [("notes", 0, 5), ("#b", 6, 10)], id="hash-after-quotes"),
    pytest.param(
        'notes "\\$x" "\\\\" "\\a"',
        [("notes", 0, 5), ("$x", 6, 11), ("\\", 12, 16), ("\\a", 17, 21)],
        id="backslashes-in-double-quotes",
    ),
    pytest.param("notes 'it'\\''s'", [("notes", 0, 5), ("it's", 6, 15)], id="quote-idiom"),
    pytest.param('notes "it\'s"', [("notes", 0, 5), ("it's", 6, 12)], id="apostrophe"),
    pytest.param("notes a\\ b", [("notes", 0, 5), ("a b", 6, 10)], id="escaped-blank"),
    pytest.param("notes \\a'\\'", [("notes", 0, 5), ("a\\", 6, 11)], id="escapes"),
    pytest.param("notes a\\\nb", [("notes", 0, 5), ("ab", 6, 10)], id="continuation-in-word"),
    pytest.param(
        "notes a \\\n  --all",
        [("notes", 0, 5), ("a", 6, 7), ("--all", 12, 17)],
        id="continuation-between-words",
    ),
    pytest.param("notes a \\\n", [("notes", 0, 5), ("a", 6, 7)], id="trailing-continuation"),
    pytest.param('notes "a\nb"', [("notes", 0, 5), ("a\nb", 6, 11)], id="newline-in-quotes"),
    pytest.param("notes 'a\nb'", [("notes", 0, 5), ("a\nb", 6, 11)], id="newline-in-sq"),
    pytest.param(
        "notes 'a\\\nb'", [("notes", 0, 5), ("a\\\nb", 6, 12)], id="continuation-in-sq-is-text"
    ),
    pytest.param('notes "a\\\nb"', [("notes", 0, 5), ("ab", 6, 12)], id="continuation-in-dq"),
    pytest.param(
        "notes —verbose “x” é",
        [("notes", 0, 5), ("—verbose", 6, 14), ("“x”", 15, 18), ("é", 19, 20)],
        id="unicode-dashes-and-quotes",
    ),
    pytest.param("notes a\u200fb", [("notes", 0, 5), ("a\u200fb", 6, 9)], id="rtl-mark"),
    pytest.param("notes a\u00a0b", [("notes", 0, 5), ("a\u00a0b", 6, 9)], id="nbsp-not-blank"),
    pytest.param("notes a\rb", [("notes", 0, 5), ("a\rb", 6, 9)], id="carriage-return"),
    pytest.param("notes { }", [("notes", 0, 5), ("{", 6, 7), ("}", 8, 9)], id="brace-words"),
    pytest.param(
        "notes a { if", [("notes", 0, 5), ("a", 6, 7), ("{", 8, 9), ("if", 10, 12)], id="brace-if"
    ),
    pytest.param(
        'notes a$ $/ "$"',
        [("notes", 0, 5), ("a$", 6, 8), ("$/", 9, 11), ("$", 12, 15)],
        id="literal-dollars",
    ),
    pytest.param("notes $é", [("notes", 0, 5), ("$é", 6, 8)], id="dollar-non-ascii"),
    pytest.param("notes a'$X'", [("notes", 0, 5), ("a$X", 6, 11)], id="single-quoted-dollar"),
    pytest.param("notes a'`'", [("notes", 0, 5), ("a`", 6, 10)], id="single-quoted-backquote"),
    pytest.param("notes a'${'", [("notes", 0, 5), ("a${", 6, 11)], id="single-quoted-dollar-brace"),
    pytest.param("notes X=1", [("notes", 0, 5), ("X=1", 6, 9)], id="assignment-as-argument"),
    pytest.param(
        "notes if then time !",
        [("notes", 0, 5), ("if", 6, 8), ("then", 9, 13), ("time", 14, 18), ("!", 19, 20)],
        id="keywords-as-arguments",
    ),
    pytest.param('"if" x', [("if", 0, 4), ("x", 5, 6)], id="quoted-keyword-first"),
    pytest.param("notes --f=~/x", [("notes", 0, 5), ("--f=~/x", 6, 13)], id="tilde-after-option"),
    pytest.param(
        "notes '~' \"~\"", [("notes", 0, 5), ("~", 6, 9), ("~", 10, 13)], id="quoted-tilde"
    ),
    pytest.param(
        "notes ~\\/x ~'/x'", [("notes", 0, 5), ("~/x", 6, 10), ("~/x", 11, 16)], id="tilde-q"
    ),
    pytest.param(
        "notes {a} {}", [("notes", 0, 5), ("{a}", 6, 9), ("{}", 10, 12)], id="lone-braces"
    ),
    pytest.param("notes {'a,b'}", [("notes", 0, 5), ("{a,b}", 6, 13)], id="quoted-comma"),
    pytest.param("notes \\{a,b}", [("notes", 0, 5), ("{a,b}", 6, 12)], id="escaped-brace"),
    pytest.param(
        "notes {1..a} {a..}", [("notes", 0, 5), ("{1..a}", 6, 12), ("{a..}", 13, 18)], id="bad-seq"
    ),
    pytest.param(
        "notes a[ a] [a",
        [("notes", 0, 5), ("a[", 6, 8), ("a]", 9, 11), ("[a", 12, 14)],
        id="half-brackets",
    ),
    pytest.param("notes a[b/c]", [("notes", 0, 5), ("a[b/c]", 6, 12)], id="slash-in-brackets"),
    pytest.param(
        "notes \\* '?' \"[a]\"",
        [("notes", 0, 5), ("*", 6, 8), ("?", 9, 12), ("[a]", 13, 18)],
        id="quoted-globs",
    ),
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED)
def test_accepted_examples(text: str, expected: list[tuple[str, int, int]]) -> None:
    tokens = tokenize(text)
    assert words_of(tokens) == expected
    assert tokens.problems == ()
    assert tokens.ok


# ---------------------------------------------------------------------------------------------
# Rejected examples: every construct with its code and exact span, and the words that survive
# ---------------------------------------------------------------------------------------------

REJECTED = [
    # pipes and lists
    pytest.param("notes list | head", [(SC, 11, 12)], ["notes", "list"], id="pipe"),
    pytest.param("notes list |& head", [(SC, 11, 13)], ["notes", "list"], id="pipe-stderr"),
    pytest.param("notes a; notes b", [(SC, 7, 8)], ["notes", "a"], id="semicolon"),
    pytest.param("notes a;", [(SC, 7, 8)], ["notes", "a"], id="trailing-semicolon"),
    pytest.param("notes a && notes b", [(SC, 8, 10)], ["notes", "a"], id="and"),
    pytest.param("notes a || notes b", [(SC, 8, 10)], ["notes", "a"], id="or"),
    pytest.param("notes a &", [(SC, 8, 9)], ["notes", "a"], id="background"),
    pytest.param("notes a & notes b", [(SC, 8, 9)], ["notes", "a"], id="background-list"),
    pytest.param("notes a\nnotes b", [(SC, 7, 8)], ["notes", "a"], id="newline"),
    pytest.param("notes a\n", [(SC, 7, 8)], ["notes", "a"], id="trailing-newline"),
    pytest.param("notes a\r\nnotes b", [(SC, 8, 9)], ["notes", "a\r"], id="crlf"),
    pytest.param("notes a\\\n|b", [(SC, 9, 10)], ["notes", "a"], id="pipe-after-continuation"),
    # redirects and here-documents
    pytest.param("notes > out", [(SC, 6, 11)], ["notes"], id="redirect-out"),
    pytest.param("notes < in", [(SC, 6, 10)], ["notes"], id="redirect-in"),
    pytest.param("notes >> out", [(SC, 6, 12)], ["notes"], id="redirect-append"),
    pytest.param("notes 2>&1", [(SC, 6, 10)], ["notes"], id="redirect-dup"),
    pytest.param("notes &> out", [(SC, 6, 12)], ["notes"], id="redirect-both"),
    pytest.param("notes >| out", [(SC, 6, 12)], ["notes"], id="redirect-clobber"),
    pytest.param("notes 3>out x", [(SC, 6, 11)], ["notes", "x"], id="redirect-fd"),
    pytest.param("notes <<< word", [(SC, 6, 14)], ["notes"], id="here-string"),
    pytest.param("notes <<EOF\nbody\nEOF", [(SC, 6, 20)], ["notes"], id="here-document"),
    pytest.param("notes <<-EOF\n\tbody\n\tEOF", [(SC, 6, 23)], ["notes"], id="here-doc-tabs"),
    # subshells, groups, compound commands, keywords
    pytest.param("(notes list)", [(SC, 0, 12)], [], id="subshell"),
    pytest.param("{ notes list; }", [(SC, 0, 15)], [], id="group"),
    pytest.param("if true; then notes; fi", [(SC, 0, 23)], [], id="if"),
    pytest.param("for x in a; do notes; done", [(SC, 0, 26)], [], id="for"),
    pytest.param("while true; do notes; done", [(SC, 0, 26)], [], id="while"),
    pytest.param("until true; do notes; done", [(SC, 0, 26)], [], id="until"),
    pytest.param("case x in a) notes;; esac", [(SC, 0, 4)], [], id="case"),
    pytest.param("select x in a; do notes; done", [(SC, 0, 6)], [], id="select"),
    pytest.param("function f { notes; }", [(SC, 0, 21)], [], id="function"),
    pytest.param("f() { notes; }", [(SC, 0, 14)], [], id="function-parens"),
    pytest.param("coproc notes", [(SC, 0, 6)], [], id="coproc"),
    pytest.param("time notes list", [(SC, 0, 4)], [], id="time"),
    pytest.param("[[ -f x ]]", [(SC, 0, 2)], [], id="conditional"),
    pytest.param("((1+2))", [(SC, 0, 7)], [], id="arithmetic-command"),
    pytest.param("! notes list", [(SC, 0, 1)], ["notes", "list"], id="negation"),
    # substitutions
    pytest.param("notes $(date)", [(SC, 6, 13)], ["notes", "$(date)"], id="command-substitution"),
    pytest.param("notes `date`", [(SC, 6, 12)], ["notes", "`date`"], id="backquotes"),
    pytest.param('notes "$(date)"', [(SC, 7, 14)], ["notes", "$(date)"], id="substitution-in-dq"),
    pytest.param(
        'notes "$(echo "a b")"', [(SC, 7, 20)], ["notes", '$(echo "a b")'], id="nested-quotes"
    ),
    pytest.param("notes $(echo 'a)')", [(SC, 6, 18)], ["notes", "$(echo 'a)')"], id="quoted-paren"),
    pytest.param("notes <(ls)", [(SC, 6, 11)], ["notes", "<(ls)"], id="process-substitution-in"),
    pytest.param("notes >(cat)", [(SC, 6, 12)], ["notes", ">(cat)"], id="process-substitution-out"),
    # parameter and arithmetic expansion, $'…' and $"…"
    pytest.param("notes $HOME", [(SC, 6, 11)], ["notes", "$HOME"], id="parameter"),
    pytest.param("notes ${HOME}", [(SC, 6, 13)], ["notes", "${HOME}"], id="parameter-braces"),
    pytest.param('notes "$HOME"', [(SC, 7, 12)], ["notes", "$HOME"], id="parameter-in-dq"),
    pytest.param('notes "${H:-x}"', [(SC, 7, 14)], ["notes", "${H:-x}"], id="parameter-default"),
    pytest.param("notes $1 $@", [(SC, 6, 8), (SC, 9, 11)], ["notes", "$1", "$@"], id="specials"),
    pytest.param("notes $10", [(SC, 6, 8)], ["notes", "$10"], id="positional-one-digit"),
    pytest.param("notes ~$X/y", [(SC, 7, 9)], ["notes", "~$X/y"], id="parameter-after-tilde"),
    pytest.param("notes $\\\nHOME", [(SC, 6, 13)], ["notes", "$HOME"], id="parameter-continued"),
    pytest.param("notes $'a\\tb'", [(SC, 6, 13)], ["notes", "a\tb"], id="ansi-c-quoting"),
    pytest.param('notes $"x"', [(SC, 6, 10)], ["notes", "x"], id="locale-quoting"),
    pytest.param("notes $((1+2))", [(SC, 6, 14)], ["notes", "$((1+2))"], id="arithmetic"),
    pytest.param("notes $[1+2]", [(SC, 6, 12)], ["notes", "$[1+2]"], id="arithmetic-old"),
    pytest.param('notes "$((1))"', [(SC, 7, 13)], ["notes", "$((1))"], id="arithmetic-in-dq"),
    pytest.param("`echo $((1))`", [(SC, 0, 13)], ["`echo $((1))`"], id="arithmetic-in-backquotes"),
    # leading assignments
    pytest.param("X=1 notes", [(SC, 0, 3)], ["notes"], id="assignment"),
    pytest.param("X=1 Y=2 notes", [(SC, 0, 3), (SC, 4, 7)], ["notes"], id="assignments"),
    pytest.param("a[1]=x notes", [(SC, 0, 6)], ["notes"], id="array-assignment"),
    pytest.param("X+=1 notes", [(SC, 0, 4)], ["notes"], id="append-assignment"),
    pytest.param("X=1", [(SC, 0, 3)], [], id="assignment-only"),
    # comments
    pytest.param("notes a # c", [(CM, 8, 11)], ["notes", "a"], id="comment"),
    pytest.param("notes a;#c", [(SC, 7, 8), (CM, 8, 10)], ["notes", "a"], id="comment-after-semi"),
    pytest.param("notes a #c\n", [(CM, 8, 10), (SC, 10, 11)], ["notes", "a"], id="comment-newline"),
    pytest.param("notes a # c \\\nb", [(CM, 8, 13), (SC, 13, 14)], ["notes", "a"], id="comment-bs"),
    pytest.param("# just a comment", [(PE, 0, 16), (CM, 0, 16)], [], id="comment-only"),
    # parse errors
    pytest.param("notes 'abc", [(PE, 6, 10)], [], id="unbalanced-single"),
    pytest.param('notes "abc', [(PE, 6, 10)], [], id="unbalanced-double"),
    pytest.param("notes `abc", [(PE, 6, 10)], [], id="unbalanced-backquote"),
    pytest.param("notes $(abc", [(PE, 6, 11)], [], id="unbalanced-substitution"),
    pytest.param("notes ${abc", [(PE, 6, 11)], [], id="unbalanced-parameter"),
    pytest.param("notes abc\\", [(PE, 9, 10)], [], id="lone-backslash"),
    pytest.param("notes a |", [(PE, 8, 9)], [], id="dangling-pipe"),
    pytest.param("", [(PE, 0, 0)], [], id="empty"),
    pytest.param(" \t\n", [(PE, 0, 3)], [], id="blank"),
    pytest.param("\\\n", [(PE, 0, 2)], [], id="only-a-continuation"),
]


@pytest.mark.parametrize(("text", "problems", "words"), REJECTED)
def test_rejected_examples(
    text: str, problems: list[tuple[str, int, int]], words: list[str]
) -> None:
    tokens = tokenize(text)
    assert problems_of(tokens) == problems
    assert [word.text for word in tokens.words] == words
    assert not tokens.ok
    assert all(problem.severity == "error" for problem in tokens.problems)


def test_an_unexpected_end_is_located_whatever_was_parsed_before() -> None:
    # bashlex reuses state across parses: an earlier failure must not move this one's span.
    tokenize("(a")
    tokens = tokenize("notes dangling-pipe x |")
    assert problems_of(tokens) == [("parse-error", 22, 23)]


def test_messages_name_the_construct() -> None:
    messages = {
        "notes delete 3 | head": "a pipe '|' makes this two commands",
        "notes $(date)": "command substitution '$(date)' is expanded by the shell",
        "notes a # c": "'#' starts a comment: the shell drops '# c'",
        "notes 'abc": "unbalanced quote",
        "X=1 notes": "the assignment 'X=1' sets a shell variable",
        "notes *.md": "'*' is a glob",
    }
    for text, expected in messages.items():
        assert expected in tokenize(text).problems[0].message


# ---------------------------------------------------------------------------------------------
# Warnings: what the shell would still expand; never an error
# ---------------------------------------------------------------------------------------------

WARNED = [
    pytest.param("notes *.md", [(6, 7)], id="star"),
    pytest.param("notes a?", [(7, 8)], id="question-mark"),
    pytest.param("notes [ab]", [(6, 10)], id="bracket"),
    pytest.param('notes x["]"]', [(7, 12)], id="bracket-quoted-inside"),
    pytest.param("notes *'*'", [(6, 7)], id="only-unquoted-star"),
    pytest.param("notes {a,b}", [(6, 11)], id="brace-list"),
    pytest.param("notes {,}", [(6, 9)], id="brace-empty-list"),
    pytest.param("notes x{1..3}", [(7, 13)], id="brace-sequence"),
    pytest.param("notes {a..c}", [(6, 12)], id="brace-letters"),
    pytest.param("notes {a,b}{c,d}", [(6, 11), (11, 16)], id="two-braces"),
    pytest.param("notes {a}b,c}", [(6, 13)], id="brace-bash-quirk"),
    pytest.param("notes {1..'3,'}", [(6, 15)], id="brace-quoted-comma-quirk"),
    pytest.param("notes x={a,b}", [(8, 13)], id="brace-in-assignment-word"),
    pytest.param("notes ~", [(6, 7)], id="tilde"),
    pytest.param("notes ~/x", [(6, 7)], id="tilde-slash"),
    pytest.param("notes ~root/x", [(6, 11)], id="tilde-user"),
    pytest.param("notes ~nosuchuser", [(6, 17)], id="tilde-any-user"),
    pytest.param("notes ~+", [(6, 8)], id="tilde-pwd"),
    pytest.param("notes ~:x", [(6, 7)], id="tilde-colon"),
    pytest.param("notes a=~/x", [(8, 9)], id="tilde-after-equals"),
    pytest.param("notes a=b:~/x", [(10, 11)], id="tilde-after-colon"),
    pytest.param("notes a[1]=~/x", [(7, 10), (11, 12)], id="tilde-subscript-and-glob"),
]


@pytest.mark.parametrize(("text", "spans"), WARNED)
def test_expansion_warnings(text: str, spans: list[tuple[int, int]]) -> None:
    tokens = tokenize(text)
    assert problems_of(tokens) == [(EX, start, end) for start, end in spans]
    assert all(problem.severity == "warning" for problem in tokens.problems)
    assert tokens.ok  # a warning never fails an example
    assert tokens.words[0].text == "notes"


def test_ok_is_false_only_for_errors() -> None:
    assert tokenize("notes *.md").ok
    assert not tokenize("notes *.md | head").ok
    assert tokenize("notes *.md | head").problems[0].code == EX  # sorted by position


# ---------------------------------------------------------------------------------------------
# Hostile input: never raises, never slow
# ---------------------------------------------------------------------------------------------

HOSTILE = [
    pytest.param("notes a\x00b", [(PE, 7, 8)], id="nul"),
    pytest.param("notes \ud800", [(PE, 6, 7)], id="lone-surrogate"),
    pytest.param("\x00\udfff", [(PE, 0, 1), (PE, 1, 2)], id="nul-and-surrogate"),
    pytest.param("notes a\r\nb\rc\n", [(SC, 8, 9), (SC, 12, 13)], id="cr-lf-mix"),
    pytest.param("\\", [(PE, 0, 1)], id="only-a-backslash"),
    pytest.param("$(" * 5000, [(PE, 9998, 10000)], id="unclosed-nesting"),
    pytest.param("$" + "(" * 10_000, [(PE, 0, 10_001)], id="unclosed-arithmetic"),
    pytest.param("~`\\;${x=$([x=|{!))`", [(SC, 1, 19)], id="backquote-after-tilde"),
    pytest.param('"$(' * 3000, [(PE, 8998, 9000)], id="unclosed-quoted-nesting"),
]


@pytest.mark.parametrize(("text", "problems"), HOSTILE)
def test_hostile_input(text: str, problems: list[tuple[str, int, int]]) -> None:
    start = time.perf_counter()
    tokens = tokenize(text)
    assert time.perf_counter() - start < 2.0
    assert problems_of(tokens) == problems
    assert not tokens.ok


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a " + "$(" * 2000 + ")" * 2000, id="command-substitutions"),
        pytest.param("a " + "`" * 2000, id="backquotes"),
        pytest.param("(" * 3000 + "a" + ")" * 3000, id="subshells"),
        pytest.param("{ " * 3000 + "a; " + "} " * 3000, id="groups"),
        pytest.param("a " + "${x:-" * 2000 + "}" * 2000, id="parameters"),
    ],
)
def test_deep_nesting_is_an_error_not_a_crash(text: str) -> None:
    start = time.perf_counter()
    tokens = tokenize(text)  # bashlex recurses per level: RecursionError must not escape
    assert time.perf_counter() - start < 5.0
    assert not tokens.ok
    assert all("internal error" not in problem.message for problem in tokens.problems)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("notes " + "ab " * 33_330, id="plain"),
        pytest.param("a|" * 50_000, id="pipes"),
        pytest.param("a\n" * 50_000, id="newlines"),
        pytest.param("$(" * 50_000, id="nesting"),
        pytest.param("a " + "{a," * 33_000, id="braces"),
    ],
)
def test_huge_text_is_refused_at_once(text: str) -> None:
    start = time.perf_counter()
    tokens = tokenize(text)
    assert time.perf_counter() - start < 0.5
    assert problems_of(tokens) == [(PE, MAX_CHARS, len(text))]


def test_the_size_limit_is_the_same_on_both_paths() -> None:
    longest = ("ab " * MAX_CHARS)[:MAX_CHARS].rstrip()
    assert len(tokenize(longest).words) == len(longest.split())
    assert tokenize(longest) == _tokenize_with_bashlex(longest)
    too_long = longest + " " * (MAX_CHARS + 1 - len(longest))
    assert _fast_tokenize(too_long) is None
    assert problems_of(tokenize(too_long)) == [(PE, MAX_CHARS, MAX_CHARS + 1)]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a " + "*" * (MAX_CHARS - 2), id="globs"),
        pytest.param("a " + "[" * (MAX_CHARS - 3) + "]", id="brackets"),
        pytest.param("a " + "{" * (MAX_CHARS - 2), id="open-braces"),
        pytest.param("a " + "{a," * ((MAX_CHARS - 3) // 3) + "}", id="brace-lists"),
        pytest.param("a " + "~" * (MAX_CHARS - 2), id="tildes"),
        pytest.param("a a=" + ":~" * ((MAX_CHARS - 4) // 2), id="assignment-tildes"),
        pytest.param("a " + "\\a" * ((MAX_CHARS - 2) // 2), id="backslashes"),
        pytest.param("a " + "b\\\n" * ((MAX_CHARS - 2) // 3), id="continuations"),
        pytest.param('a "' + "$X" * ((MAX_CHARS - 4) // 2) + '"', id="parameters-in-quotes"),
    ],
)
def test_largest_words_stay_linear(text: str) -> None:
    # Our own passes over one huge word (lexer, quote removal, brace/glob/tilde rules).
    start = time.perf_counter()
    lex = _lex(text)
    analysis = _analyze_word(text, 2, len(text), dict(lex.expansions))
    assert time.perf_counter() - start < 1.0
    assert analysis.value


def test_brace_words_retry_stays_linear() -> None:
    text = "a " + "{ } " * ((MAX_CHARS - 2) // 4)
    lex = _lex(text)
    start = time.perf_counter()
    positions = _argument_braces(text, lex.brace_words)
    assert time.perf_counter() - start < 0.2
    # Each `{` follows a word; each `}` follows that `{`, which the retry then turns into a word.
    assert positions == lex.brace_words[::2]


def test_longest_list_is_bounded() -> None:
    start = time.perf_counter()
    tokens = tokenize("a;" * (MAX_CHARS // 2))  # bashlex's worst shape: thousands of commands
    assert time.perf_counter() - start < 10.0
    assert len(tokens.problems) == MAX_CHARS // 2


# ---------------------------------------------------------------------------------------------
# The fast path: bashlex only when needed, and provably the same answer
# ---------------------------------------------------------------------------------------------

REALISTIC = [
    "notes list",
    "notes add 'Buy milk' --tag groceries --due 2024-06-01",
    'notes add "Call mom about the trip" -t family -p high',
    "notes delete 42 --force",
    "notes search 'meeting notes' --limit 10 --format=json",
    "git commit -m \"fix: handle 'empty' input\" --author=dev@example.com",
    "notes export --output ./backup/notes.json --since 2024-01-01T00:00:00",
    'notes edit 7 --title "Budget 50% over, see #12" --tags=a,b,c',
    "notes tag add issue#12 v1.2.3 +1 key=value user@host:path ^caret",
    "notes add 'café — naïve “quotes” 日本語'",
    "notes add \"multi\nline\" 'with $dollar and `ticks` kept literally'",
]


@pytest.mark.parametrize("text", REALISTIC)
def test_realistic_examples_take_the_fast_path(text: str) -> None:
    fast = _fast_tokenize(text)
    assert fast is not None
    assert fast == _tokenize_with_bashlex(text)


@pytest.mark.parametrize(
    "text",
    [
        "notes $X",
        "notes #c",
        "notes *",
        "notes {a,b}",
        "notes ~/x",
        "notes a\\ b",
        'notes "a$b"',
        'notes "a!"',
        "notes a\nb",
        "X=1 notes",
        "time notes",
        "if x",
        "notes |x",
        "",
        " ",
    ],
)
def test_fast_path_declines_anything_else(text: str) -> None:
    assert _fast_tokenize(text) is None


def test_importing_does_not_import_bashlex() -> None:
    code = (
        "import sys\n"
        "from exampleguard._tokenize import tokenize\n"
        "assert tokenize('notes add \"buy milk\" --tag=x').ok\n"
        "assert tokenize('notes add \"buy milk\" \\\\\\n    --tag=x').ok\n"
        "print('bashlex' in sys.modules)\n"
        "tokenize('notes $HOME')\n"
        "print('bashlex' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "True"]


_PLAIN = st.from_regex(r"[A-Za-z0-9_./:,=@%+^-]{1,8}", fullmatch=True)
_UNICODE = st.one_of(
    st.sampled_from(
        [
            *["é", "—verbose", "“x”", "日本", "\u200f", "\u00a0", "\x85", "\u2028", "\u2029"],
            *["\u3000", "\ufeff", "\U0001f600", "\u0600"],
        ]
    ),
    st.text(st.characters(min_codepoint=0x80, exclude_categories=["Cs"]), min_size=1, max_size=3),
)
_IN_QUOTES = [*"ab #*?~{},;|&<>()=:!\n\t", "é", "$X", "$", "`", "${", "$(", "\\", "\\\n"]
_SINGLE = st.lists(st.sampled_from([*_IN_QUOTES, '"']), max_size=5).map(
    lambda parts: "'" + "".join(parts) + "'"
)
_PLAIN_DOUBLE = st.lists(st.sampled_from([*"ab #*?~{}';|&<>()=:\n\t", "é"]), max_size=5).map(
    lambda parts: '"' + "".join(parts) + '"'
)
_DOUBLE = st.lists(
    st.sampled_from(
        [*_IN_QUOTES, "'", "${X}", "$(x)", "`x`", "\\$", '\\"', "\\\\", "\\a", "\\`", "$((1))"]
    ),
    max_size=5,
).map(lambda parts: '"' + "".join(parts) + '"')
_CONSTRUCTS = st.sampled_from(
    [
        # pipes, lists, newlines
        *["|", "|&", ";", "&&", "||", "&", "\n", "\r\n", ";;"],
        # redirects and here-documents
        *[">f", "> f", ">>f", "<f", "2>&1", "&>f", "<<<x", "<<E\nx\nE\n", "<<'E'\nx\nE\n", "<<"],
        # substitutions and expansions
        *["$(x)", "`x`", "<(x)", ">(x)", "$X", "${X}", "$1", "$@", "$((1+2))", "$[1]"],
        *["$'a\\tb'", "$'\\''", '$"x"', "a$", "$é", "$", "${", "$(", "`"],
        # compound commands and keywords
        *["(x)", "{ x; }", "{", "}", "(", ")", "if", "then", "fi", "for", "in", "do", "done"],
        *["case", "esac", "time", "coproc", "function", "select", "!", "[[", "]]", "(("],
        # assignments
        *["X=1", "a[1]=2", "X+=1", "=", "A="],
        # comments
        *["#", "#c", "# c"],
        # escapes and continuations
        *["\\x", "\\ ", "\\\\", "\\#", "\\'", '\\"', "\\$X", "\\\n", "\\"],
        # globs, braces, tildes
        *["*", "?", "[ab]", "[", "]", "{a,b}", "{1..3}", "{a}", "{}", "{,}"],
        *["~", "~/x", "~root", "a=~/x", "x:~", "--f=~/x"],
        # quotes that do not close, and bashlex's traps
        *["'", '"', "'${'", "'`'", "a'$X'", "'$(x'"],
    ]
)
_PIECE = st.one_of(
    _PLAIN,
    _PLAIN,
    _PLAIN,
    _PLAIN,
    _UNICODE,
    _SINGLE,
    _PLAIN_DOUBLE,
    _DOUBLE,
    _CONSTRUCTS,
    _PLAIN.map(lambda word: "#" + word),
    _PLAIN.map(lambda word: word + "#"),
)
_WORD = st.lists(_PIECE, min_size=1, max_size=3).map("".join)


@st.composite
def example_texts(draw: st.DrawFn) -> str:
    """Plain words mixed with every construct, blanks around and between them."""
    text = draw(st.sampled_from(["", "", " ", "\t", "  "]))
    for index, word in enumerate(draw(st.lists(_WORD, max_size=7))):
        if index:
            text += draw(st.sampled_from([" ", "  ", "\t", " \t "]))
        text += word
    return text + draw(st.sampled_from(["", "", " ", "\t", "\n", " \\\n"]))


_NEAR_PLAIN_WORD = st.one_of(
    _PLAIN,
    _PLAIN,
    _PLAIN,
    _PLAIN_DOUBLE,
    _PLAIN.map(lambda word: f"'{word} {word}'"),
    st.sampled_from(["A=1", "x=y", "_a=", "A+=1", "if", "time", "in", "done", "--x=y", "é"]),
)
# What the fast path must refuse, or must handle exactly like bash: each is tried at a random
# position (at the start of a word, inside one, inside quotes, between words).
_BOUNDARY = st.sampled_from(
    [
        *"!\"#$&'()*;<>?[\\]`{|}~\n\t\r\x0b\x0c=:,",
        *["\x85", "\u2028", "\u00a0", "\ud800", "\x00", "\\\\", "\\\n", "~/", "=~", "{a,b}", "[a]"],
        *["$x", "${x}", "$(x)", "`x`", "#x", " #x", "\\$", '\\"', "<<", "&&", "2>&1"],
    ]
)


@st.composite
def near_plain_texts(draw: st.DrawFn) -> str:
    """Plain words, with up to two boundary snippets at the start, middle or end of a word."""
    words = draw(st.lists(_NEAR_PLAIN_WORD, min_size=1, max_size=5))
    for _ in range(draw(st.integers(0, 2))):
        index = draw(st.integers(0, len(words) - 1))
        word = words[index]
        at = draw(st.sampled_from([0, len(word) // 2, len(word)]))
        words[index] = word[:at] + draw(_BOUNDARY) + word[at:]
    return " ".join(words)


# Every character the fast path refuses, where it would matter: at the start of a word, inside
# one, inside double quotes; plus the first-word rules. Hypothesis adds random texts.
_PINNED = [
    *(f"notes {ch}x" for ch in "!#$&()*;<>?[]`{}~\n\r\t\x0b\\'\""),
    *(f"notes x{ch}" for ch in "!$&()*;<>?[]`{}~\n\r\\"),
    *(f'notes "{ch}"' for ch in ("\\\\", "\\$", '\\"', "$x", "`x`", "!", "\\a")),
    *["notes a=~/x", "notes x[a]", "notes {a,b}", "A=1 notes", "a=b", "time x", "in x", "if"],
    *["! notes", "!x notes", "notes a!b"],
    *["notes \x85 \u2028 \u00a0", "notes \ud800", "notes \x00", " notes ", "\tnotes\t", ""],
]


@settings(max_examples=600)
@given(st.one_of(near_plain_texts(), near_plain_texts(), example_texts()))
def test_fast_path_equals_bashlex_path(text: str) -> None:
    accurate = _tokenize_with_bashlex(text)
    fast = _fast_tokenize(text)
    event("fast path" if fast is not None else "bashlex path")
    if fast is not None:
        assert fast == accurate
    assert tokenize(text) == accurate


@pytest.mark.parametrize("text", _PINNED)
def test_fast_path_equals_bashlex_path_on_the_boundary(text: str) -> None:
    fast = _fast_tokenize(text)
    assert fast is None or fast == _tokenize_with_bashlex(text)
    assert tokenize(text) == _tokenize_with_bashlex(text)


# Documentation breaks long command lines with backslash-newlines: such a text is plain once
# they are removed, and bashlex is not needed for it.
CONTINUED = [
    "notes add 'Buy milk' \\\n    --tag groceries \\\n    --due 2024-06-01",
    "exampleguard dispositions add notes.delete 1 --reason-code needs-fixture \\\n"
    '    --reason "Deleting by tag needs a database" \\\n    --reviewer a-reviewer',
    "notes list --for\\\nmat json",
    "notes list \\\n",
]


@pytest.mark.parametrize("text", CONTINUED)
def test_continued_lines_take_the_fast_path(text: str) -> None:
    fast = _fast_tokenize_continued(text)
    assert fast is not None
    assert fast == _tokenize_with_bashlex(text)


@pytest.mark.parametrize(
    "text",
    [
        "notes 'a \\\n b'",  # a single-quoted backslash-newline stays
        'notes "a \\\n b"',
        "notes \\\n#comment",
        "notes a\\\\\nb",  # an escaped backslash, then a newline that ends the command
        "notes \\\n$X",
        "notes \\\n\\\n",
    ],
)
def test_continued_lines_with_anything_else_are_left_to_bashlex(text: str) -> None:
    fast = _fast_tokenize_continued(text)
    assert fast is None or fast == _tokenize_with_bashlex(text)
    assert tokenize(text) == _tokenize_with_bashlex(text)


_BREAK = st.sampled_from([" \\\n", " \\\n    ", "\\\n", "\\\n  ", " \\\n\t"])


@st.composite
def continued_texts(draw: st.DrawFn) -> str:
    """Near-plain words, some of them broken, or joined, by backslash-newlines."""
    words: list[str] = draw(st.lists(_NEAR_PLAIN_WORD, min_size=1, max_size=5))
    text = words[0]
    for word in words[1:]:
        text += draw(st.one_of(st.just(" "), _BREAK)) + word
    at = draw(st.integers(0, len(text)))
    if draw(st.booleans()):
        text = text[:at] + draw(_BREAK | _BOUNDARY) + text[at:]
    return text


@settings(max_examples=400)
@given(continued_texts())
def test_continued_lines_are_tokenized_as_bash_does(text: str) -> None:
    accurate = _tokenize_with_bashlex(text)
    fast = _fast_tokenize_continued(text)
    event("fast path" if fast is not None else "bashlex path")
    if fast is not None:
        assert fast == accurate
    assert tokenize(text) == accurate


_HOSTILE_PIECES = st.sampled_from(
    [
        *"ab ;|&<>()$`'\"\\{}[]*?~#=:!,.\n\t\r-",
        *["$(", "${", "$((", "<<", "<<<", "\\\n", "x=", "if", "E"],
        *["\x00", "\ud800", "é", "“", "—", "\u200f", "\u2028"],
    ]
)


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=40), st.lists(_HOSTILE_PIECES, max_size=25).map("".join)))
def test_tokenize_never_raises_and_keeps_its_invariants(text: str) -> None:
    tokens = tokenize(text)
    n = len(text)
    for word in tokens.words:
        assert 0 <= word.start < word.end <= n
    for before, after in zip(tokens.words, tokens.words[1:], strict=False):
        assert before.end <= after.start
    for problem in tokens.problems:
        assert 0 <= problem.start <= problem.end <= n
        assert problem.code in CODES
        assert (problem.severity == "warning") == (problem.code == "shell-expansion")
        assert "internal error" not in problem.message
    positions = [(problem.start, problem.end) for problem in tokens.problems]
    assert positions == sorted(positions)
    if tokens.ok:
        assert tokens.words  # an accepted example has a command


# ---------------------------------------------------------------------------------------------
# Differential against a real bash: quote removal and the expansion verdicts
# ---------------------------------------------------------------------------------------------

# Each word is eval'ed on its own, so one broken word cannot disturb the others; nullglob makes
# every glob pattern visible (it matches nothing in an empty directory and disappears).
_BASH_SCRIPT = r"""shopt -s nullglob
for w in "$@"; do
  eval "printf '%s\0' START $w" 2>/dev/null || printf 'ERROR\0'
  printf '\1\0'
done"""


def bash_words(words: list[str], directory: Path) -> list[list[str] | None]:
    """What bash passes for each word (None when bash reports an error)."""
    assert BASH is not None
    result = subprocess.run(
        [BASH, "-c", _BASH_SCRIPT, "bash", *words],
        cwd=directory,
        env={"HOME": str(directory / "home"), "PATH": os.defpath, "LC_ALL": "C"},
        capture_output=True,
        check=False,
    )
    groups: list[list[str] | None] = []
    current: list[str] | None = None
    for item in result.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if item == "START":
            current = []
        elif item == "ERROR":
            current = None
        elif item == "\1":
            groups.append(current)
            current = None
        elif current is not None:
            current.append(item)
    assert len(groups) == len(words), result.stderr
    return groups


@pytest.fixture(scope="module")
def empty_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("empty")


QUOTE_REMOVAL = [
    ('"\\$x"', "$x"),
    ('"\\\\"', "\\"),
    ('"\\a"', "\\a"),
    ('"\\b\\c"', "\\b\\c"),
    ('"\\!"', "\\!"),
    ('"\\`"', "`"),
    ('"\\""', '"'),
    ('a"b"c', "abc"),
    ("''", ""),
    ("\\a", "a"),
    ("\\\\", "\\"),
    ("'\\'", "\\"),
    ("\\'", "'"),
    ('\\"', '"'),
    ("a\\\nb", "ab"),
    ('"a\\\nb"', "ab"),
    ("'a\\\nb'", "a\\\nb"),
    ('"a\nb"', "a\nb"),
    ("$\\\n", "$"),
    ("a$", "a$"),
    ('"$"', "$"),
    ("$/", "$/"),
    ("$é", "$é"),
    ("a'$X'", "a$X"),
    ("--f=~/x", "--f=~/x"),
    ("~\\/x", "~/x"),
    ('~"/x"', "~/x"),
    ("a[b/c]", "a[b/c]"),
    ("{a}", "{a}"),
    ("{1..a}", "{1..a}"),
    ("{a,b", "{a,b"),
    ("{'a,b'}", "{a,b}"),
    ("x{}", "x{}"),
    ("{},a}", "{},a}"),
    ("{a..é}", "{a..é}"),
    ("a{1..3..x}", "a{1..3..x}"),
]


@pytest.mark.parametrize(("word", "value"), QUOTE_REMOVAL)
def test_quote_removal(word: str, value: str) -> None:
    tokens = tokenize("p " + word)
    assert tokens.problems == ()
    assert [w.text for w in tokens.words] == ["p", value]


@needs_bash
def test_quote_removal_table_is_what_bash_does(empty_dir: Path) -> None:
    words = [word for word, _ in QUOTE_REMOVAL]
    assert bash_words(words, empty_dir) == [[value] for _, value in QUOTE_REMOVAL]


_QUOTING = ["'q'", '"q"', "''", '""', "\\\\", '"\\\\"', '"\\$"', "'\\'", "\\'", '\\"', "\\\n"]
# A mixed family, and focused ones that make the rare combinations common: a bracket around a
# slash, a comma or `..` at the right brace level, a `~` after the first `=` or a `:`.
_BASH_FAMILIES = [
    [
        *"ab12,*?[]/~=:+-!^%@._Z{}",
        *["..", "-1", "0", "root", "x=", "A=", "a[1]=", "a$", "$/", "é", "~+", "~-", "#"],
        *["'{'", '"}"', "'*'", '"~"', "','", "'..'", '","', "'/'", '"\n"', '"a b"', '"$"'],
        *['"\\a"', '"\\`"', "\\{", "\\*", "\\,", "\\~", "\\/", "\\#", "[!a]", "{a..c}"],
        *["{1..3..2}", "{a,b}", "x{,}", "{1..-1}", "{Z..a}", "{01..3}", "{a..c..0}", *_QUOTING],
    ],
    [*"ab*?[]/!^-", "'*'", '"["', "\\[", "\\]", '"/"', "\\/", *_QUOTING],
    [*"ab1{},-Z", "..", "0", "é", "'{'", '"}"', "\\{", "\\,", "','", "'..'", "$", *_QUOTING],
    [
        *"~/:=+-1",
        *["x=", "A=", "a[1]=", "A+=", "--f=", "root", "~+", "~-", "\\~", "\\:", "'~'", '"/"'],
        *_QUOTING,
    ],
]


def _is_one_clean_word(word: str) -> bool:
    tokens = tokenize("p " + word)
    return tokens.ok and len(tokens.words) == 2 and tokens.words[1].end == len(word) + 2


_AROUND = ["", "a", "x/", "'q'", '"q"', "\\", "=", ":"]
_TEMPLATES = {
    "tilde": (
        ["", "", "x=", "A=", "a[1]=", "A+=", "--f=", "x=a:", "a:", "1=", '"x"='],
        ["~", "~", "~+", "~-", "~root", "~nosuch", "\\~", "'~'", "~1"],
        ["", "/", "/x", ":", ":~", ":~/x", "'/'", '"x"', "/'q'", "\\/", "x/", "*", ":'q'", ':"x"/'],
    ),
    "brace": (
        _AROUND,
        [
            *["{a,b}", "{1..3}", "{a..c}", "{1..3..2}", "{a}", "{}", "{,}", "{a,{b,c}}", "{'a,b'}"],
            *["{a\\,b}", "{1..a}", "{Z..a}", "{a..é}", "{1..}", "{a}b,c}", "{1..'3,'}", "{01..3}"],
            *["{-1..1}", "{a..c..0}", "{1..3..x}", "{,a}", "{a,b", "a,b}", "{{a,b}}", "{\\{,}"],
            *["{a..}b,c}", "{a..b}c,d}", "x{}y,z}"],
        ],
        _AROUND,
    ),
    "glob": (
        _AROUND,
        [
            *["*", "?", "[ab]", "[a/b]", "[", "]", "[!a]", "[^a]", "[]]", "[]", '["]"]', "\\[a]"],
            *['"["a]', "[a'/']", "[a\\/b]", "'*'", "\\?", "[[]"],
        ],
        _AROUND,
    ),
}


def _random_words(seed: int, count: int) -> list[str]:
    """Seeded random words that tokenize as exactly one word without errors."""
    rng = random.Random(seed)
    words: list[str] = []
    while len(words) < count:
        if rng.random() < 0.5:
            pieces = rng.choice(_BASH_FAMILIES)
            word = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        else:
            word = "".join(rng.choice(part) for part in rng.choice(list(_TEMPLATES.values())))
        if _is_one_clean_word(word):
            words.append(word)
    return words


@needs_bash
@pytest.mark.parametrize("seed", range(4))
def test_expansion_verdicts_are_what_bash_does(empty_dir: Path, seed: int) -> None:
    # Seeded random words rather than hypothesis: the point is a wide, reproducible spread of
    # combinations, each checked against bash in one process per seed.
    words = _random_words(seed, 800)
    disagreements: list[tuple[str, list[str] | None, list[str]]] = []
    for word, passed in zip(words, bash_words(words, empty_dir), strict=True):
        tokens = tokenize("p " + word)
        warnings = [("p " + word)[p.start : p.end] for p in tokens.problems if p.code == EX]
        if passed == [tokens.words[1].text]:
            # bash passed the word through unchanged: no warning, except a `~name` for a user
            # this machine may not have (or `~-` without OLDPWD), which the shell may expand.
            if any(not w.startswith("~") or w[1:] in ("", "+") for w in warnings):
                disagreements.append((word, passed, warnings))
        elif not warnings:  # bash expanded it (or failed expanding it)
            disagreements.append((word, passed, warnings))
    assert disagreements == []
