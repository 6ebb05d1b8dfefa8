"""flashprobe's report, in parts: records (loading), index (reports/data/INDEX.md), checks (record
kind -> run / skipped / failed items), summary (the first screen), perf (same-run ratios), figures,
layouts, details. reports/build_report.py puts them together; reports/README.md describes the
records, the summary contract and what reports/data keeps."""
