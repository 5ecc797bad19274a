"""CLI: `benchsmith annotate` (serve the review app, load rationales, judge scores and responses
for verdicts, assign items), `benchsmith verdicts` (people's verdicts: agreement figures, applying
them to runs) and `benchsmith users` (add, list, deactivate and unlock users)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from annotator.review import auth, queues, scoring
from annotator.review.tables import ensure_tables
from curation.cli_kit import JsonOption, WorkspaceOption, out, print_json, workspace_from
from curation.core.errors import BenchsmithError
from curation.core.workspace import Workspace

annotate_app = typer.Typer(help="The review app in a browser: queues, editors, expert scoring, agreement.")
users_app = typer.Typer(help="Users of the review app and their roles.", no_args_is_help=True)
VERDICTS_HELP = "People's verdicts on model responses: agreement of checkers and judges with them; applying them to runs."
verdicts_app = typer.Typer(help=VERDICTS_HELP, no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(annotate_app, name="annotate")
    app.add_typer(users_app, name="users")
    app.add_typer(verdicts_app, name="verdicts")


def _workspace(path: Path | None) -> Workspace:
    workspace = workspace_from(path)
    ensure_tables(workspace.store.engine)
    return workspace


@annotate_app.callback(invoke_without_command=True)
def annotate_command(
    ctx: typer.Context,
    workspace: WorkspaceOption = None,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on (0: a free one, printed)")] = 7860,
    order: Annotated[str, typer.Option(help="the item queues' order when a page opens: id, or confidence (lowest "
                                            "extraction confidence first; items without one last)")] = "id",
    session_idle_minutes: Annotated[float | None, typer.Option(
        help="end a session after this many minutes without a request (default: [annotator] "
             "session_idle_minutes in benchsmith.toml, else 720)")] = None,
    reserve_minutes: Annotated[float | None, typer.Option(
        help="how long an item a reviewer edits stays reserved without another edit (released on save, "
             "decision, skip, leaving it or logout; default: [annotator] reservation_idle_minutes, else 5)")] = None,
) -> None:
    """Serve the annotator. Login is required once users exist; with none, only 127.0.0.1 is served."""
    if ctx.invoked_subcommand is not None:
        return
    if order not in queues.ORDERS:
        raise BenchsmithError(f"--order {order!r}: choose one of {', '.join(queues.ORDERS)}")
    from annotator.web.server import serve

    if reserve_minutes is not None and reserve_minutes <= 0:
        raise BenchsmithError(f"--reserve-minutes {reserve_minutes}: give a positive number of minutes")
    serve(_workspace(workspace), host, port, order, session_idle_minutes,
          None if reserve_minutes is None else reserve_minutes * 60)


def _report(report: scoring.LoadReport, what: str) -> None:
    out.print(f"{what}: {report.added} added, {report.unchanged} already there or replaced, "
              f"{len(report.errors or [])} failed", highlight=False)
    for error in report.errors or []:
        typer.echo(f"  {error}", err=True)
    if report.errors:
        raise typer.Exit(1)


@annotate_app.command("load-rationales")
def load_rationales_command(
    run: Annotated[str, typer.Argument(help="a reasoning run (id under runs/ or its folder)")],
    workspace: WorkspaceOption = None,
) -> None:
    """Add a reasoning run's rationales as blind scoring tasks for experts (stale answers are left out)."""
    from evaluation.metrics import load_run
    from evaluation.runlog import find_run

    ws = _workspace(workspace)
    data = load_run(find_run(ws.runs_dir, run), ws)
    for note in data.notes:
        typer.echo(note, err=True)
    _report(scoring.load_rationales(ws.store.engine, scoring.rationale_tasks(data), set(ws.store.ids())), "scoring tasks")


@annotate_app.command("load-judge")
def load_judge_command(
    source: Annotated[str, typer.Argument(help="a run judged by `benchsmith judge` (all its judge logs) or one "
                                               "judge log (runs/RUN/judge-JUDGE.jsonl)")],
    workspace: WorkspaceOption = None,
) -> None:
    """Import the LLM judge's verdicts to compare with the experts' (stats tab); stale verdicts are left out."""
    from evaluation.judge import current_verdicts

    ws = _workspace(workspace)
    verdicts, notes = current_verdicts(ws, Path(source) if Path(source).is_file() else source)
    for note in notes:
        typer.echo(note, err=True)
    _report(scoring.load_judge(ws.store.engine, verdicts), "judge scores")


