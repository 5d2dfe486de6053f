"""Polish grammar: the certain rules, agreement by Morfeusz's tags, the model's comparison.

Sentences are real: short quotes of Polish Wikipedia writers' errors (PlEWi, the development
set) or sentences written for the test; Morfeusz 2 (SGJP) is real, the comparison's arithmetic
runs on a tiny backend, and the model's verdicts on the embedded Gemma-3-270M (slow).
"""

from __future__ import annotations

import pytest

from decoder.config import ConfigError
from decoder.scoring import compare, score
from lsp_server.grammar import merged
from lsp_server.settings import GRAMMAR_CODES, ServerOptions
from polish import grammar, rules, spelling
from polish.agreement import conflicts, tokens
from tests.tiny_backend import TinyBackend


def fixes(text: str) -> dict[str, tuple[str, str]]:
    """The certain rules' findings: flagged text -> (first fix, rule)."""
    found, _ = grammar.check(text)
    return {text[f.start : f.end]: (f.suggestions[0], f.reason) for f in found}


def asked(text: str) -> dict[str, tuple[str, ...]]:
    """The words agreement questions, with the forms the model is asked to weigh."""
    return {text[c_start:c_end]: opts for c_start, c_end, opts in _conflicts(text)}


def _conflicts(text: str):
    toks = tokens(text)
    return [(toks[c.index].start, toks[c.index].end, c.options) for c in conflicts(toks)]


