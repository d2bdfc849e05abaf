"""The harness prints the portal's verdicts under each run URL."""

from types import SimpleNamespace


def test_verdicts_are_printed_after_the_run_url(sb, capsys):
    body = {"runs": [{"id": 11, "url": "/runs/11/"}], "warnings": [], "verdicts": [
        {"run": 11, "metric": "time_ms", "against": "2.6.22", "change": 2.68,
         "p_value": 0.0079, "regression": True},
        {"run": 11, "metric": "time_ms", "against": "2.6.24", "change": 1.004,
         "p_value": None, "regression": False},
        {"run": 12, "metric": "time_ms", "against": "2.6.22", "change": 9, "p_value": 0.1,
         "regression": True},
        {"run": 11, "metric": "broken", "change": "x"},
    ]}
    sb.report_accepted("http://portal", SimpleNamespace(body=body))
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["http://portal/runs/11/",
                     "  time_ms +168% vs 2.6.22 (p=0.0079): regression",
                     "  time_ms +0% vs 2.6.24 (p=n/a, needs repeats): no regression"]


def test_an_answer_without_verdicts_prints_only_urls(sb, capsys):
    sb.report_accepted("http://portal", SimpleNamespace(body={"runs": [{"id": 1,
                                                                        "url": "/runs/1/"}]}))
    assert capsys.readouterr().out == "http://portal/runs/1/\n"