@annotate_app.command("load-verdicts")
def load_verdicts_command(
    runs: Annotated[list[str], typer.Argument(help="run ids (under runs/) or run folders")],
    audit: Annotated[int | None, typer.Option(min=0, help="checker-decided responses sampled per run for an audit "
                                                          "(default: [verdicts] audit in benchsmith.toml, else 20)")] = None,
    seed: Annotated[int, typer.Option(help="the audit sample's seed")] = 0,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Put runs' responses in the Verdicts queue: checker–judge disagreements first, then the responses a
    judge (or no one) decided, then an audit sample of the checker-decided ones. Stale records are left out."""
    from annotator.review.verdicts import TIER_NAMES, load_verdict_tasks
    from evaluation.human_verdicts import verdict_settings
    from evaluation.item_facets import FacetReader
    from evaluation.metrics import load_run
    from evaluation.runlog import find_run

    ws = _workspace(workspace)
    size = verdict_settings(ws.root).audit if audit is None else audit
    reader = FacetReader()
    reports = []
    for name in runs:
        data = load_run(find_run(ws.runs_dir, name), ws, reader)
        for note in data.notes:
            typer.echo(note, err=True)
        reports.append(load_verdict_tasks(ws.store.engine, data, audit=size, seed=seed))
    if as_json:
        print_json({"audit": size, "seed": seed, "runs": [report.as_dict() for report in reports]})
        return
    for report in reports:
        added = ", ".join(f"{TIER_NAMES[tier]} {report.added[tier]}" for tier in sorted(TIER_NAMES))
        out.print(f"{report.run_id}: added {added} (audit {min(size, report.audit_pool)} of {report.audit_pool}); "
                  f"{report.already} loaded before, {report.decided} decided by people already, "
                  f"{report.no_response} without a response", highlight=False)


@annotate_app.command("stats")
def stats_command(workspace: WorkspaceOption = None, as_json: JsonOption = False) -> None:
    """Expert and judge scores per scoring task, and their agreement (Krippendorff α, ICC); the
    reviewers' agreement on overlapped items' decisions and Korea flags (Cohen's/Fleiss' κ, α nominal)."""
    import math
    from dataclasses import asdict

    from annotator.review import stats

    engine = _workspace(workspace).store.engine
    table = scoring.score_table(engine)
    def plain(row: Any) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(row).items()}

    agreement = [plain(row) for row in stats.agreement_rows(engine)]
    decisions = [plain(row) for row in stats.decision_agreement_rows(engine)]
    if as_json:
        print_json({"tasks": table, "agreement": agreement, "decision_agreement": decisions})
        return
    for row in table:
        experts = "; ".join(f"{name} {sum(values.values())}" for name, values in sorted(row["experts"].items()))
        judge = sum(row["judge"].values()) if row["judge"] else "missing"
        out.print(f"{row['item_id']} · {row['model']}: judge {judge}; experts {experts or 'none yet'}", highlight=False)
    for row in agreement:
        out.print(f"{row['raters']} · {row['axis']}: α(interval) {row['alpha_interval']}, ICC(2,1) {row['icc_2_1']}, "
                  f"{row['units']} tasks", highlight=False)
    for row in decisions:
        figure = {key: "—" if row[key] is None else f"{row[key]:.3f}" for key in ("kappa", "alpha_nominal")}
        out.print(f"reviewers · {row['what']}: {row['kappa_kind']} κ {figure['kappa']}, α(nominal) {figure['alpha_nominal']}, "
                  f"{row['items']} items, {row['pairs']} pairs, {row['raters']} raters", highlight=False)


@annotate_app.command("export-scores")
def export_scores_command(
    out_file: Annotated[Path, typer.Option("--out", "-o", help="JSONL file to write")],
    workspace: WorkspaceOption = None,
) -> None:
    """Write the experts' scores as JSONL {"item_id","model","expert",axes…} for `report --paper --expert-scores`."""
    import json

    from annotator.review.stats import score_sheet

    sheet = score_sheet(_workspace(workspace).store.engine)
    lines = [json.dumps({"item_id": item, "model": model, "expert": expert, **values}, ensure_ascii=False)
             for expert, units in sorted(sheet.experts.items()) for (item, model), values in sorted(units.items())]
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out.print(f"{len(lines)} expert scores → {out_file}", highlight=False)


@annotate_app.command("assign")
def assign_command(
    queue: Annotated[str, typer.Option(help=f"one of {', '.join(queues.ITEM_QUEUES)}, suspects, verdicts")],
    users: Annotated[str, typer.Option(help="comma-separated user names")],
    overlap: Annotated[int, typer.Option(help="how many people see each item")] = 1,
    status: Annotated[list[str], typer.Option(help="only items with this status (repeatable)")] = [],  # noqa: B006
    workspace: WorkspaceOption = None,
) -> None:
    """Assign the queue's items to users so that each item is seen by OVERLAP of them."""
    ws = _workspace(workspace)
    names = [name.strip() for name in users.split(",") if name.strip()]
    known = {user.name for user in auth.list_users(ws.store.engine)}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise BenchsmithError(f"unknown users: {', '.join(unknown)} (add them with `benchsmith users add`)")
    ids = None
    if queue == "suspects":  # its open items come from `analyze suspects`, not from a filter on the items table
        if status:
            raise BenchsmithError("--status does not apply to the suspects queue (its open items are assigned)")
        from annotator.review.suspects import SuspectDesk

        ids = SuspectDesk(ws.store, ws.root).membership().ids
    elif queue == "verdicts":  # the responses loaded by `annotate load-verdicts` and not settled yet
        if status:
            raise BenchsmithError("--status does not apply to the verdicts queue (its open responses are assigned)")
        from annotator.review.verdicts import task_keys

        ids = task_keys(ws.store.engine)
    report = queues.assign(ws.store.engine, queue, names, overlap, queues.Filters(status=tuple(status)), item_ids=ids)
    out.print(f"{queue}: {report.items} items, {report.added} new assignments "
              + ", ".join(f"{user} +{n}" for user, n in sorted(report.per_user.items())), highlight=False)


@annotate_app.command("suspects")
def suspects_command(workspace: WorkspaceOption = None, as_json: JsonOption = False) -> None:
    """The Suspects queue as the app shows it: open suspects, highest score first, and how many are
    stale, decided on these answers, rejected or excluded."""
    from annotator.review.suspects import SuspectDesk

    ws = _workspace(workspace)
    found = SuspectDesk(ws.store, ws.root).membership()
    if as_json:
        print_json({"result": str(found.loaded.path) if found.loaded else None,
                    "fingerprint": found.loaded.fingerprint if found.loaded else None,
                    "open": [{"item_id": s.item_id, "score": s.score, "key": s.key,
                              "consensus_option": s.consensus_option} for s in found.open],
                    "stale": found.stale, "decided": found.decided, "closed": found.closed, "missing": found.missing})
        return
    out.print(found.summary(), highlight=False)
    for suspect in found.open:
        out.print(f"{suspect.item_id}\t{suspect.score:.3f}\tkey {suspect.key or '—'}\tconsensus "
                  f"{suspect.consensus_option or '—'}", highlight=False)


@users_app.command("add")
def users_add_command(
    name: Annotated[str, typer.Argument(help="login name")],
    role: Annotated[str, typer.Option(help=" | ".join(auth.ROLES))],
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="read the password from stdin")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="change an existing user's role and password")] = False,
    workspace: WorkspaceOption = None,
) -> None:
    """Add a user (the password is stored as a salted scrypt hash)."""
    if role not in auth.ROLES:
        raise BenchsmithError(f"--role {role!r}: choose one of {', '.join(auth.ROLES)}")
    ws = _workspace(workspace)
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt(f"password for {name}", hide_input=True, confirmation_prompt=True)
    user = auth.add_user(ws.store.engine, name, role, password, replace=replace)
    out.print(f"user {user.name} ({user.role}) {'updated' if replace else 'added'}", highlight=False)