# -- the certain rules -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "flagged", "fix", "rule"),
    [
        # PlEWi: "Incompatibilitas - zasada nie łączenie pewnych stanowisk państwowych."
        ("zasada nie łączenia pewnych stanowisk", "nie łączenia", "niełączenia", "nie-razem"),
        (
            "Decyzja Rokity, nie skonsultowana z władzami.",
            "nie skonsultowana",
            "nieskonsultowana",
            "nie-razem",
        ),  # noqa: E501
        ("To był nie dobry pomysł.", "nie dobry", "niedobry", "nie-razem"),
        ("Tego jeszcze niewiem na pewno.", "niewiem", "nie wiem", "nie-osobno"),
        # PlEWi: "Zasada nie łączenia pewnych stanowisk obowiązuje też w współczesnej Polsce."
        ("obowiązuje też w współczesnej Polsce", "w", "we", "w-we"),
        ("Mieszka we Anglii od lat.", "we", "w", "w-we"),
        # PlEWi: "porażki w starciach z świetnie wyszkoloną i wyposażoną armią"
        ("w starciach z świetnie wyszkoloną armią", "z", "ze", "z-ze"),
        ("Wrócił z szkoły późno.", "z", "ze", "z-ze"),
        ("Poszedł z mną do kina.", "z", "ze", "z-ze"),
        # PlEWi: "Jan Rokita powiedział że Andrzej Lepper spotykał się"
        ("Jan Rokita powiedział że Andrzej Lepper", " że", ", że", "przecinek"),
        # PlEWi: "pojawili się ludzie którzy dążyli do jego całkowitego"
        ("pojawili się ludzie którzy dążyli", " którzy", ", którzy", "przecinek"),
        ("Chciał przyjść ale nie mógł.", " ale", ", ale", "przecinek"),
        ("Nie był tchórzem lecz rozsądnym człowiekiem.", " lecz", ", lecz", "przecinek"),
        ("Byłem zmęczony więc poszedłem spać.", " więc", ", więc", "przecinek"),
        # PlEWi: "7 MUTE 013 wydany 20 luty 1981", "20 listopad – w Bronowicach"
        ("wydany 20 luty 1981", "luty", "lutego", "data"),
        ("20 listopad – w Bronowicach miał miejsce ślub", "listopad", "listopada", "data"),
        # PlEWi: "można go powiązać ... z operatorem rzutowania na tą podprzestrzeń"
        ("z operatorem rzutowania na tą podprzestrzeń", "tą", "tę", "tę-tą"),
        ("Tą pierwszą armię pokonał generał.", "Tą", "Tę", "tę-tą"),
        # PlEWi: "Przez wyspę tą przebiegał szlak handlowy wiodący"
        ("Przez wyspę tą przebiegał szlak handlowy", "tą", "tę", "tę-tą"),
        # PlEWi: "Król zaakceptował i te żądanie."; LanguageTool: "Te dziecko zachowuje się"
        ("Król zaakceptował i te żądanie.", "te", "to", "te-to"),
        ("Te dziecko zachowuje się grzecznie.", "Te", "To", "te-to"),
        ("Widziałem te nowe zdjęcie i tamte auto.", "te", "to", "te-to"),
        ("Widziałem te nowe zdjęcie i tamte auto.", "tamte", "tamto", "te-to"),
        # PlEWi: "i internowany na okres od 23 styczni 1982 do 2 lipca"
        ("internowany na okres od 23 styczni 1982 do 2 lipca", "styczni", "stycznia", "data"),
        # PlEWi: "w XV wieku ukończono fasadę z dwoma wieżami zwieńczonymi ażurowymi hełmami"
        ("ukończono fasadę z dwoma wieżami zwieńczonymi", "dwoma", "dwiema", "dwiema"),
        ("z fasadą zachodnią z dwoma masywnymi wieżami", "dwoma", "dwiema", "dwiema"),
        # PlEWi: a year's list, entries dated by the month alone
        ("czerwca – Stephen Crane, pisarz amerykański lipca – H.", "czerwca", "czerwiec", "data"),
        ("czerwca – Stephen Crane, pisarz amerykański lipca – H.", "lipca", "lipiec", "data"),
        # PlEWi: "jest autorem słynnego dzieła O poprawie Rzeczpospolitej, w którym bronił"
        ("O poprawie Rzeczpospolitej, w", "Rzeczpospolitej", "Rzeczypospolitej", "rzeczpospolita"),
        # LanguageTool's examples: a personal pronoun and its verb's person, "nie" between
        ("Ja umie mówić po polsku.", "umie", "umiem", "osoba"),
        ("Ja nie umie mówić po polsku.", "umie", "umiem", "osoba"),
        ("My nie robi tego.", "robi", "robimy", "osoba"),
        # ... a noun SGJP marks collective takes a collective count
        ("Mam dwa dzieci.", "dwa", "dwoje", "zbiorowy"),
        ("Mam siedemdziesiąt dzieci.", "siedemdziesiąt", "siedemdziesięcioro", "zbiorowy"),
        # ... after "żeby", "gdyby" the person's ending goes on the conjunction
        ("Radził, żeby przyznałem się do winy.", "żeby przyznałem", "żebym przyznał", "żebym"),
        ("Gdybyś zrobiłeś błąd, popraw go.", "zrobiłeś", "zrobił", "żebym"),
        (
            "Wyglądał, jakby się nie wyspałem.",
            "jakby się nie wyspałem",
            "jakbym się nie wyspał",
            "żebym",
        ),  # fmt: skip
        # compound prepositions are one word; "przede wszystkim"
        ("Kot wyszedł z pod stołu.", "z pod", "spod", "przyimek-razem"),
        ("Po za tym nic nie wiem.", "Po za", "Poza", "przyimek-razem"),
        ("Zdjęcie z przed wojny.", "z przed", "sprzed", "przyimek-razem"),
        ("Przed wszystkim chodzi o to.", "Przed wszystkim", "Przede wszystkim", "przyimek-razem"),
        ("W raz z nią popierał rozwój nauki.", "W raz", "Wraz", "przyimek-razem"),
        # ... after a number the currency takes the count's form
        ("To kosztowało 42 złoty.", "złoty", "złote", "złoty"),
        ("To kosztowało 14 złoty.", "złoty", "złotych", "złoty"),
        ("To kosztowało 1 złote.", "złote", "złoty", "złoty"),
    ],
)
def test_certain_rules_flag_real_errors_with_the_fix(text, flagged, fix, rule):
    assert fixes(text)[flagged] == (fix, rule)


