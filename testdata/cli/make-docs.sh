#!/usr/bin/env bash
# make-docs.sh regenerates docs/handbook.pdf and docs/faq.docx from the HTML
# sources in src/ with LibreOffice (Debian: apt-get install -y
# libreoffice-writer-nogui). docs/prices.html is written by hand.
set -euo pipefail
cd "$(dirname "$0")"
soffice --headless --infilter="HTML (StarWriter)" --convert-to pdf:writer_web_pdf_Export --outdir docs src/handbook.html >/dev/null
soffice --headless --infilter="HTML (StarWriter)" --convert-to 'docx:MS Word 2007 XML' --outdir docs src/faq.html >/dev/null
# The demo command embeds a copy (go:embed cannot reach this folder).
cp docs/handbook.pdf docs/faq.docx docs/prices.html ../../cmd/askyourdocs/demodocs/
