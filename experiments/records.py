"""Records appended to a CSV file as they finish, each flushed block covered by a CRC-32
(:class:`RecordLog`), and read back for ``--resume`` trusting nothing (:func:`recover_records`).

Blocks that fail their checksum, torn or malformed rows and repeated ids are dropped (those
items are played again: they are determined by their id) and a damaged header is restored
from the run's manifest — each with a note on stderr; what cannot be repaired is refused in
one line.
"""
from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from pipslab.envs.errors import PipslabError

from .files import atomic_write_text
from .runner import MANIFEST, note

__all__ = ["RecordLog", "Recovered", "recover_records", "write_records_file", "write_sums", "sums_path",
           "SUMS_SUFFIX"]

SUMS_SUFFIX = ".sums"
_SUMS_MAGIC = "pipslab-sums 1"
REWRITE_BLOCK = 200   # rows per checksummed block when a whole file is (re)written


def sums_path(path: Path) -> Path:
    return path.with_name(path.name + SUMS_SUFFIX)


def _crc(lines: Iterable[bytes]) -> int:
    """CRC-32 of lines (without their ``\n``), blind to ``\r\n`` against ``\n``: a file
    whose line ends were rewritten still matches its sums."""
    crc = 0
    for line in lines:
        crc = zlib.crc32(line.rstrip(b"\r") + b"\n", crc)
    return crc


def _sum_line(lines: Sequence[bytes]) -> str:
    return f"{len(lines)} {_crc(lines):08x}\n"


def _split(data: bytes) -> Tuple[List[bytes], bytes]:
    """Whole lines (without ``\n``) and what follows the last ``\n`` (a torn line, or b"")."""
    parts = data.split(b"\n")
    return parts[:-1], parts[-1]


def write_sums(path: Path) -> None:
    """Checksums for a whole records file just written: its header, then blocks of rows."""
    lines, _ = _split(path.read_bytes())
    out = [_SUMS_MAGIC + "\n"]
    if lines:
        out.append(_sum_line(lines[:1]))
        for k in range(1, len(lines), REWRITE_BLOCK):
            out.append(_sum_line(lines[k:k + REWRITE_BLOCK]))
    atomic_write_text(sums_path(path), "".join(out))


def write_records_file(path: Path, text: str) -> None:
    """Replace a records file and its checksums (the old sums go first: a kill in between
    leaves a file without sums, whose rows are then checked as unverified ones)."""
    with contextlib.suppress(FileNotFoundError):
        sums_path(path).unlink()
    atomic_write_text(path, text)
    write_sums(path)


class RecordLog:
    """Appends records (dicts) to a CSV file.

    Records are flushed to the OS at least every ``flush_every_s`` (so a killed process
    loses at most that much work, which ``--resume`` does again), and each flushed block
    gets a CRC-32 line in ``NAME.sums``; both files are fsynced at least every
    ``fsync_every_s`` and on close.  :meth:`write` returns how many records reached the file
    with this call: a progress bar counts an item only once it is there.  ``on_header`` is
    called with the columns when the header is first written (to record them in the
    manifest, from which a damaged header is restored).
    """

    def __init__(self, path: Path, header: Sequence[str] = (), fsync_every_s: float = 1.0,
                 flush_every_s: float = 0.05, on_header: Optional[Callable[[List[str]], None]] = None):
        self.path = Path(path)
        self.header = list(header)
        self.header_t = tuple(header)
        self.file = open(self.path, "ab")
        sums = sums_path(self.path)
        fresh_sums = not sums.exists() or sums.stat().st_size == 0
        self.sums = open(sums, "ab")
        if fresh_sums:
            self.sums.write((_SUMS_MAGIC + "\n").encode())
        self.buf = io.StringIO()
        self.writer = csv.writer(self.buf)
        self.fsync_every_s, self.flush_every_s = fsync_every_s, flush_every_s
        self.on_header = on_header
        self.last_sync = self.last_flush = time.monotonic()
        self.pending = 0
        self.warned = False

    def _emit(self) -> None:
        text = self.buf.getvalue()
        if not text:
            return
        self.buf.seek(0)
        self.buf.truncate()
        data = text.encode()
        self.file.write(data)
        self.file.flush()
        self.sums.write(_sum_line(_split(data)[0]).encode())
        self.sums.flush()

    def write(self, records: Sequence[dict]) -> int:
        if not records:
            return 0
        if not self.header:
            self.header = list(records[0])
            self.header_t = tuple(self.header)
            self.writer.writerow(self.header)
            self._emit()
            if self.on_header is not None:
                self.on_header(list(self.header))
        writerow, header_t = self.writer.writerow, self.header_t
        for rec in records:
            if tuple(rec) == header_t:
                writerow(rec.values())
            else:
                if not self.warned and set(rec) - set(self.header):
                    self.warned = True
                    sys.stderr.write(f"warning: record fields {sorted(set(rec) - set(self.header))} are not in "
                                     f"{self.path.name}'s header and are not saved\n")
                writerow([rec.get(c) for c in self.header])
        self.pending += len(records)
        now = time.monotonic()
        if now - self.last_flush >= self.flush_every_s:
            return self.flush(now)
        return 0

    def flush(self, now: Optional[float] = None) -> int:
        now = time.monotonic() if now is None else now
        self._emit()
        self.last_flush = now
        if now - self.last_sync >= self.fsync_every_s:
            os.fsync(self.file.fileno())
            os.fsync(self.sums.fileno())
            self.last_sync = now
        done, self.pending = self.pending, 0
        return done

    def close(self) -> int:
        if self.file.closed:
            return 0
        done = self.flush()
        for f in (self.file, self.sums):
            os.fsync(f.fileno())
            f.close()
        return done