@pytest.mark.parametrize(
    "text",
    [
        "Nie taki diabeł straszny, jak go malują.",  # a determiner stays apart
        "To był nie dobry, lecz zły pomysł.",  # a contrast keeps "nie" apart
        "Nie wiem, czy przyjdzie.",
        "Nienawidzę poniedziałków.",  # a verb written with nie
        "We wtorek idziemy ze szkołą we dwoje do kina z Anną.",
        "Wrócił z zewnątrz, ze łzami w oczach, z ZWZ.",
        "Mimo że padało, wyszedł. Wiem, że to prawda. Dom, w którym mieszkam, jest stary.",
        "W skład którego wchodzą trzy osoby. Mało który student to wie.",
        "Poszedł więc do domu. Tak więc skończyliśmy.",
        "Wiedział to, gdyby więc chciała kochać, to by kochała.",  # "więc" a particle
        "Urodził się 20 lutego 1981 roku, a zmarł 3 maja.",
        "Bawił się tą piłką przez godzinę.",  # "tą" with an instrumental
        "Zabrał walizkę tą drogą.",  # "tą" goes with the instrumental after it
        "Spod stołu, znad rzeki, poza tym, pomimo to; wyszedł z, pod koniec, przed wszystkimi.",
        "Raz w raz przerywały jazdę popsute mosty.",  # an idiom (LanguageTool's example)
        # "te" with a plural, a noun that may be plural, or no Polish noun
        "Te dzieci oglądały te wideo i te złote monety. Śpiewa Kiri Te Kanawa. Te Deum.",
        "Czytał to w „Rzeczpospolitej” z dwoma kolegami i dwiema koleżankami.",  # a newspaper
        "Od 23 stycznia 1982 do 3 maja 1983, a potem 5 marca.",
        # a month governed by what stands before it, or a range
        "Do końca lipca – jak podaje prasa – trwały prace. Ubiegłego lipca – pamiętam – padało.",
        "5 czerwca – 7 lipca 1990 trwała wystawa; czerwca – lipca 1991 nie.",
        "Ja nie wiem, ty nie wiesz, my wiemy. Ja byłem tam. Mam dwoje dzieci i kilka dzieci.",
        "We cztery oczy, z dwoma dziećmi, o trzech dzieciach.",
        "Chcę, żebyśmy poszli. Gdyby był tu, wiedziałby. Żebym to ja wiedział, abyś przyszła.",
        "Kosztuje 1 234 złote, 5 złotych, 1 złoty. Nie mam 2 złotych. O 5 złotych więcej.",
        "Zdobył 3 złote medale i 5 złotych medali. W 1924 złoty zastąpił markę.",
    ],
)
def test_certain_rules_leave_correct_sentences_alone(text):
    assert fixes(text) == {}


def test_two_words_polish_writes_as_one_are_the_models_question_with_their_own_code():
    text = "Premier wie na prawdę dużo, a z resztą nikt nie dyskutuje."
    found, questions = grammar.check(text)
    assert found == []
    asked = [(q.word, q.options, q.relation, q.reason) for q in questions]
    assert asked == [
        ("na prawdę", ("naprawdę",), "razem", "razem"),
        ("z resztą", ("zresztą",), "razem", "razem"),
    ]
    assert grammar.check(text, disabled=["razem"]) == ([], [])


def test_rule_codes_are_the_settings_codes():
    assert set(GRAMMAR_CODES) == {"model", *rules.NAMES, *grammar.CERTAIN, *grammar.ASKED}
    assert ServerOptions(grammar_disabled_rules=("przecinek",)).grammar_disabled_rules
    with pytest.raises(ConfigError, match="unknown rule 'comma'"):
        ServerOptions(grammar_disabled_rules=("comma",))


def test_every_relation_has_a_margin_and_a_description():
    assert set(grammar.MARGIN) == set(grammar.RELATIONS)


def test_a_rule_switched_off_is_not_reported():
    found, _ = grammar.check("Jan powiedział że przyjdzie.", ("przecinek",))
    assert found == []