@users_app.command("list")
def users_list_command(workspace: WorkspaceOption = None) -> None:
    """List users, roles and who is deactivated."""
    engine = _workspace(workspace).store.engine
    for user in auth.list_users(engine):
        typer.echo(f"{user.name}\t{user.role}" + ("" if auth.is_active(engine, user.name) else "\tdeactivated"))


@users_app.command("deactivate")
def users_deactivate_command(name: Annotated[str, typer.Argument(help="login name")],
                             workspace: WorkspaceOption = None) -> None:
    """Refuse a user's logins and end their sessions (their work stays; `users activate` undoes it)."""
    auth.set_active(_workspace(workspace).store.engine, name, False)
    out.print(f"user {name} deactivated: sessions ended, login refused", highlight=False)


@users_app.command("activate")
def users_activate_command(name: Annotated[str, typer.Argument(help="login name")],
                           workspace: WorkspaceOption = None) -> None:
    """Let a deactivated user log in again."""
    auth.set_active(_workspace(workspace).store.engine, name, True)
    out.print(f"user {name} activated", highlight=False)


@users_app.command("unlock")
def users_unlock_command(
    name: Annotated[str | None, typer.Argument(help="login name whose failed logins to forget")] = None,
    client: Annotated[str | None, typer.Option(help="also (or only) forget the failed logins from this address")] = None,
    workspace: WorkspaceOption = None,
) -> None:
    """Clear the login backoff of a name (and of the clients that failed on it) or of a client address."""
    from annotator.web.throttle import unlock

    if name is None and client is None:
        raise BenchsmithError("name a user, --client ADDRESS, or both")
    forgotten = unlock(_workspace(workspace).store.engine, name, client)
    what = " and ".join(part for part in (name and f"user {name}", client and f"client {client}") if part)
    out.print(f"{what}: {forgotten} failed logins forgotten", highlight=False)


