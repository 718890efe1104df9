"""`fsbm serve`: the prediction service (FastAPI).

POST /v1/traces uploads a trace and returns a job; the job's profile then feeds
POST /v1/predictions, whose answer carries the id of its HTML report.  Every body is one
of the pydantic models in models.py, the same ones `fsbm predict --json` writes.  A bad
request is a 4xx saying what was wrong; ids are numbers or hex, never paths.
"""

from __future__ import annotations

import os
import secrets
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Optional

from fastapi import Depends, FastAPI, HTTPException, Path as PathParam, Query, Request, Security, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import APIKeyHeader

from fsbm import __version__
from fsbm.api.jobs import JOB_ID, Jobs, UploadRefused, job_view, parse_recording
from fsbm.api.models import (ErrorBody, Filesystems, Health, Job, Prediction, PredictionRequest, StoredDocuments,
                             StoredProfile)
from fsbm.api.prediction_service import PredictionService, cost_table_summaries
from fsbm.host import memory_available_bytes
from fsbm.lru import LruCache
from fsbm.errors import FsbmError
from fsbm.locations import default_store_path
from fsbm.store import ResultsStore

DEFAULT_MAX_UPLOAD = 1 << 30
ANSWERS_KEPT = 4096  # predictions answered from memory when asked again (about 30 KB each)
API_KEY_HEADER = "X-API-Key"
_ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (400, 401, 404, 413)}
# The report is HTML, its errors JSON like every other route's: said so explicitly.
_HTML_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"description": "Error", "content": {"application/json": {"schema": ErrorBody.model_json_schema()}}}
    for code in (401, 404)}


DOCS_ASSETS = "/docs-assets"  # where /docs loads its scripts and styles from
DETAIL_CHARS = 1000  # an error's detail is cut here: names a client sent can be megabytes


def _short(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + f"... ({len(text)} characters)"


def serve_docs_offline(app: FastAPI) -> None:
    """/docs (Swagger UI) from files installed with fsbm, not from a CDN: the service often
    runs where the Internet is not (FastAPI's self-hosting recipe; the files come from the
    fastapi-offline package).  No /redoc: ReDoc fetches its logo from its CDN whatever it is
    told."""
    import fastapi_offline
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.staticfiles import StaticFiles

    assets = Path(fastapi_offline.__file__).parent / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=assets), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=str(app.openapi_url), title=f"{app.title} API",
                                   swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png")