# -- agreement ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "word", "option"),
    [
        ("Nowa moneta był bita i okrągła.", "był", "była"),  # PlEWi, subject-verb
        ("Dzieci byli niegrzeczne.", "byli", "były"),  # LanguageTool #4056
        ("On poszła do szkoły.", "poszła", "poszedł"),  # #4056
        ("Ona jedzie samochód.", "samochód", "samochodem"),  # #4056: a verb with no object
        ("Kathryn Grayson, amerykański aktorka.", "amerykański", "amerykańska"),  # PlEWi
        ("pochodzący z tym ziem", "tym", "tych"),
        ("Nie był to kraj suwerennym.", "suwerennym", "suwerenny"),
        ("Łącznie zdobył 21 medale Drużynowych Mistrzostw", "medale", "medali"),  # PlEWi
        ("żółty - do schronisko PTTK przy Morskim Oku", "schronisko", "schroniska"),  # PlEWi
        ("Nie uzyskał reelekcji w kolejnych wyborów.", "wyborów", "wyborach"),  # PlEWi
        ("zwycięstwo brytyjskie na wojskami emirów", "na", "nad"),  # PlEWi: the preposition
        # an adjective after a genitive: the noun it might belong to is past a locative
        (
            "Mówił o korzystnym dla Niemiec spłacaniu reparacji wojenny z czasów wojny.",
            "wojenny",
            "wojennych",
        ),
        # PlEWi: after a preposition "układzie" is a noun, not a rare verb form
        ("klasztory o układzie romańskich były przykrywane", "romańskich", "romańskim"),
        # PlEWi: an impersonal form takes no subject
        (
            "Rodzina królewska często zatrzymywano orszak, by odpocząć.",
            "zatrzymywano",
            "zatrzymywała",
        ),
        # PlEWi: a negated verb's object is genitive
        ("częste są covery nie wnoszące wiele walorów artystycznych", "wiele", "wielu"),
        ("Nie mam czas na to.", "czas", "czasu"),
        # PlEWi: a count that takes the genitive makes its verb neuter singular
        ("Ponad 1,6 miliona dolarów trafiła na konto fundacji.", "trafiła", "trafiło"),
        ("Około 300 żołnierzy zginęli.", "zginęli", "zginęło"),
        # PlEWi: an adverbial participle joined to an adjectival one
        (
            "tworzą kanały przyspieszając i odpowiednio ukierunkowujące płyn",
            "przyspieszając",
            "przyspieszające",
        ),
        # PlEWi: a noun that belongs to the one before, in the genitive
        ("był stałym przedstawicielem związki plemion izraelskich", "związki", "związku"),
        # LanguageTool's examples: a word that counts governs the genitive plural
        ("Na przemówienie czekały tysiące ludzie.", "ludzie", "ludzi"),
        ("Zdobył pięć medale.", "medale", "medali"),
        # ... and a clause as the subject of "być" takes the neuter nominative
        ("Pożądanym jest, aby szkoły były umundurowane.", "Pożądanym", "Pożądane"),
        ("Niewątpliwym również jest, że Roman kocha.", "Niewątpliwym", "Niewątpliwe"),
        ("Możliwym jest wykorzystanie tego narzędzia.", "Możliwym", "Możliwe"),
        ("Jest pożądanym, aby szkoły były umundurowane.", "pożądanym", "pożądane"),
        # ... after a preposition and its word; "dobrym" is a noun's form too
        ("Z pewnością dobrym jest, że przyszedł.", "dobrym", "dobre"),
        # PlEWi: an adjective before a participle: the verb's noun (same lemma in SGJP)
        (
            "Dowodem obsesyjnego zainteresowani własną śmiercią",
            "zainteresowani",
            "zainteresowania",
        ),
        # LanguageTool's examples: subject and verb with "nie" between
        ("Dzieci nie byli grzeczne.", "byli", "były"),
        # ... and a count's noun that is also an adjective ("złote": the currency)
        ("Mam 5 złote.", "złote", "złotych"),
        # a noun after a preposition is in a case it takes: "szkoły" is no plural here
        ("Szedł do szkoły podstawowe, a potem do domu.", "podstawowe", "podstawowej"),
        # a number word takes its noun's gender
        ("Widziałem dwa kobiety na ulicy.", "dwa", "dwie"),
        ("Czekałem półtorej roku na odpowiedź.", "półtorej", "półtora"),
        ("Oba siostry przyszły.", "Oba", "Obie"),
        # "który" takes its noun's number and gender, its clause's case
        ("Kupiłem książkę, który czytam co wieczór.", "który", "którą"),
        ("To był dom, w której mieszkałem.", "której", "którym"),
        # "ten" before a noun is that noun's, though it agrees with the noun before (PlEWi)
        ("Za lidera tego okres uznać należy Kochanowskiego.", "okres", "okresu"),
        # LanguageTool's examples: a subject, its genitives, then the verb
        ("Większość ludności kolonii było emigrantami.", "było", "była"),
        ("Grupa studentów przyszli na wykład.", "przyszli", "przyszła"),
        ("Nowa moneta tego kraju był bita w mennicy.", "był", "była"),
        # PlEWi: a name's adjective after a preposition takes its noun's case
        ("Zamach w Pałacu Zimowego w Sankt Petersburgu.", "Zimowego", "Zimowym"),
    ],
)
def test_words_that_cannot_agree_are_asked_about_with_forms_that_would(text, word, option):
    assert option in asked(text)[word]