@dataclass
class Recovered:
    """What :func:`recover_records` found: the header, the kept rows' ids, and whether the
    file must be rewritten (:meth:`commit`) before more records are appended."""
    path: Path
    header: List[str] = field(default_factory=list)
    ids: List[int] = field(default_factory=list)
    lines: List[bytes] = field(default_factory=list)      # kept rows, as they were on disk (no \n)
    notes: List[str] = field(default_factory=list)
    rewrite: bool = False
    header_line: bytes = b""

    def commit(self) -> None:
        """Rewrite the file to the kept rows (when anything was dropped, repaired or left
        without a checksum) and say what was done."""
        for text in self.notes:
            note(text)
        if self.rewrite:
            data = b"".join(line + b"\n" for line in [self.header_line] + self.lines) if self.header else b""
            write_records_file(self.path, data.decode())
        elif self.path.exists() and not sums_path(self.path).exists():
            write_sums(self.path)


def _parse_sums(path: Path) -> Optional[List[Tuple[int, int]]]:
    """The blocks ``(lines, crc)`` of a sums file: ``None`` when there is none (an older
    pipslab wrote the records); ``[]`` when it is damaged from its first line; a line that
    does not parse ends the list (what follows is unverified)."""
    try:
        text = path.read_bytes().decode("ascii", errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        return []
    lines = text.split("\n")
    if lines[0].strip() != _SUMS_MAGIC:
        return []
    out = []
    for line in lines[1:]:
        parts = line.split()
        if len(parts) != 2:
            break
        try:
            n, crc = int(parts[0]), int(parts[1], 16)
        except ValueError:
            break
        if n < 1:
            break
        out.append((n, crc))
    return out


def recover_records(path: Path, key: str = "game_id", columns: Optional[Sequence[str]] = None,
                    check_row: Optional[Callable[[dict], Optional[str]]] = None, what: str = "games",
                    required: Sequence[str] = ()) -> Recovered:
    """Read a records file back for ``--resume``, trusting nothing (see the module
    docstring).  ``columns``: the header the manifest recorded (restores a damaged one);
    ``required``: columns a header must have when the manifest records none;
    ``check_row(row) -> problem or None``: a further check of rows no checksum covers.
    Refuses (PipslabError) what cannot be repaired; writes nothing (see
    :meth:`Recovered.commit`)."""
    rec = Recovered(Path(path))
    path = rec.path
    name = path.name
    if not path.exists() and not path.is_symlink():
        with contextlib.suppress(FileNotFoundError):
            sums_path(path).unlink()
        return rec
    if not path.is_file():
        raise PipslabError(f"--resume: {path} is not a file (a folder?); move it away or use another --out")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PipslabError(f"--resume: cannot read {path}: {exc.strerror or exc}") from None
    lines, torn = _split(data)
    if torn:                      # a torn last line (killed mid-write): cut off, played again
        rec.rewrite = True
    if not lines:                 # not even a whole header: a run killed at its very start
        rec.rewrite = True
        return rec

    # which lines a checksum vouches for: True (it matches), False (it does not), None (none covers it)
    sums = _parse_sums(sums_path(path))
    status: List[Optional[bool]] = [None] * len(lines)
    block_of: List[int] = [-1] * len(lines)
    used = 0
    at = 0
    for b, (n, crc) in enumerate(sums or ()):
        if at + n > len(lines):
            break
        ok = _crc(lines[at:at + n]) == crc
        status[at:at + n] = [ok] * n
        block_of[at:at + n] = [b] * n
        at += n
        used += 1

    # header
    header_line = lines[0]
    head_ok = status[0]
    try:
        header = next(csv.reader([header_line.rstrip(b"\r").decode()]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        header = []
    expected = list(columns) if columns else None
    good_shape = bool(header) and key in header and len(set(header)) == len(header) and all(
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c) for c in header) and set(required) <= set(header)
    if expected is not None:
        if header != expected:
            if head_ok is True:
                raise PipslabError(f"--resume: {name}'s columns differ from those {MANIFEST} records; the folder "
                                   "holds files of two runs: start again without --resume or use another --out")
            rec.notes.append(f"{path}: the header was damaged; restored it from {MANIFEST}")
            header = expected
            header_line = (",".join(expected) + "\r").encode()
            rec.rewrite = True
    elif head_ok is False or not good_shape:
        raise PipslabError(f"--resume: {name}'s header is damaged and {MANIFEST} does not record the columns; "
                           "start again without --resume or use another --out")
    if head_ok is False:
        rec.rewrite = True    # the header is right (it is the manifest's): its checksum is not
    rec.header, rec.header_line = header, header_line
    k = header.index(key)
    width = len(header)

    # rows
    damaged_rows, damaged_blocks, bad_rows, repeats, unverified = 0, set(), [], 0, 0
    seen = set()
    for j in range(1, len(lines)):
        line, ok = lines[j], status[j]
        if ok is False:
            damaged_rows += 1
            damaged_blocks.add(block_of[j])
            rec.rewrite = True
            continue
        problem = None
        try:
            row = next(csv.reader([line.rstrip(b"\r").decode()]))
        except (UnicodeDecodeError, csv.Error, StopIteration):
            row, problem = None, "not readable"
        if row is not None:
            if len(row) != width:
                problem = f"{len(row)} fields, not {width}"
            elif not re.fullmatch(r"[0-9]+", row[k]):
                problem = f"{key} {row[k]!r}"
            elif ok is None and check_row is not None:
                problem = check_row(dict(zip(header, row)))
        if problem is not None:
            bad_rows.append(problem)
            rec.rewrite = True
            continue
        i = int(row[k])
        if i in seen:
            repeats += 1
            rec.rewrite = True
            continue
        unverified += ok is None
        seen.add(i)
        rec.ids.append(i)
        rec.lines.append(line)
    if damaged_rows:
        rec.notes.append(f"{path}: {damaged_rows} row{'s' if damaged_rows != 1 else ''} in {len(damaged_blocks)} "
                         f"block{'s' if len(damaged_blocks) != 1 else ''} failed {name}{SUMS_SUFFIX}'s checksums; "
                         f"dropped them, those {what} are played again")
    if bad_rows:
        rec.notes.append(f"{path}: dropped {len(bad_rows)} damaged row{'s' if len(bad_rows) != 1 else ''} "
                         f"({bad_rows[0]}{', …' if len(bad_rows) > 1 else ''}); those {what} are played again")
    if repeats:
        rec.notes.append(f"{path}: dropped {repeats} repeated {key}{'s' if repeats != 1 else ''} (a second writer?)")
    if sums is None and rec.ids:
        rec.notes.append(f"{path}: no {name}{SUMS_SUFFIX} (an older pipslab wrote it): its rows were checked "
                         "against the plan only")
    elif sums == [] and rec.ids:
        rec.notes.append(f"{path}: {name}{SUMS_SUFFIX} is damaged: the rows were checked against the plan only")
    if unverified or sums is None or used != len(sums):
        rec.rewrite = True    # the kept rows get checksums again
    return rec
