#!/usr/bin/env bash
# make-fixtures.sh regenerates the OCR fixtures of this directory from the
# text PDFs in ../pdf (whose pdftotext golden text is the ground truth the
# OCR tests score against). Needs poppler-utils (pdftoppm, pdfseparate,
# pdfunite), img2pdf and Go; on Debian:
#   apt-get install -y poppler-utils img2pdf
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pdf=../pdf

# scan.pdf: both pages of table.pdf as 1-bit 200 dpi bitmaps, rebuilt into
# an image-only PDF (no text layer), as a document scanner produces it.
pdftoppm -r 200 -mono -png "$pdf/table.pdf" "$tmp/table"
img2pdf --pagesize A4 -o scan.pdf "$tmp/table-1.png" "$tmp/table-2.png"

# scan.png and scan.tiff: the pages of two-column.pdf, 1-bit 200 dpi.
pdftoppm -f 1 -l 1 -r 200 -mono -png -singlefile "$pdf/two-column.pdf" scan
pdftoppm -f 2 -l 2 -r 200 -mono -tiff -tiffcompression lzw -singlefile "$pdf/two-column.pdf" scan
mv scan.tif scan.tiff

# photo.jpg: page 1 of two-column.pdf, 150 dpi grey, made to look like a
# phone photograph (tinted paper, uneven light, 0.6 degree skew, blur,
# noise, JPEG quality 30) by src/photo.go with a fixed seed.
pdftoppm -f 1 -l 1 -r 150 -gray -png -singlefile "$pdf/two-column.pdf" "$tmp/photo"
go run ./src/photo.go "$tmp/photo.png" photo.jpg

# mixed.pdf: page 1 of table.pdf with its text layer, then page 2 of
# scan.pdf (an image only): OCR must read just the second page.
pdfseparate -f 1 -l 1 "$pdf/table.pdf" "$tmp/text-%d.pdf"
pdfseparate -f 2 -l 2 scan.pdf "$tmp/image-%d.pdf"
# pdfunite writes a cross-reference table the PDF reader refuses ("no page
# tree"); pdftocairo rewrites it in the common form, keeping text and image.
pdfunite "$tmp/text-1.pdf" "$tmp/image-2.pdf" "$tmp/mixed.pdf"
pdftocairo -pdf "$tmp/mixed.pdf" mixed.pdf
