#!/usr/bin/env python3
"""ingest_xlsx_fixtures.py DIR: writes the XLSX files test_ingest_xlsx.c
reads into DIR: workbooks written by openpyxl (numbers, booleans, formulas,
sparse cells, 250 columns, a first sheet that is not sheet1.xml, a chart
sheet first) and packages made by hand with zipfile (shared strings with
rich text and phonetic runs, inline strings, every cell type, cells and rows
without references, prefixed and strict namespaces, a workbook elsewhere
than xl/), and bad ones (a zip bomb, DOCTYPEs with entities, an encrypted
entry, an OLE file, not a zip, missing parts, a shared string out of range,
deep nesting, malformed XML, a row past 1048576, a huge attribute).
Exits 77 when openpyxl is missing."""
import io
import os
import struct
import sys
import zipfile

try:
    import openpyxl
except ImportError:
    sys.exit(77)

OUT = sys.argv[1]
MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"


def path(name):
    return os.path.join(OUT, name)


def root_rels(workbook="xl/workbook.xml"):
    return ('<Relationships xmlns="%s"><Relationship Id="rId1" Type="%s/'
            'officeDocument" Target="%s"/></Relationships>'
            % (PKG, REL, workbook))


def workbook(sheets=(("Data", "rId1"),), ns=MAIN):
    items = "".join('<sheet name="%s" sheetId="%d" r:id="%s"/>'
                    % (n, i + 1, r) for i, (n, r) in enumerate(sheets))
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<workbook xmlns="%s" xmlns:r="%s"><sheets>%s</sheets></workbook>'
            % (ns, REL, items))


def book_rels(targets=(("rId1", "worksheet", "worksheets/sheet1.xml"),)):
    items = "".join('<Relationship Id="%s" Type="%s/%s" Target="%s"/>'
                    % (i, REL, t, p) for i, t, p in targets)
    return '<Relationships xmlns="%s">%s</Relationships>' % (PKG, items)


def sheet(rows, ns=MAIN, head=""):
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>%s'
            '<worksheet xmlns="%s"><sheetData>%s</sheetData></worksheet>'
            % (head, ns, rows))


def package(name, parts, method=zipfile.ZIP_DEFLATED):
    """parts: {name: text or bytes}; the usual ones added unless given."""
    base = {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats'
        '.org/package/2006/content-types"/>',
        "_rels/.rels": root_rels(),
        "xl/workbook.xml": workbook(),
        "xl/_rels/workbook.xml.rels": book_rels(),
    }
    base.update(parts)
    with zipfile.ZipFile(path(name), "w", method) as z:
        for n, data in base.items():
            if data is None:
                continue
            if isinstance(data, str):
                data = data.encode("utf-8")
            z.writestr(n, data)


def inline(ref, text):
    return '<c r="%s" t="inlineStr"><is><t>%s</t></is></c>' % (ref, text)


# Written by openpyxl

def basic():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["email", "n", "flag"])
    ws.append(["a@b.c", 42, True])
    ws.append(["x@y.z", 1.5, False])
    ws["A5"] = "=1+2"           # no cached value: an empty row
    ws["A6"] = 1234567890123
    ws["B6"] = -7
    ws["C6"] = 0.1
    ws["C7"] = "near"
    ws.cell(row=7, column=250, value="far")
    for c in range(1, 251):
        ws.cell(row=8, column=c, value="c%d" % c)
    wb.save(path("basic.xlsx"))


