#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Firmware size report: .text/.data/.bss of the size programs, read from their ELF section
headers, and the cost of devrt over an empty program. Writes JSON (--json) and fails when a
program's .text over the empty one exceeds its limit in the budget file for this build's
message setting (sizes are deterministic).

With --readme (a build without messages), the figure README.md states for the compile-time round
trip ("that round trip is N B of `.text`") must be the one measured; with --table (docs/firmware.md),
so must every figure of its size table for this build's message setting: a stale number fails.

Usage: size_report.py --budget size_budget.json --messages 1|0 [--json OUT] [--readme README.md]
                      empty=ELF NAME=ELF...
"""
import argparse
import json
import re
import struct
import sys

SECTIONS = ('.text', '.data', '.bss')


def section_sizes(path):
    data = open(path, 'rb').read()
    if data[:4] != b'\x7fELF':
        sys.exit(f'{path}: not an ELF file')
    is64 = data[4] == 2
    endian = '<' if data[5] == 1 else '>'
    if is64:
        shoff = struct.unpack_from(endian + 'Q', data, 40)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(endian + 'HHH', data, 58)
        header, size_at = endian + 'IIQQQQ', 5
    else:
        shoff = struct.unpack_from(endian + 'I', data, 32)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(endian + 'HHH', data, 46)
        header, size_at = endian + 'IIIIII', 5
    headers = [struct.unpack_from(header, data, shoff + i * shentsize) for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    sizes = dict.fromkeys(SECTIONS, 0)
    for h in headers:
        start = names_offset + h[0]
        name = data[start:data.index(b'\0', start)].decode()
        if name in sizes:
            sizes[name] = h[size_at]
    return sizes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--budget', required=True)
    parser.add_argument('--messages', choices=('0', '1'), required=True,
                        help='1 when the build keeps error messages (DEVRT_ERROR_MESSAGES)')
    parser.add_argument('--json')
    parser.add_argument('--readme', help='README.md, whose stated round-trip size is checked (--messages 0)')
    parser.add_argument('--table', help="docs/firmware.md, whose size table's figures are checked")
    parser.add_argument('programs', nargs='+', help='name=ELF')
    args = parser.parse_args()
    budget = json.load(open(args.budget))
    programs = dict(p.split('=', 1) for p in args.programs)
    sizes = {name: section_sizes(path) for name, path in programs.items()}

    print(f'{"program":<16}' + ''.join(f'{s:>10}' for s in SECTIONS))
    for name, s in sizes.items():
        print(f'{name:<16}' + ''.join(f'{s[k]:>10}' for k in SECTIONS))
    deltas = {}
    for name in sizes:
        if name == 'empty':
            continue
        deltas[name] = {k: sizes[name][k] - sizes['empty'][k] for k in SECTIONS}
        print(f'{name} - empty: ' + ', '.join(f'{k} {v:+d}' for k, v in deltas[name].items()))

    mode = 'with_messages' if args.messages == '1' else 'without_messages'
    limits = budget[mode]
    failures = []
    for name, limit in limits.items():
        cost = deltas[name]['.text']
        verdict = 'ok' if cost <= limit else 'OVER'
        print(f'{name} - empty .text ({mode.replace("_", " ")}): {cost} bytes, limit {limit}: {verdict}')
        if cost > limit:
            failures.append(f'{name} costs {cost} bytes of .text over an empty program, over its limit of {limit}')
    if args.readme and args.messages == '0' and 'round_trip_direct' in deltas:
        text = ' '.join(open(args.readme, encoding='utf-8').read().split())
        stated = re.search(r'that round trip is ([0-9,]+) B of `\.text`', text)
        measured = deltas['round_trip_direct']['.text']
        if stated is None:
            failures.append('README.md no longer states the round trip\'s size ("that round trip is N B of `.text`")')
        elif int(stated.group(1).replace(',', '')) != measured:
            failures.append(f'README.md says the round trip is {stated.group(1)} B of .text; it is {measured:,} B')
        else:
            print(f'README.md states {stated.group(1)} B for the round trip: as measured')
    if args.table:
        failures += stated_table(args.table, sizes, deltas, args.messages == '1')
    if args.json:
        json.dump({'sizes': sizes, 'delta_over_empty': deltas, 'messages': args.messages == '1', 'limits': limits},
                  open(args.json, 'w'), indent=2)
    if failures:
        sys.exit('FAIL: ' + '; '.join(failures))

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