@pytest.mark.parametrize(
    "text",
    [
        "Nowa moneta była bita i okrągła.",
        "Dzieci były niegrzeczne, a on poszedł do szkoły samochodem.",
        "Pokój westfalski kończący wojnę trzydziestoletnią.",  # a participle and its object
        "Daje dzieciom nowe zabawki.",  # the adjective belongs to the next noun
        "Jan i Maria poszli do kina.",  # two subjects
        "Dom kupili sąsiedzi, a dzieci było wiele.",  # an object first; a genitive subject
        "Ukończyli 21 rok życia i zdobyli 5 medali.",
        "W art. 5 ustawy o ochronie konkurencji.",
        "Kodeks karny Królestwa Polskiego obowiązywał długo.",
        "Na dole twojego *.htconfig.php* znajduje się kilka linii.",  # markup after the word
        "bycie stygmatem seksualnej perwesji",  # PlEWi: an unknown word after the adjective
        "Opisał język znaczników podobny do innych.",  # the adjective is the noun before's
        "Tę książkę czytano często, a dom zbudowano w 1900 roku.",  # objects, not subjects
        "Spór dotyczył kościoła, a książka, którą ojciec kupił, brakowała mi.",
        "Nie przyszedł Jan, nie spał całą noc i nie miał czasu.",  # a subject; no object
        "Przyszło 5 osób, a 3 osoby przyszły. Z 10 kandydatów wygrała Anna.",
        "12 posłów głosowało, a 300 żołnierzy zginęło.",
        "Szedł, śpiewając i tańcząc, a śpiewając i tańczące dzieci patrzyły.",
        "Dał dziecku zabawki. Po obiedzie pan Tomasz wyszedł.",  # an object; a phrase of its own
        "Jednak miałem rację.",  # "miałem": a verb with its clitic, not the noun "miał"
        "Po pięciu latach, w kilku językach, na czterech nogach. Mam trochę czasu i pięć lat.",
        "Odpowiedzialni są oboje małżonkowie. Tysiące ludzi przyszło.",
        "Jan jest dobrym człowiekiem. Dobrym jest ten, kto pomaga. Pożądane jest, aby przyszedł.",
        "Widział nowego zainteresowanego klienta.",
        "Cele, w których przebywał powód nie odbiegały od innych.",  # the noun is the verb's
        "Zdobył 5 złotych medali i 3 złote medale. Kosztuje 5 złotych, a 3 złote to mało.",
        "Mam dwa psy, dwie kotki, trzy dni, dwa lata i pięć osób. Co dwa tygodnie dwie trzecie.",
        "Obie strony, półtora roku, półtorej godziny, dwóch kobiet, dwa razy.",
        # "który" may stand for any head before the comma
        "To książka brata Jana, która leży na stole. Jeden z uczniów, który przyszedł, spał.",
        "Drzwi, które otworzył, były stare. Dom, w którym mieszkam, stoi.",
        # an adjective after its noun, then a genitive; "ten" after its noun before a verb
        "Prawo karne państwa obowiązuje. Dokument ten zawiera dane, a przepis ten stosuje się.",
        # a subject and its genitives: an object first, an impersonal verb with "się"
        "Grupa studentów przyszła. Pomnik ofiar wojny odsłonili mieszkańcy.",
        "Przepisy tego działu stosuje się odpowiednio.",
        # a name's adjective that is a surname's form too, or that the name goes on after
        "Grał w Teatrze Słowackiego. Ślub w Katedrze Świętego Jana. Był w Pałacu Zimowym.",
    ],
)
def test_words_that_agree_are_not_asked_about(text):
    assert asked(text) == {}


def test_an_adjective_before_a_participle_waits_for_it_not_for_the_noun_before():
    assert list(asked("Dowodem obsesyjnego zainteresowani własną śmiercią")) == ["zainteresowani"]


# -- the model's comparison ---------------------------------------------------------------------
def test_compare_gives_each_options_gain_over_the_original_sentence():
    backend = TinyBackend(seed=7)
    text = "Ala ma kota i psa."
    edits = [(0, 7, 11, len(text), ("kot", "koty")), (0, 0, 3, len(text), ("Ola",))]
    got = compare(backend, text, edits)
    for (left, start, end, right, options), gains in zip(edits, got, strict=True):
        after = text[end:right]
        base = score(
            backend, text[left:start], [text[start:end] + after, *(o + after for o in options)]
        )
        for gain, full in zip(gains, base[1:], strict=True):
            assert gain == pytest.approx(full - base[0], abs=1e-3)


