"""`fsbm fs`: scratch filesystems on loop images."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from fsbm.api import render
from fsbm.api.commands.common import (console, json_option, output_format_option, refuse_overwrite, settings_of, show,
                                      write_json)
from fsbm.errors import UsageError
from fsbm.microbench import scratch


fs_app = typer.Typer(help="Scratch filesystems on loop images: create, list, mount, destroy.", no_args_is_help=True)


@fs_app.command("create")
def fs_create(
    ctx: typer.Context,
    fstype: str = typer.Argument(..., help=f"One of: {', '.join(scratch.FILESYSTEMS)}."),
    size: str = typer.Option("2G", "--size", help="Image (or tmpfs) size, e.g. 512M, 2G."),
    mkfs_opts: str = typer.Option("", "--mkfs-opts", help="Extra mkfs options, e.g. '-b 1024'."),
    mount_opts: str = typer.Option("", "--mount-opts", help="Mount options, e.g. 'data=journal' or 'compress=zstd'."),
    name: Optional[str] = typer.Option(None, "--name", help="Name (default: from type and options)."),
) -> None:
    """Create, format and mount a scratch filesystem on a loop image fsbm owns."""
    created = scratch.create(fstype, scratch.parse_size(size), mkfs_opts=mkfs_opts.split(), mount_opts=mount_opts,
                             name=name, root=settings_of(ctx).scratch_root)
    console.print(f"created [bold]{escape(created.name)}[/] ({escape(created.candidate)}) mounted at {escape(str(created.mount_point))}")


@fs_app.command("list")
def fs_list(ctx: typer.Context, json_out: Optional[Path] = json_option("the list"),
            force: bool = typer.Option(False, "--force", help="Allow --json to replace an existing file."),
            output_format: str = output_format_option()) -> None:
    """List scratch filesystems and whether each is mounted."""
    refuse_overwrite(json_out, force)
    found = scratch.list_all(settings_of(ctx).scratch_root)
    listed = [dict(fs.to_json(), status=fs.status, candidate=fs.candidate) for fs in found]
    if json_out is not None:
        write_json(json_out, listed)
    elif not found and output_format == "table":
        console.print("no scratch filesystems (create one with `fsbm fs create ext4`)")
    else:
        show(render.scratch_table(found), listed, output_format)


@fs_app.command("mount")
def fs_mount(ctx: typer.Context, name: str) -> None:
    """Re-attach and mount a scratch filesystem (e.g. after a reboot)."""
    fs = scratch.mount(name, settings_of(ctx).scratch_root)
    console.print(f"{fs.name} mounted at {fs.mount_point}")


@fs_app.command("snapshot")
def fs_snapshot(ctx: typer.Context, name: str = typer.Argument(..., help="The scratch filesystem to copy."),
                new_name: str = typer.Argument(..., help="The copy's name.")) -> None:
    """Copy a scratch filesystem (its image, frozen while copied), e.g. to start many runs from one aged state."""
    fs = scratch.snapshot(name, new_name, settings_of(ctx).scratch_root)
    console.print(f"{fs.name} ({fs.fstype}, {escape(fs.aging_state)}) mounted at {escape(str(fs.mount_point))}")


@fs_app.command("destroy")
def fs_destroy(ctx: typer.Context, names: list[str] = typer.Argument(None, help="Names to destroy."),
               all_: bool = typer.Option(False, "--all", help="Destroy every scratch filesystem.")) -> None:
    """Unmount, detach and delete scratch filesystems."""
    root = settings_of(ctx).scratch_root
    if all_ and names:
        raise UsageError("give names or --all, not both")
    if not all_ and not names:
        raise UsageError("name a scratch filesystem to destroy, or pass --all")
    targets = [fs.name for fs in scratch.list_all(root)] if all_ else list(names)
    if not targets:
        console.print("no scratch filesystems to destroy")
    for name in targets:
        scratch.destroy(name, root)
        console.print(f"destroyed {name}")