def create_app(store_path: Optional[Path] = None, *, api_key: Optional[str] = None,
               max_upload_bytes: int = DEFAULT_MAX_UPLOAD) -> FastAPI:
    """The service on one store.  `api_key` (else $FSBM_API_KEY), when set, is required on /v1."""
    store_path = Path(store_path) if store_path else default_store_path()
    ResultsStore(store_path).close()  # created and migrated now, so the first request cannot race it
    api_key = api_key if api_key is not None else os.environ.get("FSBM_API_KEY") or None
    predictor = PredictionService(store_path)
    jobs = Jobs(store_path, max_upload_bytes)
    answers = LruCache(ANSWERS_KEPT)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        jobs.recover()
        predictor.start_checkpoints()
        yield
        jobs.shutdown()
        predictor.close()

    def listing(kind: str, limit: int, offset: int) -> dict[str, Any]:
        """A page of the stored documents of a kind, newest first."""
        records = predictor.store().document_records(kind, limit + 1, offset)
        return {"items": [{"id": r.id, "name": r.name, "created": r.created, "bytes": r.bytes} for r in records[:limit]],
                "next_offset": offset + limit if len(records) > limit else None}

    def stored(kind: str, document_id: int) -> tuple[str, str, dict[str, Any]]:
        """A stored document (kind, created, body), or a 404 naming what is not there."""
        found = predictor.store().document(document_id, kind)
        if found is None:
            raise HTTPException(404, f"no {kind} {document_id}")
        return found

    key_header = APIKeyHeader(name=API_KEY_HEADER, auto_error=False,
                              description="The key the server was started with (FSBM_API_KEY).")

    def authorized(given: Optional[str] = Security(key_header)) -> None:
        if not (given and secrets.compare_digest(given.encode(), str(api_key).encode())):
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, f"missing or wrong {API_KEY_HEADER} header")

    app = FastAPI(title="fsbm", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Filesystem workload characterizer and runtime predictor: upload a trace, get its "
                              "profile, predict its runtime on candidate filesystems, read the report.")
    serve_docs_offline(app)
    v1 = [Depends(authorized)] if api_key else []  # the schema declares the key only when one is required
    # Handlers that take a millisecond or two of CPU and a local SQLite read run on the event
    # loop (async def): a thread hop costs more than they do.  Rendering a report and reading
    # every cost table take longer and run in the thread pool (def).

    @app.exception_handler(FsbmError)
    async def _usage(_: Request, exc: FsbmError) -> JSONResponse:
        detail = exc.message + (f" (hint: {exc.hint})" if exc.hint else "")
        return JSONResponse({"detail": _short(detail)}, status_code=400)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        """Which field and why, without echoing what was sent: a value may be 10 MB, or a NaN
        no JSON can carry back."""
        errors = [{"loc": list(e.get("loc", ())), "msg": _short(str(e.get("msg", ""))), "type": e.get("type", "")}
                  for e in exc.errors()[:20]]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.get("/healthz", response_model=Health, tags=["service"])
    async def healthz() -> dict[str, Any]:
        store = predictor.store()
        return {"status": "ok", "version": __version__, "schema_version": store.schema_version}

    @app.post("/v1/traces", response_model=Job, status_code=202, dependencies=v1, responses=_ERRORS,
              tags=["traces"], openapi_extra={"requestBody": {"required": True, "content": {
                  "application/octet-stream": {"schema": {"type": "string", "format": "binary", "minLength": 1}}}}})
    async def upload_trace(
        request: Request,
        response: Response,
        name: str = Query(..., min_length=1, max_length=255, description="The trace's file name: its suffix "
                          "(.strace, .log, .pcap, .pcapng, .bz2, ...) helps say its format."),
        recording: Optional[str] = Query(None, max_length=4096, description="For a log made by `fsbm trace "
                                         "record`: the JSON it wrote beside it (LOG.recording.json)."),
        keep_going: bool = Query(False, description="Skip bad records instead of failing the job."),
        scope: Optional[str] = Query(None, max_length=4096, description="Only calls on files beneath this absolute "
                                     "directory are the workload."),
    ) -> dict[str, Any]:
        """Upload a strace log or an NFS capture (the request body, streamed to disk); returns the job
        that parses and characterizes it.  Poll GET /v1/jobs/{id}."""
        try:
            facts = parse_recording(recording)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        if scope is not None and not scope.startswith("/"):
            raise HTTPException(400, "scope must be an absolute directory, as the trace's paths are")
        try:
            job = await jobs.receive(request.stream(), name, facts, keep_going, scope)
        except UploadRefused as exc:
            raise HTTPException(exc.status, str(exc)) from None
        response.headers["Location"] = f"/v1/jobs/{job.id}"
        return job_view(job)

    @app.get("/v1/jobs/{job_id}", response_model=Job, dependencies=v1, responses=_ERRORS, tags=["traces"])
    async def get_job(job_id: str = PathParam(..., pattern=JOB_ID.pattern)) -> dict[str, Any]:
        """A trace job: queued, running (with progress), done (with its profile) or failed (with why)."""
        job = predictor.store().job(job_id)
        if job is None:
            raise HTTPException(404, f"no job {job_id}")
        return job_view(job)

    page = {"limit": Query(50, ge=1, le=1000, description="How many, newest first."),
            "offset": Query(0, ge=0, le=2**62, description="How many of the newest to skip (the last page's "
                            "next_offset).")}

    @app.get("/v1/profiles", response_model=StoredDocuments, dependencies=v1, responses=_ERRORS, tags=["profiles"])
    async def list_profiles(limit: int = page["limit"], offset: int = page["offset"]) -> dict[str, Any]:
        """The stored workload profiles, newest first."""
        return listing("profile", limit, offset)

    @app.get("/v1/predictions", response_model=StoredDocuments, dependencies=v1, responses=_ERRORS,
             tags=["predictions"])
    async def list_predictions(limit: int = page["limit"], offset: int = page["offset"]) -> dict[str, Any]:
        """The stored predictions, newest first (each one's report is at /v1/reports/{id})."""
        return listing("prediction", limit, offset)

    @app.get("/v1/tables", response_model=StoredDocuments, dependencies=v1, responses=_ERRORS, tags=["filesystems"])
    async def list_tables(limit: int = page["limit"], offset: int = page["offset"]) -> dict[str, Any]:
        """The stored cost tables, newest first; /v1/filesystems says what each was measured on."""
        return listing("cost_table", limit, offset)

    @app.get("/v1/profiles/{profile_id}", response_model=StoredProfile, dependencies=v1, responses=_ERRORS,
             tags=["profiles"])
    async def get_profile(profile_id: int = PathParam(..., ge=1, le=2**62)) -> dict[str, Any]:
        """A stored workload profile (Tang's table, sequentiality, sizes, reuse curve, event classes)."""
        _, created, profile = stored("profile", profile_id)
        return {"id": profile_id, "created": created, "profile": profile}

    @app.post("/v1/predictions", response_model=Prediction, status_code=201, dependencies=v1, responses=_ERRORS,
              tags=["predictions"])
    async def create_prediction(body: PredictionRequest) -> Response:
        """Predict a profile's runtime on each candidate (cost tables by name): 90% interval, where the
        time goes, ranking; the prediction is kept and its report is at /v1/reports/{id}.  The same
        question (stored profile, the same cost tables and calibration, the same options) gets the
        same stored answer."""
        store = predictor.store()
        cache_bytes = body.cache_bytes if body.cache_bytes is not None else memory_available_bytes()
        key = None
        if body.profile_id is not None:
            try:
                profile = predictor.validated_profile(store, body.profile_id)
            except LookupError as exc:
                raise HTTPException(404, str(exc)) from None
            profile_id = body.profile_id
            key = predictor.answer_key(store, profile_id, body.candidates, cache_bytes=cache_bytes,
                                       start=body.start, uncalibrated=body.uncalibrated, measured=body.measured_s,
                                       traced_on=body.traced_on)
            if (known := answers.peek(key)) is not None:
                return created(*known)
        else:
            assert body.profile is not None
            profile = body.profile
            profile_id = store.save_document("profile", profile.model_dump_json(), name=profile.source or "inline")
        doc = predictor.predict(store, profile, body.candidates, cache_bytes=cache_bytes, start=body.start,
                                uncalibrated=body.uncalibrated, profile_id=profile_id, measured=body.measured_s,
                                traced_on=body.traced_on)
        answer = predictor.save(store, doc, name=profile.source or f"profile {profile_id}")
        assert doc.id is not None
        if key is not None:
            answers.put(key, (doc.id, answer))
        return created(doc.id, answer)

    def created(prediction_id: int, answer: str) -> Response:
        return Response(answer, status_code=201, media_type="application/json",
                        headers={"Location": f"/v1/predictions/{prediction_id}"})

    @app.get("/v1/predictions/{prediction_id}", response_model=Prediction, dependencies=v1, responses=_ERRORS,
             tags=["predictions"])
    async def get_prediction(prediction_id: int = PathParam(..., ge=1, le=2**62)) -> dict[str, Any]:
        """A stored prediction."""
        return {**stored("prediction", prediction_id)[2], "id": prediction_id}

    @app.get("/v1/filesystems", response_model=Filesystems, dependencies=v1, tags=["filesystems"])
    def filesystems() -> dict[str, Any]:
        """The cost tables the store holds (newest first), each with the environment it was measured in."""
        return {"cost_tables": cost_table_summaries(predictor.store())}

    @app.get("/v1/reports/{prediction_id}", response_class=HTMLResponse, dependencies=v1, responses=_HTML_ERRORS,
             tags=["reports"])
    def report(prediction_id: int = PathParam(..., ge=1, le=2**62)) -> HTMLResponse:
        """The purchase-decision report of a prediction: self-contained HTML."""
        from fsbm.api.report import report_for_prediction

        try:
            html = report_for_prediction(predictor, predictor.store(), prediction_id)
        except LookupError as exc:
            raise HTTPException(404, str(exc)) from None
        return HTMLResponse(html)

    return app


def app_from_environment() -> FastAPI:
    """The app `fsbm serve` runs in each uvicorn worker: store from $FSBM_STORE (or the default),
    upload limit from $FSBM_MAX_UPLOAD, key from $FSBM_API_KEY."""
    limit = os.environ.get("FSBM_MAX_UPLOAD")
    return create_app(None, max_upload_bytes=int(limit) if limit else DEFAULT_MAX_UPLOAD)