@verdicts_app.command("stats")
def verdicts_stats_command(workspace: WorkspaceOption = None, as_json: JsonOption = False) -> None:
    """Per answer format and decider (each checker, the judge, another tool's verdict): agreement with
    people's verdicts, Cohen's κ with n and a 95% interval, false accepts and false rejects; the share of
    the loaded runs' responses the judge decided; the reviewers' own agreement on overlapped responses."""
    from annotator.review import stats
    from annotator.review.verdicts import VerdictDesk
    from evaluation.verdict_agreement import verdict_agreement

    ws = _workspace(workspace)
    desk = VerdictDesk(ws)
    figures = verdict_agreement(desk.settled_verdicts(), desk.responses_per_format())
    reviewers = [row for row in stats.decision_agreement_rows(ws.store.engine) if row.what == stats.VERDICTS_WHAT]
    if as_json:
        from dataclasses import asdict

        print_json(figures.as_dict() | {"reviewers": [asdict(row) for row in reviewers]})
        return
    out.print(f"{figures.verdicts} responses decided by people", highlight=False)
    for row in figures.deciders:
        kappa = "—" if row.kappa is None else f"{row.kappa:.3f}"
        ci = "" if row.kappa_ci is None else f" [{row.kappa_ci[0]:.3f}, {row.kappa_ci[1]:.3f}]"
        agreement = "—" if row.agreement is None else f"{100 * row.agreement:.1f}%"
        out.print(f"{row.answer_format} · {row.decider}: n {row.n}, agreement {agreement}, κ {kappa}{ci}, "
                  f"false accepts {row.false_accepts}, false rejects {row.false_rejects}", highlight=False)
    for share in figures.formats:
        judged = "—" if share.share_judged is None else f"{100 * share.share_judged:.1f}%"
        out.print(f"{share.answer_format}: {share.responses} responses in the loaded runs, {share.judged} decided "
                  f"by the judge ({judged}), {share.verdicts} by people", highlight=False)
    for rated in reviewers:
        out.print(f"reviewers: {rated.kappa_kind} κ {rated.kappa:.3f}, α(nominal) {rated.alpha_nominal:.3f}, "
                  f"{rated.items} responses, {rated.raters} reviewers", highlight=False)


@verdicts_app.command("apply")
def verdicts_apply_command(
    run: Annotated[str | None, typer.Argument(help="only this run's verdicts (default: every run's)")] = None,
    workspace: WorkspaceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Apply the settled verdicts to their runs again (the app applies each as it is settled): a verdict
    whose record lost it gets it back; one whose response changed since is kept for that response only."""
    from annotator.review.verdicts import VerdictDesk

    ws = _workspace(workspace)
    counts = VerdictDesk(ws).apply_all(run)
    if as_json:
        print_json({"run": run, "verdicts": dict(sorted(counts.items()))})
        return
    out.print("verdicts: " + (", ".join(f"{what} {n}" for what, n in sorted(counts.items())) or "none settled"),
              highlight=False)
