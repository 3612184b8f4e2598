"""The new formats over real HTTP: an index job over them, a renamed file failing alone, results with places."""

from __future__ import annotations

import os

from testkit import formats as fx
from tests.integration.api_support import api_settings, build, running_api


def test_index_job_over_new_formats_reports_the_renamed_file_and_finds_the_message(tmp_path, embedder):  # type: ignore[no-untyped-def]
    with running_api(api_settings(tmp_path / "data"), embedder) as api:
        folder = api.uploads / "formats"
        folder.mkdir(parents=True)
        fx.make_mbox(folder / "team.mbox", ("agenda.txt", fx.MAIL_ATTACHMENT.encode(), "text/plain"))
        fx.make_rtf(folder / "ferry.rtf")
        fx.make_ods(folder / "sales.ods")
        fx.make_odp(folder / "deck.odp").rename(folder / "deck.odt")  # a presentation under a text's name
        job, events = build(api, "formats", [str(folder)])
        assert job["state"] == "done" and job["error"] is None
        files = {os.path.basename(f["path"]): f for f in job["files"]}
        assert files["deck.odt"]["state"] == "failed"
        assert files["deck.odt"]["error"] == ("not a valid ODT: the content is an OpenDocument presentation; "
                                              "rename it to .odp")
        assert {name: f["state"] for name, f in files.items() if name != "deck.odt"} == {
            "team.mbox": "done", "ferry.rtf": "done", "sales.ods": "done"}
        assert files["team.mbox"]["pages"] == 2  # one page per message

        status, _, found = api.call("POST", "/retrieve", {"query": "keynote on tidal energy", "index": "formats",
                                                           "retrieval_k": 3})
        assert status == 200
        top = found["results"][0]
        assert top["document_name"] == "team.mbox" and top["page_start"] == 2
        assert top["location"]["section"] == f"Message 2: {fx.MAIL_MESSAGES[1][1]} > Attachment: agenda.txt"

        status, _, found = api.call("POST", "/retrieve", {"query": "West Q3 revenue", "index": "formats",
                                                           "retrieval_k": 5})
        rows = [r for r in found["results"] if r["document_name"] == "sales.ods"]
        assert status == 200 and rows and rows[0]["place"].startswith("Sheet Sales, rows ")
