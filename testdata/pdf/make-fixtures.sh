#!/usr/bin/env bash
# make-fixtures.sh regenerates the PDF fixtures of this directory and their
# pdftotext golden text. Needs python3, LibreOffice (soffice), poppler-utils,
# qpdf, ghostscript and img2pdf; on Debian:
#   apt-get install -y python3 libreoffice-writer-nogui poppler-utils qpdf ghostscript img2pdf fonts-dejavu
# After running it, refresh the expected paragraphs with
#   go test -run TestPDFGolden -update-pdf .
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd src && python3 gen.py --out "$tmp")
soffice --headless --convert-to pdf --outdir . "$tmp"/table.fodt "$tmp"/two-column.fodt "$tmp"/greek.fodt "$tmp"/bench-100.fodt >/dev/null

# A different producer: Ghostscript (ps2pdf) with the standard Times fonts,
# not embedded and without /Widths, words placed one by one.
ps2pdf src/harbour.ps ghostscript.pdf

# Encrypted: RC4 128-bit with a user password ("secret"), so a reader needs it.
qpdf --allow-weak-crypto --encrypt secret owner 128 --use-aes=n -- table.pdf encrypted.pdf
# Encrypted with AES-256 (revision 6) and a user password, as current tools write it.
qpdf --encrypt secret owner 256 -- greek.pdf encrypted-aes256.pdf
# Encrypted with an empty user password (only an owner password): readable without one.
qpdf --allow-weak-crypto --encrypt "" owner 128 --use-aes=n -- two-column.pdf owner-only.pdf
# Truncated: the first 60% of two-column.pdf, as an interrupted download leaves it.
head -c $(( $(stat -c %s two-column.pdf) * 6 / 10 )) two-column.pdf > truncated.pdf
# Image-only: page 1 of greek.pdf rendered to a 1-bit bitmap, as a scanner produces it.
pdftoppm -f 1 -l 1 -r 100 -mono -png greek.pdf "$tmp"/scan
img2pdf --pagesize A4 -o image-only.pdf "$tmp"/scan-1.png

for f in table two-column greek bench-100 owner-only ghostscript; do
  pdftotext -enc UTF-8 "$f.pdf" "$f.pdftotext.txt"
done
