#!/usr/bin/env python3
"""Writes the flat-ODF (.fodt) sources of the PDF fixtures in testdata/pdf/.

Run from this directory; ../make-fixtures.sh converts them with LibreOffice.
All prose is original text written for these fixtures. The 100-page
benchmark document is generated deterministically from a fixed seed.
"""
import argparse
import os
import random
from xml.sax.saxutils import escape

HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
<office:font-face-decls>
 <style:font-face style:name="{font}" svg:font-family="'{font}'"/>
</office:font-face-decls>
<office:styles>
 <style:default-style style:family="paragraph">
  <style:paragraph-properties fo:hyphenation-ladder-count="no-limit"/>
  <style:text-properties style:font-name="{font}" fo:font-size="11pt" fo:language="{lang}" fo:country="{country}" fo:hyphenate="false"/>
 </style:default-style>
 <style:style style:name="Standard" style:family="paragraph"/>
 <style:style style:name="Text_20_body" style:display-name="Text body" style:family="paragraph" style:parent-style-name="Standard">
  <style:paragraph-properties fo:margin-top="0cm" fo:margin-bottom="0.25cm" fo:line-height="115%" fo:text-align="{align}"/>
 </style:style>
 <style:style style:name="Title" style:family="paragraph" style:parent-style-name="Standard">
  <style:paragraph-properties fo:text-align="center" fo:margin-bottom="0.4cm"/>
  <style:text-properties fo:font-size="22pt" fo:font-weight="bold"/>
 </style:style>
 <style:style style:name="Heading_20_1" style:display-name="Heading 1" style:family="paragraph" style:parent-style-name="Standard" style:default-outline-level="1">
  <style:paragraph-properties fo:margin-top="0.42cm" fo:margin-bottom="0.21cm" fo:keep-with-next="always"/>
  <style:text-properties fo:font-size="16pt" fo:font-weight="bold"/>
 </style:style>
 <style:style style:name="Heading_20_2" style:display-name="Heading 2" style:family="paragraph" style:parent-style-name="Standard" style:default-outline-level="2">
  <style:paragraph-properties fo:margin-top="0.35cm" fo:margin-bottom="0.21cm" fo:keep-with-next="always"/>
  <style:text-properties fo:font-size="13pt" fo:font-weight="bold"/>
 </style:style>
 <style:style style:name="Table_20_Contents" style:display-name="Table Contents" style:family="paragraph" style:parent-style-name="Standard"/>
 <style:style style:name="Table_20_Heading" style:display-name="Table Heading" style:family="paragraph" style:parent-style-name="Standard">
  <style:text-properties fo:font-weight="bold"/>
 </style:style>
 <style:style style:name="Header" style:family="paragraph" style:parent-style-name="Standard">
  <style:paragraph-properties fo:text-align="end"/>
  <style:text-properties fo:font-size="9pt"/>
 </style:style>
 <style:style style:name="Footer" style:family="paragraph" style:parent-style-name="Standard">
  <style:paragraph-properties fo:text-align="center"/>
  <style:text-properties fo:font-size="9pt"/>
 </style:style>
</office:styles>
<office:automatic-styles>
 <style:page-layout style:name="pm1">
  <style:page-layout-properties fo:page-width="21cm" fo:page-height="29.7cm" fo:margin-top="1.5cm" fo:margin-bottom="1.5cm" fo:margin-left="2.2cm" fo:margin-right="2.2cm"/>
  <style:header-style><style:header-footer-properties fo:min-height="0.6cm" fo:margin-bottom="0.5cm"/></style:header-style>
  <style:footer-style><style:header-footer-properties fo:min-height="0.6cm" fo:margin-top="0.5cm"/></style:footer-style>
 </style:page-layout>
 <style:style style:name="Sect2" style:family="section">
  <style:section-properties text:dont-balance-text-columns="false">
   <style:columns fo:column-count="2" fo:column-gap="1cm"/>
  </style:section-properties>
 </style:style>
 <style:style style:name="Tbl" style:family="table">
  <style:table-properties style:width="16.6cm" table:align="margins"/>
 </style:style>
 <style:style style:name="TblCell" style:family="table-cell">
  <style:table-cell-properties fo:padding="0.1cm" fo:border="0.5pt solid #000000"/>
 </style:style>