def order():
    """The first sheet in the workbook is xl/worksheets/sheet2.xml."""
    wb = openpyxl.Workbook()
    wb.active.title = "Other"
    wb.active["A1"] = "other sheet"
    wb.create_sheet("Data")["A1"] = "data sheet"
    buf = io.BytesIO()
    wb.save(buf)
    src = zipfile.ZipFile(buf)
    with zipfile.ZipFile(path("order.xlsx"), "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "xl/workbook.xml":
                text = data.decode()
                a = text.index("<sheet ")
                mid = text.index("<sheet ", a + 1)
                end = text.index("</sheets>")
                text = text[:a] + text[mid:end] + text[a:mid] + text[end:]
                data = text.encode()
            z.writestr(info, data)


def chart():
    wb = openpyxl.Workbook()
    wb.create_chartsheet("Chart", 0)
    wb["Sheet"]["A1"] = "after the chart"
    wb.save(path("chart.xlsx"))


# Made by hand

SST_RICH = (
    '<sst xmlns="%s" count="3" uniqueCount="3">'
    '<si><t>plain@x.y</t></si>'
    '<si><r><rPr><b/></rPr><t>ri</t></r><r><t xml:space="preserve">ch@x.y'
    '</t></r><rPh sb="0" eb="1"><t>furigana</t></rPh>'
    '<phoneticPr fontId="1"/></si>'
    '<si><t>\u6771\u4eac</t><rPh sb="0" eb="2"><t>\u30c8\u30a6\u30ad\u30e7'
    '\u30a6</t></rPh></si>'
    '<si><t/></si>'
    '</sst>' % MAIN)

ROWS_RICH = (
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c>'
    '<c r="C1" t="s"><v>2</v></c></row>'
    '<row r="2"><c r="A2" t="inlineStr"><is><r><t>in</t></r><r><t>line</t>'
    '</r><rPh><t>x</t></rPh></is></c>'
    '<c r="B2" t="str"><f>A1</f><v>cached</v></c>'
    '<c r="C2" t="e"><f>1/0</f><v>#DIV/0!</v></c>'
    '<c r="D2" t="b"><v>1</v></c><c r="E2" t="n"><v>3.25</v></c>'
    '<c r="F2"><v>7</v></c><c r="G2" t="d"><v>2024-01-02T00:00:00</v></c>'
    '<c r="H2" t="b"><v>0</v></c></row>'
    '<row><c t="inlineStr"><is><t>p</t></is></c><c><v>1</v></c></row>'
    '<row><c r="C4"><v>9</v></c></row>'
    '<row r="7"><c r="A7" s="1"/><c r="B7" t="s"><v>0</v></c>'
    '<c r="C7" s="2"/><c r="D7" t="s"><v>3</v></c></row>'
    '<row r="8"><c r="A8" s="1"/></row>'
    '<row r="9" spans="1:3"><c r="B9"><v>2</v></c><c r="A9"><v>1</v></c>'
    '<c r="B9"><v>3</v></c></row>')


def hand():
    rels = book_rels((("rId1", "worksheet", "worksheets/sheet1.xml"),
                      ("rId2", "sharedStrings", "sharedStrings.xml")))
    package("rich.xlsx", {
        "xl/_rels/workbook.xml.rels": rels,
        "xl/sharedStrings.xml": SST_RICH,
        "xl/worksheets/sheet1.xml": sheet(ROWS_RICH)})
    # a table whose strings are all empty (its text is nothing at all)
    package("sstempty.xlsx", {
        "xl/_rels/workbook.xml.rels": rels,
        "xl/sharedStrings.xml": '<sst xmlns="%s"><si><t/></si><si/></sst>'
        % MAIN,
        "xl/worksheets/sheet1.xml": sheet(
            '<row r="1"><c r="A1" t="s"><v>1</v></c>%s</row>'
            % inline("B1", "x"))})
    # a row in a row and a cell in a cell (well-formed, not valid): ignored
    package("nested.xlsx", {"xl/worksheets/sheet1.xml": sheet(
        '<row r="1">%s<c r="B1" t="inlineStr"><is><t>b<row r="5"><c r="A5">'
        '<v>9</v></c></row>c</t></is><c r="C1"><v>8</v></c></c>'
        '<c r="D1"><v>d</v></c></row><row r="2">%s</row>'
        % (inline("A1", "a"), inline("A2", "e")))})
    # no relationship to the shared strings: found where Excel puts them
    package("sstplace.xlsx", {
        "xl/sharedStrings.xml": SST_RICH,
        "xl/worksheets/sheet1.xml": sheet(
            '<row r="1"><c r="A1" t="s"><v>1</v></c></row>')})
    # prefixed elements, strict namespaces, the workbook in wb/, targets
    # with ../ and absolute ones, a stored (not deflated) archive
    x = ('<x:worksheet xmlns:x="%s"><x:sheetData><x:row r="2"><x:c r="B2" '
         't="s"><x:v>0</x:v></x:c></x:row></x:sheetData></x:worksheet>'
         % STRICT)
    sst = ('<x:sst xmlns:x="%s"><x:si><x:t>strict@x.y</x:t></x:si></x:sst>'
           % STRICT)
    package("strict.xlsx", {
        "_rels/.rels": root_rels("/wb/book.xml"),
        "xl/workbook.xml": None, "xl/_rels/workbook.xml.rels": None,
        "wb/book.xml": workbook((("One", "rId7"),), STRICT),
        "wb/_rels/book.xml.rels": book_rels((
            ("rId7", "worksheet", "../sheets/./one.xml"),
            ("rId8", "sharedStrings", "/wb/strings.xml"))),
        "sheets/one.xml": x, "wb/strings.xml": sst},
        zipfile.ZIP_STORED)
    # no package relationships: xl/workbook.xml
    package("norels.xlsx", {
        "_rels/.rels": None,
        "xl/worksheets/sheet1.xml": sheet(
            '<row r="1">%s</row>' % inline("A1", "found"))})
    # UTF-16 XML with an encoding declaration
    package("utf16.xlsx", {
        "xl/worksheets/sheet1.xml": sheet(
            '<row r="1">%s</row>' % inline("A1", "\u00e9t\u00e9"))
        .replace('encoding="UTF-8"', 'encoding="UTF-16"')
        .encode("utf-16")})
    # a long attribute (200 KB), fine under the default caps
    package("longattr.xlsx", {"xl/worksheets/sheet1.xml": sheet(
        '<row r="1" x="%s">%s</row>' % ("".join(
            chr(97 + (i * 7919) % 26) for i in range(200000)),
            inline("A1", "ok")))})


def bad():
    # a zip bomb: 64 MiB of white space after a first row
    package("bomb.xlsx", {"xl/worksheets/sheet1.xml": sheet(
        '<row r="1">%s</row>%s' % (inline("A1", "a"), " " * (64 << 20)))})
    lol = ('<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;'
           '&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>')
    package("doctype.xlsx", {"xl/worksheets/sheet1.xml": sheet(
        '<row r="1">%s</row>' % inline("A1", "&lol2;"), head=lol)})
    package("doctypesst.xlsx", {
        "xl/sharedStrings.xml": '<!DOCTYPE sst SYSTEM "file:///etc/passwd">'
        '<sst xmlns="%s"><si><t>x</t></si></sst>' % MAIN,
        "xl/_rels/workbook.xml.rels": book_rels((
            ("rId1", "worksheet", "worksheets/sheet1.xml"),
            ("rId2", "sharedStrings", "sharedStrings.xml"))),
        "xl/worksheets/sheet1.xml": sheet("")})
    # the encryption flag set on every entry
    package("encrypted.xlsx", {"xl/worksheets/sheet1.xml": sheet("")})
    data = bytearray(open(path("encrypted.xlsx"), "rb").read())
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = data.find(sig)
        while i >= 0:
            flags = struct.unpack_from("<H", data, i + off)[0]
            struct.pack_into("<H", data, i + off, flags | 1)
            i = data.find(sig, i + 4)
    open(path("encrypted.xlsx"), "wb").write(bytes(data))
    open(path("ole.xlsx"), "wb").write(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    open(path("notzip.xlsx"), "wb").write(b"email\na@b.c\n")
    with zipfile.ZipFile(path("nobook.xlsx"), "w") as z:
        z.writestr("readme.txt", "hello")
    package("nosheet.xlsx", {"xl/workbook.xml": workbook(())})
    package("nopart.xlsx", {"xl/_rels/workbook.xml.rels": book_rels((
        ("rId1", "worksheet", "worksheets/sheet9.xml"),))})
    package("sstrange.xlsx", {"xl/worksheets/sheet1.xml": sheet(
        '<row r="1">%s</row><row r="2"><c r="B2" t="s"><v>5</v></c></row>'
        % inline("A1", "a"))})
    package("deep.xlsx", {"xl/worksheets/sheet1.xml": sheet(
        "<x>" * 100 + "</x>" * 100)})
    package("malformed.xlsx", {"xl/worksheets/sheet1.xml":
                               "<worksheet><sheetData><row></sheetData>"})
    package("rowmax.xlsx", {"xl/worksheets/sheet1.xml": sheet(
        '<row r="1">%s</row><row r="1048577"/>' % inline("A1", "z"))})
    package("lastrow.xlsx", {"xl/worksheets/sheet1.xml": sheet(
        '<row r="1048576">%s</row>' % inline("A1", "z"))})


basic()
order()
chart()
hand()
bad()