def test_compare_skips_options_that_cannot_reach_the_floor():
    backend = TinyBackend(seed=7)
    text = "Ala ma kota i psa."
    edits = [(0, 7, 11, len(text), ("kot", "koty", "kotem"))]
    full = compare(backend, text, edits)[0]
    floor = sorted(full)[1]  # between the options: at least the best is read
    pruned = compare(backend, text, edits, floor)[0]
    for exact, got in zip(full, pruned, strict=True):
        assert got is None and exact < floor or got == pytest.approx(exact, abs=1e-3)
    assert max(g for g in pruned if g is not None) == pytest.approx(max(full), abs=1e-3)


def test_decisions_keep_one_finding_per_pair_and_forms_past_the_margin():
    q = grammar.Question(0, 3, "był", ("była", "było"), "subject-verb", (0, 4), 0, 10)
    other = grammar.Question(4, 7, "moneta", ("monety",), "subject-verb", (0, 4), 0, 10)
    margin = grammar.MARGIN["subject-verb"]
    found = grammar.decide([q, other], [[margin + 3.0, margin - 1.0], [margin + 1.0]])
    assert [(f.word, f.suggestions, f.kind, f.reason) for f in found] == [
        ("był", ("była",), "grammar", "model")
    ]


def test_a_grammar_rule_takes_the_place_of_a_spelling_finding_on_the_same_words():
    text = "Tego jeszcze niewiem."
    found, _ = grammar.check(text)
    both = merged(spelling.questioned(spelling.check(text)), found)
    assert [(f.word, f.kind, f.reason) for f in both] == [("niewiem", "grammar", "nie-osobno")]


@pytest.mark.slow
def test_the_model_flags_languagetools_missed_agreement_with_the_fix_first():
    from decoder.config import Settings
    from decoder.pipeline import load_scorer

    engine = load_scorer(Settings(), progress=False)
    assert engine.describe()["target"]["exact"]  # the editors' engine's numerics: same verdicts
    expected = {
        "Dzieci byli niegrzeczne.": ("byli", "były"),
        "On poszła do szkoły.": ("poszła", "poszedł"),
        "Ona jedzie samochód.": ("samochód", "samochodem"),
        "Nowa moneta był bita i okrągła.": ("był", "była"),
        # PlEWi; the sentences below them have the same tags, and the model clears them
        "Nad Wisłą, gdzie później powstał kościoła św. Michała.": ("kościoła", "kościół"),
        "Stosunek do wierzyciela, który sytuacja pogorszyła się.": ("który", "którego"),
        "Kupiłem książkę, który czytam co wieczór.": ("który", "którą"),
        "Widziałem dwa kobiety na ulicy.": ("dwa", "dwie"),
        "Nowa moneta tego kraju był bita w mennicy.": ("był", "była"),  # over the genitives
        "Grupa studentów przyszli na wykład.": ("przyszli", "przyszła"),
        "Obrady odbyły się w Pałacu Zimowego w Sankt Petersburgu.": ("Zimowego", "Zimowym"),
        # LanguageTool: two words Polish writes as one, where the pair is right elsewhere
        "Premier wie na prawdę dużo.": ("na prawdę", "naprawdę"),
        "To był wypadek, który z resztą nikogo nie obchodził.": ("z resztą", "zresztą"),
    }
    for text, (word, fix) in expected.items():
        found, questions = grammar.check(text)
        found += grammar.ask(text, questions, engine.compare)
        assert [(f.word, f.suggestions[0]) for f in found] == [(word, fix)], text
    for text in (
        "Dzieci były niegrzeczne.",
        "Ona poszła do szkoły.",
        "Ona jedzie samochodem.",
        "A czas trwania tradycji gotyckich sięga końca XV wieku.",
        "Potwierdzały to informacje, które wywiad niemiecki otrzymywał z Londynu.",
        "Poszedłem tam razem z resztą chłopaków.",  # LanguageTool's corrected examples
        "Prowadził grę i raz za razem zapędzał się pod pole karne.",
        "Zamienił kłamstwo na prawdę.",
    ):
        found, questions = grammar.check(text)
        assert found + grammar.ask(text, questions, engine.compare) == []
