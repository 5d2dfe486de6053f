"""Prompt texts for property tests: Polish with diacritics, lists, whitespace runs, emoji, code."""

from hypothesis import strategies as st

FRAGMENTS = [
    "Zażółć gęślą jaźń. ",
    "Stolica Polski to",
    "Lista zakupów:\n1. mleko\n2. chleb\n3.",
    "| Miasto | Województwo |\n|---|---|\n| Łódź | łódzkie |\n| Kraków |",
    "Źdźbło trawy 🌱 i żółć 😀",
    "    \t  \n\n   ",
    "def dodaj(a, b):\n    # zwraca sumę\n    return",
    "Data: 2024-05-03\nGodzina: 12:30\nData:",
    "— Gdzieżeś był? — zapytała.",
    "np. m.in. tzw. itd. ",
]

ALPHABET = "aąbcćdeęfghijklłmnńoóprsśtuwyzźżAĄĆĘŁŃÓŚŹŻ .,;:-–—\n\t0123456789😀🌱€"

texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3).map("".join),
    st.text(alphabet=ALPHABET, min_size=1, max_size=40),
).filter(lambda s: s.strip() != "" or len(s) > 0)
