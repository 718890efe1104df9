"""`fsbm store` and `fsbm compare`: what the results store holds, moved and set side by side."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape

from fsbm.api import render
from fsbm.api.commands.common import (console, json_option, json_to_stdout, one_of, output_format_option,
                                      refuse_overwrite, settings_of, show, write_json)
from fsbm.errors import UsageError
from fsbm.store import DOCUMENT_KINDS, RUN_KINDS


store_app = typer.Typer(help="The results store (SQLite).", no_args_is_help=True)


@store_app.command("info")
def store_info(ctx: typer.Context) -> None:
    """Where the store is, its schema version and what it holds."""
    with settings_of(ctx).store() as store:
        console.print(f"store: {store.path}\nschema version: {store.schema_version}\njournal: {store.journal_mode}")
        for table, count in store.counts().items():
            console.print(f"{table}: {count}")


@store_app.command("runs")
def store_runs(ctx: typer.Context,
               kind: Optional[str] = typer.Option(None, "--kind",
                                                  help=f"Only runs of this kind: {', '.join(RUN_KINDS)}."),
               limit: int = typer.Option(50, "--limit", min=1),
               output_format: str = output_format_option()) -> None:
    """List recent runs."""
    one_of("--kind", kind, RUN_KINDS)
    with settings_of(ctx).store() as store:
        runs = store.runs(kind, limit)
    show(render.runs_table(runs), [dataclasses.asdict(r) for r in runs], output_format)


@store_app.command("list")
def store_list(ctx: typer.Context,
               kind: str = typer.Argument(..., help=f"What to list: {', '.join(DOCUMENT_KINDS)}."),
               limit: int = typer.Option(50, "--limit", min=1),
               json_out: Optional[Path] = json_option("the list"),
               force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
               output_format: str = output_format_option()) -> None:
    """List stored documents of one kind (newest first): tables, profiles, predictions, ..."""
    one_of("KIND", kind, tuple(DOCUMENT_KINDS))
    refuse_overwrite(json_out, force)
    with settings_of(ctx).store() as store:
        records = store.document_records(DOCUMENT_KINDS[kind], limit)
    listed = [dataclasses.asdict(r) for r in records]
    if json_out is not None:
        write_json(json_out, listed)
    else:
        show(render.documents_table(records, f"{kind} in the results store"), listed, output_format)


@store_app.command("export")
def store_export(ctx: typer.Context, document_id: int = typer.Argument(..., help="The document's id (store list)."),
                 output: Path = typer.Option(..., "-o", "--output", callback=json_to_stdout,
                                             help="The file to write, or - for stdout."),
                 force: bool = typer.Option(False, "--force", help="Replace an existing file.")) -> None:
    """Write one stored document (a cost table, a profile, ...) to a file another store can import."""
    refuse_overwrite(output, force)
    with settings_of(ctx).store() as store:
        doc = store.export_document(document_id)
    if doc is None:
        raise UsageError(f"no stored document {document_id} (`fsbm store list tables` lists cost tables)")
    write_json(output, doc)
    console.print(f"{doc['kind']} {document_id} written to {escape(str(output))}")


@store_app.command("import")
def store_import(ctx: typer.Context, source: Path = typer.Argument(..., help="A file of `fsbm store export`."),
                 name: Optional[str] = typer.Option(None, "--as", help="Store it under this name (default: its "
                                                    "name, suffixed with @ and the machine it came from).")) -> None:
    """Keep a document another store exported (a cost table measured on another machine, say)."""
    from fsbm.api.exchange import check_import

    doc = check_import(source)
    stored_name = name or doc.stored_name
    with settings_of(ctx).store() as store:
        document_id = store.save_document(doc.kind, doc.body, name=stored_name)
    console.print(f"{doc.kind} stored as {document_id}, named {escape(stored_name or '')}")


def compare(ctx: typer.Context,
            a: str = typer.Argument(..., help="A cost table or profile: a JSON file, a stored id, or a stored name."),
            b: str = typer.Argument(..., help="The other, of the same kind."),
            json_out: Optional[Path] = json_option("the comparison"),
            force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
            output_format: str = output_format_option()) -> None:
    """Two cost tables, or two workload profiles, side by side (like darshan-diff)."""
    from fsbm.api.compare import compare_profiles, compare_tables, geometric_mean_ratio, resolve
    from fsbm.predictor.cost_table import CostTable, warm_shift

    refuse_overwrite(json_out, force)
    with settings_of(ctx).store() as store:
        left, right = resolve(store, a), resolve(store, b)
    if left.kind != right.kind:
        raise UsageError(f"{a} is a {left.kind} and {b} a {right.kind}; compare two of the same kind")
    if left.kind == "cost_table":
        tables = CostTable.from_json(left.body, left.label), CostTable.from_json(right.body, right.label)
        rows = compare_tables(*tables)
        overall, warm = geometric_mean_ratio(rows), warm_shift(*tables)
        shown = render.cost_table_comparison(rows, left.label, right.label, overall, warm)
        result: dict[str, Any] = {"kind": "cost_table_comparison", "a": left.label, "b": right.label,
                                  "b_over_a_geometric_mean": overall,
                                  "warm_cases": dataclasses.asdict(warm) if warm else None,
                                  "cases": [dict(dataclasses.asdict(r), b_over_a=r.ratio) for r in rows]}
    else:
        statistics = compare_profiles(left.body, right.body)
        shown = render.profile_comparison(statistics, left.body, right.body, left.label, right.label)
        result = {"kind": "profile_comparison", "a": left.label, "b": right.label,
                  "statistics": [dataclasses.asdict(s) for s in statistics]}
    show(shown, result, output_format)
    if json_out is not None:
        write_json(json_out, result)