</office:automatic-styles>
<office:master-styles>
 <style:master-page style:name="Standard" style:page-layout-name="pm1">
  {header}
  <style:footer><text:p text:style-name="Footer">{pagelabel} <text:page-number text:select-page="current">1</text:page-number></text:p></style:footer>
 </style:master-page>
</office:master-styles>
<office:body><office:text>
"""
TAIL = "</office:text></office:body></office:document>\n"


OUT = "."


def doc(path, body, font="DejaVu Serif", lang="en", country="GB", align="justify",
        header="", pagelabel="Page"):
    hdr = ""
    if header:
        hdr = '<style:header><text:p text:style-name="Header">%s</text:p></style:header>' % escape(header)
    with open(os.path.join(OUT, path), "w", encoding="utf-8") as f:
        f.write(HEAD.replace("{font}", font).replace("{lang}", lang).replace("{country}", country)
                .replace("{align}", align).replace("{header}", hdr).replace("{pagelabel}", pagelabel))
        f.write(body)
        f.write(TAIL)


def p(text, style="Text_20_body"):
    return '<text:p text:style-name="%s">%s</text:p>\n' % (style, escape(text))


def h(text, level):
    return '<text:h text:style-name="Heading_20_%d" text:outline-level="%d">%s</text:h>\n' % (level, level, escape(text))


def title(text):
    return p(text, "Title")


def table(rows):
    out = ['<table:table table:name="T1" table:style-name="Tbl">']
    out.append('<table:table-column table:number-columns-repeated="%d"/>' % len(rows[0]))
    for i, row in enumerate(rows):
        out.append("<table:table-row>")
        style = "Table_20_Heading" if i == 0 else "Table_20_Contents"
        for cell in row:
            out.append('<table:table-cell table:style-name="TblCell" office:value-type="string">%s</table:table-cell>'
                       % p(cell, style))
        out.append("</table:table-row>")
    out.append("</table:table>\n")
    return "\n".join(out)


ap = argparse.ArgumentParser()
ap.add_argument("--out", default=".")
OUT = ap.parse_args().out

# --- table.fodt: headings, prose and a bordered table with a header row, two pages.
TABLE_INTRO = [
    "This report summarises how the regional library network lent out its collection during the last year. "
    "It compares the five branches by the number of loans, the number of registered readers and the share of "
    "loans that were renewed online instead of at the counter.",
    "The figures were collected from the circulation system at the end of each month. Loans of periodicals "
    "and interlibrary requests are not included, because they are recorded in a separate system that uses "
    "different identifiers for readers.",
]
TABLE_ROWS = [
    ["Branch", "Loans", "Readers", "Online renewals"],
    ["Central Library", "48,210", "9,874", "61 percent"],
    ["Harbour Street", "21,405", "4,120", "55 percent"],
    ["Northfield", "17,932", "3,651", "47 percent"],
    ["Old Mill Lane", "9,118", "2,007", "39 percent"],
    ["University Quarter", "33,760", "7,845", "72 percent"],
]
TABLE_AFTER = [
    "The central library remains the busiest branch by a wide margin, but the university quarter shows the "
    "highest share of online renewals. Readers there are younger on average and tend to manage their loans "
    "from a phone rather than visiting the counter.",
    "Old Mill Lane lends the fewest items. Its opening hours were reduced in spring while the roof was "
    "repaired, and the number of loans recovered once the branch reopened on weekday evenings.",
]
SECOND = [
    "Each branch keeps a small budget for new acquisitions. The committee recommends moving part of that "
    "budget towards audio books and language courses, which were reserved far more often than they could be lent.",
    "Waiting lists longer than four weeks were recorded for travel guides, cookery books and the local history "
    "series. Buying a second copy of the most requested titles would shorten these lists considerably.",
    "The network also plans to extend the delivery service between branches, so that a reader can collect a "
    "reserved book at the branch nearest to home instead of the branch that owns the copy.",
    "A survey of readers will be repeated next autumn. It will ask how often they visit, which services they "
    "use and what would make them borrow more, and its results will be published together with next year's figures.",
]
body = title("Library Loans Report") + h("Summary", 1)
body += "".join(p(t) for t in TABLE_INTRO)
body += h("Loans by branch", 2) + table(TABLE_ROWS)
body += "".join(p(t) for t in TABLE_AFTER)
body += '<text:p text:style-name="Text_20_body"/>' * 0
body += h("Recommendations", 1)
for i in range(3):
    body += "".join(p(t) for t in SECOND)
body += h("Next steps", 2) + p(SECOND[3])
doc("table.fodt", body, header="Regional Library Network")

# --- two-column.fodt: a full-width title and abstract, then a two-column section.
TWO_INTRO = ("Bees that forage in towns find food over a longer season than bees in the surrounding farmland. "
             "This note describes a small survey of garden hives and what it suggests for planting in parks.")
TWO_SECTIONS = [
    ("Background", [
        "Honey bees collect nectar and pollen from flowering plants within a few kilometres of the hive. "
        "In farmland the supply is large but short: a field of oilseed flowers for three weeks and then offers nothing.",
        "Gardens, parks and street trees flower one after another from early spring until late autumn. "
        "Beekeepers in towns have long claimed that their colonies build up earlier and stay strong for longer.",
        "Few surveys have compared the two settings with the same methods, so the claim rests mostly on anecdote.",
    ]),
    ("Method", [
        "Twelve volunteers weighed their hives every Sunday morning before the first flights. Six hives stood "
        "in gardens near the town centre and six stood on farms at least five kilometres from the edge of town.",
        "Pollen loads were sampled once a month with a trap fitted to the entrance for a single day. The colours "
        "of the pellets were sorted by hand and matched against a reference card of local plants.",
        "Weights were corrected for the honey that volunteers removed, which they recorded in the same notebook.",
    ]),
    ("Results", [
        "Garden hives gained weight in nine of the twelve months, farm hives in only six. The difference was "
        "largest in late summer, when lime trees, ivy and garden shrubs were still flowering in town.",
        "Pollen from town hives came from more kinds of plants in every month. Farm hives depended heavily on "
        "a few crops and on the hedges that bordered the fields.",
        "Two farm colonies had to be fed with sugar syrup in August, while none of the town colonies needed it.",
    ]),
    ("Weather", [
        "The year of the survey began with a cold and wet spring. Flights were rare until the middle of April, "
        "and both groups of hives lost weight during March as the colonies used up their winter stores.",
        "June was dry and warm. Farm hives gained quickly while the crops flowered and then stopped gaining almost "
        "overnight, whereas garden hives kept a slow but steady gain well into July.",
        "A long wet spell in September ended the season early for every hive, in town and in the country alike.",
    ]),
    ("Discussion", [
        "The survey is small and the volunteers were not chosen at random, so the results should be read with care. "
        "Still, the pattern matches what beekeepers describe and what is known about flowering times.",
        "Parks could support pollinators cheaply by planting trees and shrubs that flower in the gap between "
        "the spring blossom and the ivy of autumn. Lime, sumac and late clover are good candidates.",
        "A larger survey with automatic hive scales is planned for next year and will include wild bee counts.",
    ]),
]
body = title("Town Bees and Country Bees") + p(TWO_INTRO)
body += '<text:section text:style-name="Sect2" text:name="Columns">\n'
for name, paras in TWO_SECTIONS:
    body += h(name, 1) + "".join(p(t) for t in paras)
body += "</text:section>\n"
body += h("Acknowledgements", 1) + p("We thank the volunteers who weighed their hives every week for a whole year.")
doc("two-column.fodt", body, header="Notes on Urban Beekeeping")

# --- greek.fodt: Greek and Cyrillic prose in DejaVu Serif.
GREEK = [
    ("Η βιβλιοθήκη της πόλης", [
        "Η δημοτική βιβλιοθήκη άνοιξε ξανά μετά από δύο χρόνια εργασιών. Το παλιό κτίριο απέκτησε νέα σκεπή, "
        "φωτεινές αίθουσες ανάγνωσης και έναν κήπο όπου οι αναγνώστες μπορούν να διαβάζουν το καλοκαίρι.",
        "Οι συλλογές μεταφέρθηκαν σε νέα ράφια και κάθε βιβλίο έλαβε ετικέτα με γραμμωτό κώδικα. Έτσι ο δανεισμός "
        "γίνεται πιο γρήγορα και οι αναγνώστες μπορούν να ανανεώνουν τα βιβλία τους από το σπίτι.",
    ]),
    ("Ώρες λειτουργίας", [
        "Η βιβλιοθήκη είναι ανοιχτή από Δευτέρα έως Σάββατο, από τις εννέα το πρωί έως τις οκτώ το βράδυ. "
        "Την Κυριακή μένει κλειστή, εκτός από την πρώτη Κυριακή κάθε μήνα, όταν γίνονται εκδηλώσεις για παιδιά.",
    ]),
    ("Городская библиотека", [
        "Городская библиотека снова открылась после двух лет ремонта. В старом здании появились новая крыша, "
        "светлые читальные залы и сад, где летом можно читать на свежем воздухе.",
        "Все книги получили новые этикетки со штрихкодом, поэтому выдача стала быстрее, а продлить срок можно из дома.",
    ]),
]
body = title("Δημοτική Βιβλιοθήκη — Городская библиотека")
for name, paras in GREEK:
    body += h(name, 1) + "".join(p(t) for t in paras)
doc("greek.fodt", body, lang="el", country="GR", header="Ενημερωτικό δελτίο", pagelabel="Σελίδα")

# --- bench-100.fodt: about 100 pages of generated prose with headings.
rng = random.Random(20240607)
WORDS = ("the a of to and in that is for it with as was on be by this are from at which or an have not "
         "but they his had were all their one there has been would more when will can so if no other "
         "river valley village market bridge harbour winter summer garden library letter journey "
         "measure number record figure report season weather station railway engine factory "
         "council teacher student reader writer painter farmer doctor sailor merchant "
         "quickly slowly carefully rarely often early late quietly openly together "
         "green narrow ancient modern simple careful heavy bright distant local public private "
         "build carry follow gather improve notice observe prepare protect remember repair travel").split()


def sentence():
    n = rng.randint(8, 22)
    ws = [rng.choice(WORDS) for _ in range(n)]
    ws[0] = ws[0].capitalize()
    if rng.random() < 0.3:
        ws.insert(rng.randint(1, n - 1), str(rng.randint(2, 1999)))
    return " ".join(ws) + rng.choice([".", ".", ".", "?", ";"]).replace(";", ".")


body = title("Generated Benchmark Document")
chapter = 0
while len(body) < 350000:
    chapter += 1
    body += h("Chapter %d: %s %s" % (chapter, rng.choice(WORDS).capitalize(), rng.choice(WORDS)), 1)
    for s in range(rng.randint(2, 4)):
        body += h("Section %d.%d" % (chapter, s + 1), 2)
        for _ in range(rng.randint(3, 7)):
            body += p(" ".join(sentence() for _ in range(rng.randint(3, 8))))
doc("bench-100.fodt", body, header="Generated Benchmark Document")
