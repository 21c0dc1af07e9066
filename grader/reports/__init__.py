"""Reports of a grading: the terminal table and the JSON document (report.py), the HTML feedback
page (report_html.py) and the listings' figures drawn from a submission for it and for
`kata run --plot` (figures.py). Imports course, worker, checking and listings; never student code."""
