#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Firmware size report: .text/.data/.bss of the size programs, read from their ELF section
headers, the cost of devrt over an empty program, and the symbols in .text that make it (each
program's symbols that the empty one lacks, largest first). Writes JSON (--json) and fails when a
program's .text over the empty one exceeds its limit in the budget file for this build's
message setting (sizes are deterministic).

With --readme (a build without messages), the figure README.md states for the compile-time round
trip ("that round trip is N B of `.text`") must be the one measured; with --table (docs/firmware.md),
so must every figure of its size table for this build's message setting: a stale number fails.

Usage: size_report.py --budget size_budget.json --messages 1|0 [--json OUT] [--readme README.md]
                      empty=ELF NAME=ELF...
       size_report.py --stated DOC.md --section NAME LABEL=FILE...
The second form checks a document's `<!-- sizes: NAME -->` table (`| label | N B |` rows) against
the .text of each ELF, or the size of each other file (the Hexagon build's figures).
"""
import argparse
import json
import re
import shutil
import struct
import subprocess
import sys

SECTIONS = ('.text', '.data', '.bss')


class Elf:
    """An ELF file's sections (name -> (index, size)) and its symbols in .text."""

    def __init__(self, path):
        data = open(path, 'rb').read()
        if data[:4] != b'\x7fELF':
            sys.exit(f'{path}: not an ELF file')
        is64 = data[4] == 2
        endian = '<' if data[5] == 1 else '>'
        if is64:
            shoff = struct.unpack_from(endian + 'Q', data, 40)[0]
            shentsize, shnum, shstrndx = struct.unpack_from(endian + 'HHH', data, 58)
            header = endian + 'IIQQQQIIQQ'
        else:
            shoff = struct.unpack_from(endian + 'I', data, 32)[0]
            shentsize, shnum, shstrndx = struct.unpack_from(endian + 'HHH', data, 46)
            header = endian + 'IIIIIIIIII'
        # (name, type, flags, address, offset, size, link, info, alignment, entry size)
        headers = [struct.unpack_from(header, data, shoff + i * shentsize) for i in range(shnum)]
        self.sections = {}
        for index, h in enumerate(headers):
            self.sections[c_string(data, headers[shstrndx][4] + h[0])] = (index, h[5])
        self.text_symbols = {}
        self.text_names = set()  # every name, aliases included
        for h in headers:
            if h[1] == 2:  # SHT_SYMTAB
                self._read_symbols(data, h, headers[h[6]][4], is64, endian)

    def _read_symbols(self, data, symtab, strings, is64, endian):
        text = self.sections.get('.text', (None, 0))[0]
        layout = endian + ('IBBHQQ' if is64 else 'IIIBBH')
        by_address = {}
        for offset in range(symtab[4], symtab[4] + symtab[5], symtab[9]):
            fields = struct.unpack_from(layout, data, offset)
            name, size, info, shndx = ((fields[0], fields[5], fields[1], fields[3]) if is64 else
                                       (fields[0], fields[2], fields[3], fields[5]))
            if shndx == text and size > 0 and (info & 0xf) in (1, 2):  # STT_OBJECT, STT_FUNC
                by_address.setdefault(fields[1] if not is64 else fields[4], []).append((c_string(data, strings + name), size))
        # Aliases (malloc and __malloc_malloc, a constructor's C1 and C2) share an address: one entry.
        for aliases in by_address.values():
            self.text_names.update(name for name, _ in aliases)
            symbol, size = min(aliases, key=lambda a: (len(a[0]), a[0]))
            self.text_symbols[symbol] = max(size, self.text_symbols.get(symbol, 0))

    def section_sizes(self):
        return {name: self.sections.get(name, (None, 0))[1] for name in SECTIONS}


def c_string(data, start):
    return data[start:data.index(b'\0', start)].decode()


def demangled(names):
    """Readable names for `names`, through c++filt when there is one."""
    tool = shutil.which('c++filt')
    if not tool or not names:
        return list(names)
    out = subprocess.run([tool], input='\n'.join(names), capture_output=True, text=True, check=False)
    lines = out.stdout.splitlines()
    return lines if len(lines) == len(names) else list(names)


def contributors(program, empty):
    """The .text symbols `program` adds over `empty`, largest first: [(bytes, name)]."""
    added = [(size - empty.text_symbols.get(name, 0), name) for name, size in program.text_symbols.items()]
    added = sorted((a for a in added if a[0] > 0), key=lambda a: (-a[0], a[1]))
    return list(zip([a[0] for a in added], demangled([a[1] for a in added])))


def check_stated(path, section, programs):
    """Where the table after `<!-- sizes: SECTION -->` in `path` differs from the measured sizes.

    Each row is `| label | N B |`: N is the .text of the ELF given as label=ELF, or the size of
    the file itself when it is not an ELF (an archive). Every label must have a row."""
    text = open(path, encoding='utf-8').read()
    marker = f'<!-- sizes: {section} -->'
    if marker not in text:
        return [f'{path} has no "{marker}" table']
    stated = {}
    for line in text.split(marker, 1)[1].lstrip('\n').splitlines():
        if not line.startswith('|'):
            break
        cells = [cell.strip().strip('`') for cell in line.strip().strip('|').split('|')]
        figure = re.fullmatch(r'([0-9,]+) B', cells[-1])
        if figure:
            stated[cells[0]] = int(figure.group(1).replace(',', ''))
    failures = []
    for label, elf_path in programs.items():
        is_elf = open(elf_path, 'rb').read(4) == b'\x7fELF'
        measured = Elf(elf_path).section_sizes()['.text'] if is_elf else len(open(elf_path, 'rb').read())
        print(f'{label}: {measured:,} B' + (' of .text' if is_elf else ''))
        if label not in stated:
            failures.append(f'{path}\'s {section} table has no row for {label} ({measured:,} B)')
        elif stated[label] != measured:
            failures.append(f'{path} says {label} is {stated[label]:,} B; it is {measured:,} B')
    return failures


def main():
    if len(sys.argv) > 1 and sys.argv[1] == '--stated':
        parser = argparse.ArgumentParser()
        parser.add_argument('--stated', required=True, help='the document whose size table is checked')
        parser.add_argument('--section', required=True, help='the table\'s name in its <!-- sizes: NAME --> marker')
        parser.add_argument('programs', nargs='+', help='label=ELF or label=FILE')
        args = parser.parse_args()
        failures = check_stated(args.stated, args.section, dict(p.split('=', 1) for p in args.programs))
        if failures:
            sys.exit('FAIL: ' + '; '.join(failures))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument('--budget', required=True)
    parser.add_argument('--messages', choices=('0', '1'), required=True,
                        help='1 when the build keeps error messages (DEVRT_ERROR_MESSAGES)')
    parser.add_argument('--json')
    parser.add_argument('--readme', help='README.md, whose stated round-trip size is checked (--messages 0)')
    parser.add_argument('--table', help="docs/firmware.md, whose size table's figures are checked")
    parser.add_argument('--top', type=int, default=12, help='how many contributors to print per program')
    parser.add_argument('--forbid', action='append', default=[], metavar='REGEX',
                        help='a (mangled) symbol that no program may link beyond what the empty one links, '
                             'e.g. _Znwj (operator new)')
    parser.add_argument('programs', nargs='+', help='name=ELF')
    args = parser.parse_args()
    budget = json.load(open(args.budget))
    programs = dict(p.split('=', 1) for p in args.programs)
    elves = {name: Elf(path) for name, path in programs.items()}
    sizes = {name: elf.section_sizes() for name, elf in elves.items()}

    print(f'{"program":<16}' + ''.join(f'{s:>10}' for s in SECTIONS))
    for name, s in sizes.items():
        print(f'{name:<16}' + ''.join(f'{s[k]:>10}' for k in SECTIONS))
    deltas = {}
    for name in sizes:
        if name == 'empty':
            continue
        deltas[name] = {k: sizes[name][k] - sizes['empty'][k] for k in SECTIONS}
        print(f'{name} - empty: ' + ', '.join(f'{k} {v:+d}' for k, v in deltas[name].items()))

    added = {name: contributors(elves[name], elves['empty']) for name in deltas}
    for name, symbols in added.items():
        print(f'{name}: the largest of its {len(symbols)} symbols in .text that (a) lacks '
              f'({sum(size for size, _ in symbols)} B in all):')
        for size, symbol in symbols[:args.top]:
            print(f'  {size:>6}  {symbol}')

    mode = 'with_messages' if args.messages == '1' else 'without_messages'
    limits = budget[mode]
    failures = []
    for name, limit in limits.items():
        cost = deltas[name]['.text']
        verdict = 'ok' if cost <= limit else 'OVER'
        print(f'{name} - empty .text ({mode.replace("_", " ")}): {cost} bytes, limit {limit}: {verdict}')
        if cost > limit:
            failures.append(f'{name} costs {cost} bytes of .text over an empty program, over its limit of {limit}')
    failures += forbidden_links(args.forbid, elves)
    if args.readme and args.messages == '0' and 'round_trip_direct' in deltas:
        failures += stated_round_trip(args.readme, deltas['round_trip_direct']['.text'])
    if args.table:
        failures += stated_table(args.table, sizes, deltas, args.messages == '1')
    if args.json:
        json.dump({'sizes': sizes, 'delta_over_empty': deltas, 'messages': args.messages == '1', 'limits': limits,
                   'contributors': {name: [{'symbol': n, 'bytes': b} for b, n in symbols]
                                    for name, symbols in added.items()}},
                  open(args.json, 'w'), indent=2)
    if failures:
        sys.exit('FAIL: ' + '; '.join(failures))

def forbidden_links(patterns, elves):
    """Each program's symbols, beyond the empty program's, that match one of `patterns`."""
    failures = []
    for pattern in patterns:
        for name, elf in elves.items():
            found = sorted(symbol for symbol in elf.text_names - elves['empty'].text_names
                           if re.fullmatch(pattern, symbol))
            if found:
                failures.append(f'{name} links {", ".join(demangled(found))} (forbidden: {pattern})')
    if patterns and not failures:
        print(f'none of the programs links a forbidden symbol ({", ".join(patterns)})')
    return failures


def stated_round_trip(readme, measured):
    """Whether README.md states the compile-time round trip's size as measured."""
    text = ' '.join(open(readme, encoding='utf-8').read().split())
    stated = re.search(r'that round trip is ([0-9,]+) B of `\.text`', text)
    if stated is None:
        return ['README.md no longer states the round trip\'s size ("that round trip is N B of `.text`")']
    if int(stated.group(1).replace(',', '')) != measured:
        return [f'README.md says the round trip is {stated.group(1)} B of .text; it is {measured:,} B']
    print(f'README.md states {stated.group(1)} B for the round trip: as measured')
    return []


# The table's rows, by the program each measures.
TABLE_ROWS = {'(a)': 'empty', '(b)': 'round_trip', '(c)': 'kernel_launch', '(d)': 'round_trip_direct'}


def stated_table(path, sizes, deltas, messages):
    """Where docs/firmware.md's size table differs from this build's measurements."""
    failures, checked = [], 0
    for line in open(path, encoding='utf-8'):
        cells = [cell.strip().strip('*') for cell in line.strip().strip('|').split('|')]
        if len(cells) != 4 or cells[0][:3] not in TABLE_ROWS:
            continue
        name = TABLE_ROWS[cells[0][:3]]
        stated = cells[1] if name == 'empty' else cells[2 if messages else 3]
        if not stated or name not in sizes:
            continue
        measured = sizes[name]['.text'] if name == 'empty' else deltas[name]['.text']
        checked += 1
        if int(stated.replace(',', '').replace('+', '')) != measured:
            failures.append(f'{path} says {cells[0]} is {stated}; it is {measured:,}')
    if checked == 0:
        failures.append(f'{path}: no size table for this build found')
    else:
        print(f'{path}: {checked} figures of its table as measured' if not failures else '')
    return failures


if __name__ == '__main__':
    main()
