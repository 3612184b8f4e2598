"""`POST /verify`: check any text with the verifier, against the sources it cites or an index.

Thin on purpose (parse, check access, call `rag_system.verification.run.check`, serialise), so the
CLI's local path and this route give the same answer. The indexes a body names are resolved and
checked against the caller's grant before anything else of the body is judged, as `/retrieve` does.
Nothing is stored: a check reads the index and writes nothing.
"""

from __future__ import annotations

import logging

from common.errors import ApiError
from common.http import Response
from rag_system.api.messages import Request
from rag_system.grounding.parser import ParserUnavailable
from rag_system.verification.request import parse_verify, requested_indexes
from rag_system.verification.run import check

log = logging.getLogger(__name__)


def verify(request: Request) -> Response:
    body = request.service.names.resolve_body(request.json(), request.caller.may_read)
    request.caller.require_indexes(requested_indexes(body))  # before the text is even looked at
    parsed = parse_verify(body)
    try:
        outcome = check(parsed, request.service.engine)
    except ParserUnavailable as exc:  # an installation problem, said as one (not a bug of the request)
        raise ApiError(503, "verifier_unavailable", str(exc)) from exc
    log.debug("verify %s: %d sentences, supported=%s", request.request_id, len(outcome.sentences), outcome.supported)
    return Response(200, outcome.to_json())
